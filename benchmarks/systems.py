"""One adapter per word2vec system, all with the same interface.

    from systems import get_system
    res = get_system("gensim-iter").train(corpus_path, "sg", workers=2, epochs=5)
    res.words_per_second, res.peak_rss_bytes, res.vectors_path

Every training runs in a fresh subprocess, so that peak memory and threads belong to one system
only: the Python systems run this file as ``python3 systems.py --child SPEC_JSON``, which trains,
prints one JSON line of timings and writes the vectors in word2vec binary format; the C tool is
run directly and timed from outside. Peak RSS is the kernel's high-water mark of the child's
own address space, ``VmHWM`` in ``/proc/PID/status``: read by the Python children themselves
right after training, and polled from outside for the C tool. (``wait4``'s ``ru_maxrss`` is not
used: on Linux it keeps the high-water mark of the parent's memory copied at fork across exec,
so every child would report at least the benchmark driver's size.) Children get single-threaded BLAS
(OPENBLAS/OMP/MKL_NUM_THREADS=1) and PYTHONHASHSEED=0.

Systems (hierarchical softmax, no negative sampling; hsw2v and gensim also train negative
sampling alone with ``negative=N``, ``bench_speed.py --negative N``):

- ``hsw2v``: ``hsw2v.Word2Vec`` fed by ``hsw2v.corpora.LineSentence`` (iterable mode).
- ``hsw2v-file``: ``hsw2v.Word2Vec(corpus_file=...)`` (workers read the file themselves).
- ``hsw2v-shared``: ``hsw2v`` with ``shared_negatives=True`` named (negative sampling shares
  one set of negatives among a centre word's contexts in skip-gram, among a few centre words
  in CBOW; the default since it was shown as good).
- ``hsw2v-pairs``: ``hsw2v`` with ``shared_negatives=False`` (gensim's draws: a set of
  negatives per (context, centre) pair in skip-gram, per centre word in CBOW).
- ``gensim-iter``: gensim ``Word2Vec(hs=1, negative=0)`` fed by gensim's ``LineSentence``.
- ``gensim-file``: gensim ``Word2Vec(corpus_file=...)``.
- ``w2v-c``: the original C word2vec tool (PyPI package ``word2vec`` builds it); its vocabulary
  time cannot be separated from its training time, so only the total is timed. A second,
  vocabulary-only run (``-save-vocab`` without ``-output``) gives an estimate of the vocabulary
  part when asked for.
- ``fasttext``: ``fasttext.train_unsupervised(loss='hs', minn=0, maxn=0, wordNgrams=1)``; only the
  total (vocabulary + training) can be timed.

``words`` is the same for every system: the corpus's whitespace-token count x epochs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import child_env, count_words  # noqa: E402

SYSTEMS = ("hsw2v", "hsw2v-file", "gensim-iter", "gensim-file", "w2v-c", "fasttext",
           "hsw2v-shared", "hsw2v-pairs")
HSW2V_SYSTEMS = ("hsw2v", "hsw2v-file", "hsw2v-shared", "hsw2v-pairs")  # the library's own
PYTHON_SYSTEMS = (*HSW2V_SYSTEMS, "gensim-iter", "gensim-file")  # run by _child; they train ns too
MODES = ("sg", "cbow")
DEFAULT_ALPHA = 0.025  # gensim's (and hsw2v's) default, passed to every system alike


@dataclass
class Result:
    system: str
    mode: str
    workers: int
    epochs: int
    #: seconds to build the vocabulary (None where the system does not expose it separately)
    vocab_seconds: float | None
    #: seconds of training proper (None where not separable from the vocabulary)
    train_seconds: float | None
    #: vocabulary + training (Python systems) or the whole subprocess wall time (w2v-c, fasttext)
    total_seconds: float
    #: corpus words x epochs, the same for every system
    words: int
    vectors_path: str
    #: peak resident memory of the training, in bytes (for the Python systems measured right
    #: after training, before the vectors are written; for w2v-c the whole process)
    peak_rss_bytes: int
    #: kernel high-water mark of the whole child process (includes writing the vectors)
    process_peak_rss_bytes: int = 0
    #: resident memory after imports, before the vocabulary (Python systems only)
    base_rss_bytes: int | None = None
    separable: bool = True
    vocab_size: int | None = None
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def words_per_second(self) -> float:
        """Training words/s: training time only where separable, else the total time."""
        t = self.train_seconds if self.train_seconds else self.total_seconds
        return self.words / t

    @property
    def words_per_second_total(self) -> float:
        """End-to-end words/s: vocabulary + training."""
        return self.words / self.total_seconds

    def to_dict(self) -> dict:
        d = asdict(self)
        d["words_per_second"] = self.words_per_second
        d["words_per_second_total"] = self.words_per_second_total
        return d


class SystemUnavailable(RuntimeError):
    pass


# --------------------------------------------------------------------------------------------
# subprocess plumbing


def _run_measured(
    cmd: list[str],
    stdout_path: str,
    stderr_path: str,
    timeout: float | None,
    cwd: str | None = None,
) -> tuple[int, float, int]:
    """Run ``cmd``; return (exit code, wall seconds, peak RSS bytes of that process)."""
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=child_env(), cwd=cwd
        )
        timer = None
        if timeout:
            timer = threading.Timer(timeout, proc.kill)
            timer.start()
        peak = [0]
        done = threading.Event()

        def poll() -> None:  # VmHWM only rises, so the last read before exit is the peak
            while not done.is_set():
                hwm = _vm_hwm(proc.pid)
                if hwm:
                    peak[0] = max(peak[0], hwm)
                done.wait(0.02)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            _, status, _ = os.wait4(proc.pid, 0)
        finally:
            done.set()
            poller.join()
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, peak[0]


def _vm_hwm(pid: int | str = "self") -> int | None:
    """Peak resident set size of one process's address space (``VmHWM``), in bytes."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _tail(path: str, n: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


class System:
    name = ""
    separable = True

    def available(self) -> tuple[bool, str]:
        return True, ""

    def train(
        self,
        corpus_path,
        mode,
        workers,
        epochs,
        vector_size=100,
        window=5,
        min_count=5,
        sample=1e-3,
        seed=1,
        *,
        alpha=DEFAULT_ALPHA,
        out_dir=None,
        corpus_words=None,
        timeout=None,
        **extra,
    ) -> Result:
        raise NotImplementedError


class PythonSystem(System):
    """A system trained by this file's ``--child`` entry point in a fresh interpreter."""

    def train(
        self,
        corpus_path,
        mode,
        workers,
        epochs,
        vector_size=100,
        window=5,
        min_count=5,
        sample=1e-3,
        seed=1,
        *,
        alpha=DEFAULT_ALPHA,
        out_dir=None,
        corpus_words=None,
        timeout=None,
        **extra,
    ) -> Result:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        ok, why = self.available()
        if not ok:
            raise SystemUnavailable(f"{self.name}: {why}")
        out_dir = out_dir or tempfile.mkdtemp(prefix="w2vbench-")
        stem = os.path.join(
            out_dir, f"{self.name}-{mode}-w{workers}-{os.getpid()}-{time.monotonic_ns()}"
        )
        spec = dict(
            system=self.name,
            corpus=os.path.abspath(corpus_path),
            mode=mode,
            workers=workers,
            epochs=epochs,
            vector_size=vector_size,
            window=window,
            min_count=min_count,
            sample=sample,
            seed=seed,
            alpha=alpha,
            vectors=stem + ".bin",
            corpus_kind=extra.get("corpus_kind", "linesentence"),
            constants=extra.get("constants") or {},
            negative=int(extra.get("negative", 0)),
        )
        if spec["negative"] and self.name not in PYTHON_SYSTEMS:
            raise SystemUnavailable(f"{self.name}: negative sampling is not wired here")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
        rc, wall, peak = _run_measured(cmd, stem + ".out", stem + ".err", timeout)
        if rc != 0:
            raise RuntimeError(
                f"{self.name} {mode} workers={workers} failed (exit {rc}):\n{_tail(stem + '.err')}"
            )
        line = [ln for ln in _tail(stem + ".out", 100000).splitlines() if ln.startswith("{")][-1]
        r = json.loads(line)
        words = (corpus_words if corpus_words is not None else count_words(corpus_path)) * epochs
        vocab_s, train_s = r.get("vocab_seconds"), r.get("train_seconds")
        total = r.get("total_seconds") or (vocab_s or 0) + (train_s or 0)
        return Result(
            system=self.name,
            mode=mode,
            workers=workers,
            epochs=epochs,
            vocab_seconds=vocab_s,
            train_seconds=train_s,
            total_seconds=total,
            words=words,
            vectors_path=spec["vectors"],
            peak_rss_bytes=r.get("peak_rss_bytes") or peak,
            process_peak_rss_bytes=peak,
            base_rss_bytes=r.get("base_rss_bytes"),
            separable=self.separable,
            vocab_size=r.get("vocab_size"),
            notes=r.get("notes", ""),
            extra={"child_wall_seconds": wall, **r.get("extra", {})},
        )


class Hsw2v(PythonSystem):
    name = "hsw2v"

    def available(self):
        code = (
            "import sys\ntry:\n import hsw2v\nexcept ImportError:\n"
            f" sys.path.append({str(Path(__file__).resolve().parents[1])!r})\n import hsw2v\n"
            "hsw2v.Word2Vec"
        )
        try:
            p = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                timeout=600,  # a loaded machine can take minutes to import
                env=child_env(),
            )
        except (OSError, subprocess.SubprocessError) as e:
            return False, str(e)
        if p.returncode != 0:
            return False, (p.stderr.strip().splitlines() or ["import failed"])[-1]
        return True, ""


class Hsw2vFile(Hsw2v):
    name = "hsw2v-file"


class Hsw2vShared(Hsw2v):
    name = "hsw2v-shared"


class Hsw2vPairs(Hsw2v):
    name = "hsw2v-pairs"


class GensimIter(PythonSystem):
    name = "gensim-iter"

    def available(self):
        try:
            import importlib.util

            return (importlib.util.find_spec("gensim") is not None), "gensim not installed"
        except ImportError as e:
            return False, str(e)


class GensimFile(GensimIter):
    name = "gensim-file"


class FastText(PythonSystem):
    name = "fasttext"
    separable = False

    def available(self):
        import importlib.util

        if importlib.util.find_spec("fasttext") is None:
            return False, "fasttext not installed (pip install fasttext-wheel)"
        return True, ""


def find_w2v_binary() -> str | None:
    """Locate the original C ``word2vec`` executable.

    Order: ``$W2V_C_BIN``; ``word2vec`` in this interpreter's scripts directory (where the PyPI
    package ``word2vec`` installs the binary it compiles); ``<sys.prefix>/bin/word2vec``; then
    ``word2vec`` on PATH. Only a real executable (ELF or Mach-O) counts: version-manager shims
    and wrapper scripts with the same name are skipped.
    """
    candidates = []
    if os.environ.get("W2V_C_BIN"):
        candidates.append(os.environ["W2V_C_BIN"])
    candidates.append(os.path.join(sysconfig.get_path("scripts"), "word2vec"))
    candidates.append(os.path.join(sys.prefix, "bin", "word2vec"))
    on_path = shutil.which("word2vec")
    if on_path:
        candidates.append(on_path)
    for c in candidates:
        if not (os.path.isfile(c) and os.access(c, os.X_OK)):
            continue
        with open(c, "rb") as f:
            magic = f.read(4)
        if (
            magic == b"\x7fELF"
            or magic[:3] in (b"\xcf\xfa\xed", b"\xfe\xed\xfa")
            or magic in (b"\xca\xfe\xba\xbe",)
        ):
            return os.path.realpath(c)
    return None


class W2vC(System):
    name = "w2v-c"
    separable = False

    def available(self):
        b = find_w2v_binary()
        return (b is not None), "C word2vec binary not found (pip install word2vec)"

    def command(
        self,
        corpus_path,
        out_path,
        mode,
        workers,
        epochs,
        vector_size,
        window,
        min_count,
        sample,
        alpha,
    ):
        return [
            find_w2v_binary(),
            "-train",
            str(corpus_path),
            "-output",
            str(out_path),
            "-cbow",
            "1" if mode == "cbow" else "0",
            "-hs",
            "1",
            "-negative",
            "0",
            "-size",
            str(vector_size),
            "-window",
            str(window),
            "-sample",
            repr(float(sample)),
            "-min-count",
            str(min_count),
            "-iter",
            str(epochs),
            "-threads",
            str(workers),
            "-alpha",
            repr(float(alpha)),
            "-binary",
            "1",
            "-debug",
            "0",
        ]

    def vocab_only_seconds(self, corpus_path, min_count=5, out_dir=None, timeout=None) -> float:
        """Time a vocabulary-only run (``-save-vocab`` and no ``-output``: the tool stops after
        counting), an estimate of the vocabulary part of a full run."""
        out_dir = out_dir or tempfile.mkdtemp(prefix="w2vbench-")
        stem = os.path.join(out_dir, f"w2v-c-vocab-{time.monotonic_ns()}")
        cmd = [
            find_w2v_binary(),
            "-train",
            str(corpus_path),
            "-save-vocab",
            stem + ".vocab",
            "-min-count",
            str(min_count),
            "-debug",
            "0",
        ]
        rc, wall, _ = _run_measured(cmd, stem + ".out", stem + ".err", timeout)
        if rc != 0:
            raise RuntimeError(f"w2v-c vocabulary run failed (exit {rc}): {_tail(stem + '.err')}")
        for suffix in (".vocab", ".out", ".err"):
            try:
                os.remove(stem + suffix)
            except OSError:
                pass
        return wall

    def train(
        self,
        corpus_path,
        mode,
        workers,
        epochs,
        vector_size=100,
        window=5,
        min_count=5,
        sample=1e-3,
        seed=1,
        *,
        alpha=DEFAULT_ALPHA,
        out_dir=None,
        corpus_words=None,
        timeout=None,
        vocab_estimate=False,
        **extra,
    ) -> Result:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        ok, why = self.available()
        if not ok:
            raise SystemUnavailable(f"{self.name}: {why}")
        out_dir = out_dir or tempfile.mkdtemp(prefix="w2vbench-")
        stem = os.path.join(out_dir, f"{self.name}-{mode}-w{workers}-{time.monotonic_ns()}")
        cmd = self.command(
            corpus_path,
            stem + ".bin",
            mode,
            workers,
            epochs,
            vector_size,
            window,
            min_count,
            sample,
            alpha,
        )
        rc, wall, peak = _run_measured(cmd, stem + ".out", stem + ".err", timeout)
        if rc != 0:
            raise RuntimeError(f"w2v-c failed (exit {rc}):\n{_tail(stem + '.err')}")
        words = (corpus_words if corpus_words is not None else count_words(corpus_path)) * epochs
        res = Result(
            system=self.name,
            mode=mode,
            workers=workers,
            epochs=epochs,
            vocab_seconds=None,
            train_seconds=None,
            total_seconds=wall,
            words=words,
            vectors_path=stem + ".bin",
            peak_rss_bytes=peak,
            process_peak_rss_bytes=peak,
            separable=False,
            notes="vocabulary time not separable: total subprocess wall time "
            "(vocabulary + training + writing the vectors); no seed option",
        )
        if vocab_estimate:
            v = self.vocab_only_seconds(corpus_path, min_count, out_dir, timeout)
            res.extra["vocab_seconds_est"] = v
            res.extra["train_seconds_est"] = max(wall - v, 1e-9)
        return res


_REGISTRY = {
    cls.name: cls
    for cls in (Hsw2v, Hsw2vFile, GensimIter, GensimFile, W2vC, FastText, Hsw2vShared, Hsw2vPairs)
}


def get_system(name: str) -> System:
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}") from None


def train(system: str, corpus_path, mode, workers, epochs, **kw) -> Result:
    """Convenience: ``get_system(system).train(...)``."""
    return get_system(system).train(corpus_path, mode, workers, epochs, **kw)


# --------------------------------------------------------------------------------------------
# child side: runs inside the fresh interpreter


def _rss_now() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _peak_rss() -> int:
    """This process's peak RSS since its exec (see the module note on ``ru_maxrss``)."""
    hwm = _vm_hwm()
    if hwm is not None:
        return hwm
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_w2v_binary(path: str, words, matrix) -> None:
    """Write vectors in the C tool's binary format (header, then ``word<space><float32 bytes>\\n``)."""
    import numpy as np

    m = np.ascontiguousarray(matrix, dtype=np.float32)
    with open(path, "wb") as f:
        f.write(f"{m.shape[0]} {m.shape[1]}\n".encode())
        for w, row in zip(words, m, strict=True):
            f.write(w.encode("utf-8") + b" " + row.tobytes() + b"\n")


class _LineSentenceClone:
    """gensim's LineSentence semantics (split lines, chunks of 10000), used only when hsw2v does
    not export its own."""

    def __init__(self, path, max_sentence_length=10000):
        self.path, self.n = path, max_sentence_length

    def __iter__(self):
        with open(self.path, "rb") as f:
            for line in f:
                toks = line.decode("utf-8").split()
                for i in range(0, len(toks), self.n):
                    yield toks[i : i + self.n]


class RestartableFile:
    """A plain re-iterable corpus, the kind users write: ``__iter__`` reads the file again
    (a generator) and splits each line; nothing marks it unchanged, so every library reads it
    once for the vocabulary and once per epoch."""

    def __init__(self, path, max_sentence_length=10000):
        self.path, self.n = path, max_sentence_length

    def __iter__(self):
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                toks = line.split()
                for i in range(0, len(toks), self.n):
                    yield toks[i : i + self.n]


#: What the Python systems of iterable mode read (``corpus_kind``): each library's own
#: LineSentence, a list of token lists held in memory, or a :class:`RestartableFile`.
CORPUS_KINDS = ("linesentence", "list", "restartable")


def _import_hsw2v():
    """Import hsw2v: the installed package, else the checkout this file belongs to (which then
    needs its extension built in place)."""
    try:
        import hsw2v
    except ImportError:
        sys.path.append(str(Path(__file__).resolve().parents[1]))
        import hsw2v
    return hsw2v


def _child(spec: dict) -> dict:
    system, corpus, mode = spec["system"], spec["corpus"], spec["mode"]
    sg = 1 if mode == "sg" else 0
    common = dict(
        vector_size=spec["vector_size"],
        alpha=spec["alpha"],
        window=spec["window"],
        min_count=spec["min_count"],
        sample=spec["sample"],
        seed=spec["seed"],
        workers=spec["workers"],
        sg=sg,
        hs=0 if spec.get("negative") else 1,  # negative sampling alone, or hs alone
        negative=spec.get("negative", 0),
        epochs=spec["epochs"],
    )
    out: dict = {"extra": {}}
    if system in ("hsw2v-shared", "hsw2v-pairs"):
        common["shared_negatives"] = system == "hsw2v-shared"
    if system in PYTHON_SYSTEMS:
        if system in HSW2V_SYSTEMS:
            _import_hsw2v()
            from hsw2v import Word2Vec

            try:
                from hsw2v.corpora import LineSentence
            except ImportError:
                try:
                    from hsw2v import LineSentence
                except ImportError:
                    LineSentence = _LineSentenceClone
            out["extra"]["line_sentence"] = f"{LineSentence.__module__}.{LineSentence.__name__}"
            # tuning constants of the trainer for this run (e.g. {"HOT_NODES": 255}): their
            # home is hsw2v.running._tuning (hsw2v._tuning in flat builds)
            if spec.get("constants"):
                import importlib

                for home in ("hsw2v.running._tuning", "hsw2v._tuning"):
                    try:
                        tuning = importlib.import_module(home)
                        break
                    except ImportError:
                        continue
                else:
                    raise ValueError("this hsw2v build has no tuning constants module")
                for name, value in spec["constants"].items():
                    if not hasattr(tuning, name):
                        raise ValueError(f"{tuning.__name__} has no constant {name!r}")
                    setattr(tuning, name, value)
            out["extra"]["constants"] = spec.get("constants", {})
            out["extra"]["level"] = getattr(sys.modules.get("hsw2v._cpu"), "level", None)
        else:
            from gensim.models.word2vec import LineSentence, Word2Vec
        out["base_rss_bytes"] = _rss_now()
        model = Word2Vec(**common)
        cpu0 = time.process_time()  # CPU seconds of every thread of this process
        if system in ("gensim-file", "hsw2v-file"):
            t0 = time.perf_counter()
            model.build_vocab(corpus_file=corpus)
            t1, cpu1 = time.perf_counter(), time.process_time()
            model.train(
                corpus_file=corpus, total_words=model.corpus_total_words, epochs=model.epochs
            )
            t2 = time.perf_counter()
        else:
            kind = spec.get("corpus_kind", "linesentence")
            if kind == "list":
                sentences = list(RestartableFile(corpus))
            elif kind == "restartable":
                sentences = RestartableFile(corpus)
            elif kind == "linesentence":
                sentences = LineSentence(corpus)
            else:
                raise ValueError(f"corpus_kind must be one of {CORPUS_KINDS}, got {kind!r}")
            out["extra"]["corpus_kind"] = kind
            t0 = time.perf_counter()
            model.build_vocab(sentences)
            t1, cpu1 = time.perf_counter(), time.process_time()
            model.train(sentences, total_examples=model.corpus_count, epochs=model.epochs)
            t2 = time.perf_counter()
        out["extra"]["vocab_cpu_seconds"] = cpu1 - cpu0
        out["extra"]["train_cpu_seconds"] = time.process_time() - cpu1
        out["peak_rss_bytes"] = _peak_rss()
        out.update(
            vocab_seconds=t1 - t0,
            train_seconds=t2 - t1,
            total_seconds=t2 - t0,
            vocab_size=len(model.wv.index_to_key),
        )
        model.wv.save_word2vec_format(spec["vectors"], binary=True)
    elif system == "fasttext":
        import fasttext

        out["base_rss_bytes"] = _rss_now()
        kw = dict(
            input=corpus,
            model="skipgram" if sg else "cbow",
            loss="hs",
            dim=spec["vector_size"],
            ws=spec["window"],
            epoch=spec["epochs"],
            minCount=spec["min_count"],
            t=spec["sample"],
            lr=spec["alpha"],
            minn=0,
            maxn=0,
            wordNgrams=1,
            bucket=0,
            thread=spec["workers"],
            verbose=0,
        )
        try:  # only newer fastText releases take a seed here; the check fails before training
            fasttext.train_unsupervised(**{**kw, "input": os.devnull, "seed": spec["seed"]})
        except TypeError:
            out["extra"]["seed"] = "not accepted by this fastText"
        except Exception:  # accepted (the empty input then fails): pass it
            kw["seed"] = spec["seed"]
        t0 = time.perf_counter()
        model = fasttext.train_unsupervised(**kw)
        t1 = time.perf_counter()
        out["peak_rss_bytes"] = _peak_rss()
        words = model.get_words()
        matrix = model.get_input_matrix()[: len(words)]  # minn=maxn=0: row i is word i's vector
        out.update(
            vocab_seconds=None,
            train_seconds=None,
            total_seconds=t1 - t0,
            vocab_size=len(words),
            notes="vocabulary time not separable: train_unsupervised wall time "
            "(vocabulary + training)",
        )
        write_w2v_binary(spec["vectors"], words, matrix)
    else:
        raise ValueError(f"no child runner for {system!r}")
    return out


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--system", choices=SYSTEMS)
    ap.add_argument("--corpus")
    ap.add_argument("--mode", choices=MODES, default="sg")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--list", action="store_true", help="show which systems are available")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(args.child))), flush=True)
        return 0
    if args.list or not args.system:
        for name in SYSTEMS:
            ok, why = get_system(name).available()
            print(f"{name:12s} {'ok' if ok else 'unavailable: ' + why}")
        b = find_w2v_binary()
        if b:
            print(f"C word2vec binary: {b}")
        return 0
    res = train(args.system, args.corpus, args.mode, args.workers, args.epochs)
    d = res.to_dict()
    print(json.dumps(d, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
