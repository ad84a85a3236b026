import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

USES_GENSIM = re.compile(
    r"\b(to_gensim|from_gensim|kv_to_gensim|kv_from_gensim)\(|\bimport gensim|\bfrom gensim\b"
)


# Optional parts: a test that needs one skips with a reason where it is absent. HSW2V_REQUIRE
# (space- or comma-separated names of this table; .ci/run sets it) names the parts a run must
# have: there a skip for lack of one fails instead, so CI cannot go green without them. Each
# part is recognised by the reasons its skips give.
OPTIONAL_PARTS = {
    # `pip install torch` (README's test command installs the extra "torch")
    "torch": re.compile(r"could not import 'torch'|examples need (\w+, )*torch\b"),
    # the docs extra (README's test command installs it): the site's theme, highlighting, math
    "docs": re.compile(r"pip install -e '\.\[docs\]'"),
    # the benchmark-only walks: built by in-place and editable builds (setup.py, note E)
    "bench_walks": re.compile(r"the benchmark-only walks are not built"),
    # a wheel to install into a fresh venv: HSW2V_WHEEL (tests/test_wheel.py)
    "wheel": re.compile(r"no wheel to test"),
    # the test extra's packages, where a test imports one with pytest.importorskip
    "test_extras": re.compile(
        r"could not import '(gensim|sklearn|ot|dask|matplotlib|tqdm|Cython)\b"
        r"|needs Facebook's fasttext"
    ),
    # pyspark (the test extra) and the Java runtime Spark runs on (.ci/run requires it where
    # java is on PATH)
    "spark": re.compile(r"could not import 'pyspark'|Spark needs a Java runtime"),
    # system packages (.ci/run installs them with apt): qemu-user, MinGW-w64 and Wine
    "qemu": re.compile(r"qemu-x86_64 is not installed"),
    "wine": re.compile(r"the Windows twin needs x86_64-w64-mingw32-gcc and wine"),
}


def required_parts(environ=os.environ) -> frozenset[str]:
    """The optional parts ``HSW2V_REQUIRE`` says this run must have."""
    names = frozenset(environ.get("HSW2V_REQUIRE", "").replace(",", " ").split())
    unknown = sorted(names - set(OPTIONAL_PARTS))
    if unknown:
        raise pytest.UsageError(
            f"HSW2V_REQUIRE names unknown parts {unknown}: the parts are "
            f"{', '.join(OPTIONAL_PARTS)} (tests/conftest.py, OPTIONAL_PARTS)"
        )
    return names


def missing_part(reason: str) -> str | None:
    """The optional part whose absence a skip's reason gives, or None."""
    for part, pattern in OPTIONAL_PARTS.items():
        if pattern.search(reason):
            return part
    return None


def _required_skip(report, required: frozenset[str]) -> str | None:
    """The message for a skip for lack of a part that this run must have, or None."""
    if not required or not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    part = missing_part(reason)
    if part not in required:
        return None
    return (
        f"skipped for lack of {part!r}, which this run must have (HSW2V_REQUIRE="
        f"{' '.join(sorted(required))}): {reason}"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    message = _required_skip(report, item.config.stash.get(_REQUIRED, frozenset()))
    if message:  # the test fails, with the skip's reason
        report.outcome, report.longrepr = "failed", message


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    message = _required_skip(report, collector.config.stash.get(_REQUIRED, frozenset()))
    if message:  # a whole module skipped: the run fails at its end, the rest still runs
        collector.config.stash.setdefault(_SKIPPED_MODULES, []).append(
            f"{report.nodeid}: {message}"
        )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for line in config.stash.get(_SKIPPED_MODULES, []):
        terminalreporter.write_line(f"FAILED (module) {line}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if session.config.stash.get(_SKIPPED_MODULES, []) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_REQUIRED = pytest.StashKey[frozenset]()
_SKIPPED_MODULES = pytest.StashKey[list]()


def _gensim_installed() -> bool:
    try:
        import gensim  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    """gensim is a test dependency only: a docstring example of hsw2v/ that converts to or from
    gensim is skipped where gensim is not installed (every other example still runs). This
    hook sees every collected item, the doctests of hsw2v/ included, when tests/ is collected
    too (as the default testpaths do)."""
    if _gensim_installed():
        return
    skip = pytest.mark.skip(reason="the example uses gensim, which is not installed")
    for item in items:
        test = getattr(item, "dtest", None)
        if test is not None and any(USES_GENSIM.search(ex.source) for ex in test.examples):
            item.add_marker(skip)


class _LazyGensimModels:
    """``gensim.models``, imported at its first use inside a test: a test that uses gensim is
    skipped where gensim is not installed, and the tests beside it that do not still run
    (a module-level ``importorskip`` would skip them all). Only gensim's classes and the
    submodules below are forwarded: pytest probes module globals for other attributes while
    it collects, and those must not import (or skip)."""

    SUBMODULES = frozenset({"callbacks", "keyedvectors", "word2vec"})

    def __getattr__(self, name):
        if not (name[:1].isupper() or name in self.SUBMODULES):
            raise AttributeError(name)
        return getattr(pytest.importorskip("gensim.models"), name)


gensim_models = _LazyGensimModels()


def planted_corpus(
    n_clusters=6, words_per_cluster=12, n_sentences=3000, length=10, seed=0, noise=0.0
):
    """Sentences that each draw words from one planted cluster, plus a few shared filler words.

    A model that learns anything from co-occurrence puts each word's nearest neighbours in its
    own cluster. With ``noise`` > 0 each word is, with that probability, replaced by a word of
    any cluster: then only a well trained model recovers the clusters (see ``WEAKENED``)."""
    rng = np.random.default_rng(seed)
    clusters = [[f"c{c}w{i}" for i in range(words_per_cluster)] for c in range(n_clusters)]
    fillers = ["the", "of", "and"]
    sentences = []
    for _ in range(n_sentences):
        cluster = clusters[rng.integers(n_clusters)]
        sentence = [cluster[i] for i in rng.integers(words_per_cluster, size=length)]
        sentence[rng.integers(length)] = fillers[rng.integers(len(fillers))]
        if noise:
            words = [w for cluster in clusters for w in cluster]
            for i in np.flatnonzero(rng.random(length) < noise):
                if sentence[i] not in fillers:
                    sentence[i] = words[rng.integers(len(words))]
        sentences.append(sentence)
    return sentences, clusters


def settle(path, age_seconds=3600):
    """Date a file's mtime ``age_seconds`` back: hsw2v reads a file modified in the last two
    seconds again every pass (hsw2v.corpora.file_identity), and a test that wants the
    read-once path must give it a file it can prove unchanged."""
    os.utime(path, ns=(time.time_ns(), time.time_ns() - age_seconds * 10**9))


def cluster_recovery(wv, clusters, topn=5):
    """Fraction of top-n neighbours that share the query word's cluster."""
    cluster_of = {w: c for c, words in enumerate(clusters) for w in words}
    hits = total = 0
    for word, c in cluster_of.items():
        for neighbour, _ in wv.most_similar(word, topn=topn):
            hits += cluster_of.get(neighbour) == c
            total += 1
    return hits / total


# Weakened trainings that the quality tests' noisy corpus must catch (the controls): on the
# noiseless corpus both still recover every cluster (1.000), on the noisy one they score
# 0.2-0.85 while the full training scores 1.000 (5 epochs, alpha 0.025).
WEAKENED = {
    "one epoch": {"epochs": 1},
    "a tenth of the learning rate": {"alpha": 0.0025, "min_alpha": 0.00001},
}

NOISE = 0.65  # the quality tests' noise: calibrated so that the WEAKENED trainings fail


def weakened_settings(settings: dict, weakened: dict) -> dict:
    """A weakened control's settings: ``weakened`` over ``settings``, trained by one worker.
    A control shows that the measure and its threshold reject a weakened training, so its
    score must not move from run to run: with two workers, Hogwild's interleaving moved
    skip-gram's one-epoch control over 0.81-0.89 in 25 runs on the benchmark host, and to
    0.906 once in a loaded test run, across the 0.9 bar; one worker scores the same every
    run (0.839 there)."""
    return {**settings, **weakened, "workers": 1}


BENCH_WALKS = ("loop", "blas")  # the benchmark-only walks (hsw2v._kernels._bench_walks)


def bench_walks():
    """The benchmark-only walks' module (:mod:`hsw2v._kernels._bench_walks`); the test is skipped
    where this build does not hold it (every wheel, and ``HSW2V_BENCH_WALKS=0`` builds; an
    editable install builds it, and CI requires it: ``HSW2V_REQUIRE``)."""
    try:
        from hsw2v._kernels import _bench_walks
    except ImportError as exc:  # "cannot import name" where the module was not built
        pytest.skip(f"the benchmark-only walks are not built: {exc}")
    return _bench_walks


def trainer_type(kernel):
    """The Trainer type that trains the walk ``kernel`` (skips as :func:`bench_walks`)."""
    from hsw2v._kernels import _inner

    return bench_walks().Trainer if kernel in BENCH_WALKS else _inner.Trainer


@pytest.fixture
def training_kernel(monkeypatch):
    """``training_kernel(name)`` makes every trainer of this test use the path walk ``name``
    (``hsw2v.running.trainer.KERNEL``, the ``HSW2V_KERNEL`` switch); restored afterwards. A
    benchmark-only walk skips the test where the build lacks it (:func:`bench_walks`)."""
    from hsw2v.running import trainer as running_trainer

    def select(name):
        assert name in running_trainer.WALK_CHOICES, name
        if name in BENCH_WALKS:
            bench_walks()
        monkeypatch.setattr(running_trainer, "WALK", name)

    return select


@pytest.fixture(scope="session")
def planted():
    return planted_corpus()


@pytest.fixture(scope="session")
def planted_noisy():
    return planted_corpus(noise=NOISE)


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        help="run the crash-hunting fuzz tests (tests/test_fuzz_models.py) 25 times longer",
    )


def pytest_configure(config):
    config.stash[_REQUIRED] = required_parts()
    if config.getoption("--fuzz-long", default=False):
        os.environ["HSW2V_FUZZ_LONG"] = "1"


class CountingCorpus:
    """A re-iterable corpus that counts how often it is read."""

    def __init__(self, sentences):
        self.sentences = sentences
        self.reads = 0

    def __iter__(self):
        self.reads += 1
        return iter(self.sentences)


class EpochRecorder:
    """A training callback: after each epoch, note whether it trained from ids kept in memory
    and how many words it trained, then call ``then(epochs_done)`` if given."""

    def __init__(self, then=None):
        self.from_memory, self.trained, self.then = [], [], then

    def on_train_begin(self, model):
        pass

    def on_epoch_begin(self, model):
        pass

    def on_epoch_end(self, model):
        self.from_memory.append(getattr(model.latest_epoch_report, "from_memory", None))
        self.trained.append(model.latest_epoch_report.trained_words)
        if self.then is not None:
            self.then(len(self.from_memory))

    def on_train_end(self, model):
        pass


def c_compiler() -> str | None:
    """The C compiler Python was built with (or cc / gcc) on PATH, for the tests that compile
    the kernels' C headers into small check programs; None where there is none."""
    import shutil
    import sysconfig

    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) or shutil.which("cc") or shutil.which("gcc")


def word2vec_trainer(Trainer, syn0, syn1, codes, points, lengths, sample_int, window, sg,
                     *, hs=True, negative=0, syn1neg=None, cum_table=None, hot_nodes=0,
                     hot_rows=None, hot_words=None, shared_negatives=False, cbow_run=4,
                     cbow_stride=0, **settings):
    """A kernel ``Trainer`` (``_inner`` or ``_bench_walks``) over Word2Vec's arrays, its
    outputs made from Word2Vec's switches: the tree's (``hs``) first, then the draws'
    (``negative > 0``), as Word2Vec gives them (``running.objectives.kernel_outputs``). The
    kernel's parameters (``window``, ``sg`` and, in ``settings``, ``cbow_mean``,
    ``shrink_windows``, ``compute_loss``) default to Word2Vec's."""
    from hsw2v._kernels._inner import draw_output, tree_output
    from hsw2v.running.params import BY_NAME, KERNEL

    params = {name: settings.pop(name, BY_NAME[name].default) for name in KERNEL}
    params.update(window=window, sg=sg)

    outputs = []
    if hs:
        outputs.append(tree_output(syn1, codes, points, lengths, hot_rows=hot_rows,
                                          hot_nodes=hot_nodes))
    if negative:
        outputs.append(draw_output(syn1neg, cum_table, negative, hot_rows=hot_words,
                                          shared=shared_negatives, cbow_run=cbow_run,
                                          cbow_stride=cbow_stride))
    return Trainer(syn0, sample_int, outputs, params, **settings)


def cli_env() -> dict:
    """The environment for a fresh interpreter that imports this checkout of hsw2v (first on
    ``PYTHONPATH``)."""
    import hsw2v

    root = str(Path(hsw2v.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def run_cli(*args: str, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m hsw2v ARGS`` in a fresh interpreter on this checkout (``cli_env``)."""
    return subprocess.run(
        [sys.executable, "-m", "hsw2v", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=cwd,
        timeout=timeout,
    )


# ------------------------------------------------------------- Facebook's fastText tool
def fasttext_tool():
    """Facebook's ``fasttext`` module (the test extra's ``fasttext-wheel``), or a skip."""
    return pytest.importorskip("fasttext", reason="needs Facebook's fasttext (fasttext-wheel)")


def demo_lines(start=0, stop=600) -> list[str]:
    """Lines ``start:stop`` of the bundled demo corpus (the King James Bible), stripped."""
    import gzip

    from hsw2v.datasets import demo_corpus_path

    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        lines = [next(fh).strip() for _ in range(stop)]
    return lines[start:]


def facebook_models(folder, **more) -> dict:
    """Small models trained by fastText on the demo corpus's first 600 lines, each saved as a
    ``.bin`` in ``folder``: ``{kind: (path, model)}`` for "skipgram-hs" and "cbow-ns", and
    for each of ``more`` (a kind and a function of the tool returning its model)."""
    fasttext = fasttext_tool()
    text = Path(folder) / "corpus.txt"
    text.write_text("\n".join(demo_lines()) + "\n", encoding="utf-8")
    unsup = dict(dim=10, epoch=2, thread=1, verbose=0, ws=3, minCount=2, minn=2, maxn=4,
                 bucket=2000)  # fmt: skip
    makers = {
        "skipgram-hs": lambda ft: ft.train_unsupervised(
            str(text), model="skipgram", loss="hs", **unsup
        ),
        "cbow-ns": lambda ft: ft.train_unsupervised(
            str(text), model="cbow", loss="ns", neg=3, **unsup
        ),
        **more,
    }
    out = {}
    for kind, make in makers.items():
        model = make(fasttext)
        path = Path(folder) / f"{kind}.bin"
        model.save_model(str(path))
        out[kind] = (path, model)
    return out


def numpy_output_walk(kind, h, target, negs, alpha, syn1, syn1neg, tree, sigmoid, learn=True):
    """The NumPy references' walk of one output for the hidden vector ``h`` (float64):
    hierarchical softmax along ``target``'s path (label 1 - code: sigmoid(f) is P(bit 0)),
    or negative sampling over ``negs`` (the target first). Each node's or word's row steps
    (unless ``learn`` is False: inference's frozen outputs); returns ``(work, loss)``, h's
    step and the loss terms."""
    if kind == "hs":
        out = syn1
        pairs = zip(tree.point(target), 1.0 - tree.code(target), strict=True)
    else:
        out = syn1neg
        pairs = ((w, 1.0 if k == 0 else 0.0) for k, w in enumerate(negs))
    work, loss = np.zeros_like(h), 0.0
    for w, label in pairs:
        f = out[w] @ h
        loss += np.logaddexp(0.0, -(2 * label - 1) * f)
        g = (label - sigmoid(f)) * alpha
        work += g * out[w]
        if learn:
            out[w] += g * h
    return work, loss
