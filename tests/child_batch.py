"""One runner for the crash-hunting tests: many cases in one subprocess, each between a
``begin I`` and an ``end I OUTCOME`` line, so that a death by a signal or a hang is pinned on
the case that was running, and one interpreter start is shared by the whole batch.

The parent (:func:`run_batch`) writes the cases into a manifest, starts ``python SCRIPT
--worker MANIFEST`` and reads the lines back; the child (:func:`serve`) runs each case with
the script's own ``run_case(case, job)``. An exception out of ``run_case`` is an
``UNDOCUMENTED`` outcome (a failure); ``run_case`` returns the outcomes it expects, such as
``ok`` or ``refused ValueError``. Used by ``fuzz_models.py``, ``fuzz_hostile.py`` and
``test_nan_safety.py`` (which runs code snippets: ``python child_batch.py --worker
MANIFEST`` executes each case's ``code`` after the manifest's ``prelude``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)  # the checkout, whose hsw2v the children import


def serve(manifest: str, run_case: Callable[[dict, dict], str]) -> int:
    """The child's side: run every case of ``manifest`` with ``run_case(case, job)``,
    printing ``begin I`` before and ``end I OUTCOME`` after each."""
    import logging

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    with open(manifest) as fh:
        job = json.load(fh)
    for case in job["cases"]:
        print(f"begin {case['index']}", flush=True)
        try:
            outcome = run_case(case, job)
        except Exception as exc:  # noqa: BLE001 - exactly what the crash hunt looks for
            message = str(exc).replace("\n", " ")[:300]
            outcome = f"UNDOCUMENTED {type(exc).__name__}: {message}"
        print(f"end {case['index']} {outcome}", flush=True)
    return 0


def run_batch(script: str, cases: list[dict], timeout: float, job: dict | None = None,
              scratch_dir: str | None = None, env: dict | None = None) -> dict:  # fmt: skip
    """Run ``cases`` in one subprocess of ``script`` (``--worker MANIFEST``). ``job``: more
    fields for the manifest; the child gets a fresh scratch folder (``job["scratch"]``),
    removed afterwards. Returns ``{"outcomes": {index: outcome}, "failures": [(case, why)]}``:
    an ``UNDOCUMENTED`` outcome, a hang (the batch is killed after ``timeout`` seconds) or a
    death by a signal, each with the case that was running."""
    scratch = tempfile.mkdtemp(prefix="hsw2v-batch-", dir=scratch_dir)
    for i, case in enumerate(cases):
        case["index"] = i
    manifest = os.path.join(scratch, "manifest.json")
    with open(manifest, "w") as fh:
        json.dump({**(job or {}), "scratch": scratch, "cases": cases}, fh, allow_nan=True)
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, TESTS, env.get("PYTHONPATH")) if p)
    try:
        run = subprocess.run([sys.executable, os.path.abspath(script), "--worker", manifest],
                             capture_output=True, text=True, timeout=timeout, env=env)  # fmt: skip
        stdout, returncode, stderr = run.stdout, run.returncode, run.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        stdout = out.decode() if isinstance(out, bytes) else out
        returncode, stderr = None, ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcomes, begun = {}, None
    for line in stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word == "begin":
            begun = int(rest)
        elif word == "end":
            index, _, outcome = rest.partition(" ")
            outcomes[int(index)] = outcome
            begun = None
    failures = [(cases[i], o) for i, o in outcomes.items() if o.startswith("UNDOCUMENTED")]
    running = cases[begun] if begun is not None else None
    if returncode is None:
        failures.append((running, f"hang: over {timeout}s"))
    elif returncode < 0:
        failures.append((running, f"killed by signal {-returncode}"))
    elif returncode != 0:
        failures.append((None, f"worker exited with {returncode}: {stderr[-1500:]}"))
    return {"outcomes": outcomes, "failures": failures}


def run_code(case: dict, job: dict) -> str:
    """A code case: run ``case["code"]`` in a namespace made by the manifest's ``prelude``;
    the outcome is the value the code leaves in ``result``, or ``raised TYPE: message``."""
    namespace = dict(_prelude(job["prelude"]), scratch=job["scratch"])
    try:
        exec(case["code"], namespace)
    except Exception as exc:  # noqa: BLE001 - the outcome the test checks
        return f"raised {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    return str(namespace.get("result"))


_PRELUDES: dict[str, dict] = {}


def _prelude(source: str) -> dict:
    if source not in _PRELUDES:
        namespace: dict = {"__name__": "prelude"}
        exec(source, namespace)
        _PRELUDES[source] = namespace
    return _PRELUDES[source]


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    sys.exit(serve(sys.argv[2], run_code))
