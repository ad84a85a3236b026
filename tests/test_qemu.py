"""Older CPUs, emulated: `import hsw2v` and short trainings under qemu-x86_64's CPU models.

A build made on a machine with AVX-512 must run on a CPU without it: each model below runs
this interpreter (and this build) under ``qemu-x86_64 -cpu MODEL`` (Debian package
``qemu-user``; ``.ci/run`` installs it), checks the level the dispatch chose there, trains
skip-gram, CBOW and corpus_file mode, and checks that forcing a level the CPU lacks is refused
with an error rather than a crash. Skipped where qemu-x86_64 is missing or the host is not
x86-64, and for a CPU model on which the installed NumPy itself cannot start (OpenBLAS is
told the emulated core: see ``emulate``).
"""

import importlib
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys

import pytest

QEMU = shutil.which("qemu-x86_64")
pytestmark = [
    pytest.mark.skipif(
        QEMU is None,
        reason="qemu-x86_64 is not installed (Debian: apt-get install qemu-user): "
        "the emulated-CPU tests cannot run here",
    ),
    pytest.mark.skipif(
        platform.machine().lower() not in ("x86_64", "amd64") or sys.platform != "linux",
        reason="the emulated-CPU tests run an x86-64 Linux interpreter under qemu-x86_64",
    ),
]

SCRIPT = """
import json, sys, tempfile
import hsw2v
from hsw2v import Word2Vec, _cpu
sentences = [[f"w{(i * 5 + j) % 25}" for j in range(6)] for i in range(120)]
out = {"level": _cpu.level}
for sg in (0, 1):
    m = Word2Vec(sentences, vector_size=16, min_count=1, sg=sg, workers=2, seed=1, epochs=1)
    out[f"sg={sg}"] = len(m.wv)
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    f.write("\\n".join(" ".join(s) for s in sentences))
m = Word2Vec(corpus_file=f.name, vector_size=16, min_count=1, workers=2, epochs=1)
out["corpus_file"] = len(m.wv)
refused = {}
for name in _cpu.compiled_levels():
    try:
        _cpu.choose(name, _cpu.compiled_levels(), _cpu.cpu_features())
    except ImportError as err:
        refused[name] = str(err)
out["refused"] = refused
print(json.dumps(out))
"""


def emulator_env(cpu: str) -> dict:
    env = dict(os.environ)
    env.pop("HSW2V_CPU", None)
    # OpenBLAS (bundled with NumPy's and SciPy's wheels) picks its kernels from CPUID at load;
    # under qemu-user that load runs an AVX instruction (a VEX vxorps inside NumPy's bundled
    # OpenBLAS 0.3.30) and dies with SIGILL under -cpu Nehalem and Westmere, before any code of
    # ours runs. Naming the core, as OpenBLAS documents for a wrong
    # detection, makes it load the emulated CPU's own kernels: the BLAS then runs as it would
    # on that hardware, and hsw2v's own code is what is under test.
    env["OPENBLAS_CORETYPE"] = OPENBLAS_CORE[cpu]
    return env


def start_emulation(cpu: str, code: str) -> subprocess.Popen:
    return subprocess.Popen(
        [QEMU, "-cpu", cpu, sys.executable, "-c", code],
        env=emulator_env(cpu),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        out, err = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def emulate(cpu: str, code: str) -> subprocess.CompletedProcess:
    return finish(start_emulation(cpu, code))


OPENBLAS_CORE = {"Nehalem": "Nehalem", "SandyBridge": "Sandybridge", "Haswell": "Haswell"}


def skip_if_numpy_cannot_start(cpu: str):
    probe = emulate(cpu, "import numpy, scipy.linalg")
    if probe.returncode != 0:
        pytest.skip(
            f"the installed NumPy/SciPy themselves do not start on a {cpu} CPU "
            f"(`import numpy, scipy.linalg` under qemu exits {probe.returncode}): "
            "nothing of hsw2v's to test there"
        )


CPU_MODELS = [
    ("Nehalem", "baseline"),  # SSE4.2, no AVX
    ("SandyBridge", "baseline"),  # AVX, no AVX2 / FMA
    ("Haswell", "avx2"),  # AVX2 + FMA, no AVX-512
]


@pytest.fixture(scope="module")
def emulations():
    """All three CPU models' runs, started together: each is one single-threaded interpreter
    under emulation (about 45 s), so they overlap instead of queueing. Each test waits for its
    own; a run no test waits for is killed at the end."""
    started = {cpu: start_emulation(cpu, SCRIPT) for cpu, _ in CPU_MODELS}
    yield started
    for process in started.values():
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.parametrize(
    "cpu, level",
    CPU_MODELS,
)
def test_import_and_train_on_an_older_cpu(cpu, level, emulations):
    dispatch = importlib.import_module("hsw2v._cpu") if importlib.util.find_spec("hsw2v._cpu") else None
    if dispatch is not None and dispatch.compiled_levels() == ["native"]:
        pytest.skip("an HSW2V_NATIVE=1 build runs only on CPUs like the one that built it")
    done = finish(emulations[cpu])
    if done.returncode != 0:
        skip_if_numpy_cannot_start(cpu)
    assert done.returncode == 0, (
        f"under qemu -cpu {cpu}: exit {done.returncode} "
        f"({'killed by a signal: illegal instruction?' if done.returncode < 0 else 'error'})\n"
        + done.stderr[-3000:]
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["level"] == level
    assert result["sg=0"] == result["sg=1"] == result["corpus_file"] == 25
    assert "avx512" in result["refused"]
    assert "AVX512F" in result["refused"]["avx512"]
    if level == "baseline":
        assert "AVX2" in result["refused"]["avx2"]
    else:
        assert "avx2" not in result["refused"]
