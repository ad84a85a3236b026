"""Two or more builds of hsw2v side by side: the training kernel alone, timed by CPU time.

The question: did a kernel change cost speed? Whole training runs (``ab_builds.py``) answer
it for users, but on a busy shared machine their wall times wander by more than the few
percent in question. This probe times only ``Trainer.train_job`` over the same jobs, by the
thread's CPU time, which other processes disturb far less. For every repeat and setting,
each build runs once in a fresh subprocess (``PYTHONPATH=DIR``, single-threaded BLAS), in
the order given on even repeats and reversed on odd ones (A B B A A B ...), so that neither
build always runs right after the other. A run reads a prefix of the corpus, trains one warm-up epoch
with one worker (the same seed, so every build starts from the same weights), then trains
the epoch's jobs ``--inner`` times from those weights and reports the fastest pass. The
medians over repeats and their ratio to the first build close the output.

    python3 benchmarks/ab_kernel.py --corpus CORPUS --build OLD_CHECKOUT --build . \\
        [--settings sg,cbow,sg-ns] [--repeats 7] [--words 600000] [--kernel loop] [--size 100]

``--kernel`` times one path walk by name ("window", "fused", "reference", "loop", "blas"; the
Trainer's ``walk``, not a parameter of Word2Vec) instead of the one Word2Vec picks; it
works across builds, also those that predate the ``HSW2V_KERNEL`` switch.

``--in-process`` times the builds' kernels inside one process instead: the first build's
hsw2v (``PYTHONPATH``) makes the model and the jobs, and every build's compiled ``_inner`` of
the CPU level in use is loaded beside it (in-place builds: ``BUILD/hsw2v/_cpu/LEVEL/``); each
repeat then trains one pass per build from the same weights, alternated as above, so that the
passes of a pair run seconds apart. The machine's drift then touches both alike, and the
paired ratios (each pass over the first build's pass of the same repeat) are reported with
their spread, with whether the builds trained the same bits. Only ``_inner`` differs between
the builds compared this way (the other compiled modules are the first build's), so it is for
changes to the training kernels.

    python3 benchmarks/ab_kernel.py --in-process --corpus CORPUS --build . --build OLD_CHECKOUT \
        --settings cbow-ns-shared --size 300 --repeats 16 --words 600000

The settings ``d2v-dm``, ``d2v-dbow``, ``d2v-dm-ns`` and ``d2v-dbow-ns`` (``--in-process``
only) time Doc2Vec's kernel (each line of the prefix a document tagged with its number; the
document rows copied for each pass as the other weights are), as the FastText settings
below do.

The settings ``ft-sg``, ``ft-cbow``, ``ft-sg-ns`` and ``ft-cbow-ns`` (``--in-process`` only)
time FastText's kernel instead (min_n 3, max_n 6, the default bucket): its trainer is made
from the model's own settings (``hsw2v.running.trainer.trainer_settings``) and each build's
``Trainer`` (``TrainerSettings.arguments``), so the builds compared must take the same
arguments.

A build given as ``DIR@LEVEL`` (``--in-process`` only) loads that CPU level's ``_inner`` of
the build instead of the level in use, so that one process compares the levels of one build
(``--build .@avx512 --build .@avx2``: the same jobs, the same alternation).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import child_env  # noqa: E402

SETTINGS = {  # name: (sg, hs, negative); kernels as Word2Vec picks them
    "sg": (1, 1, 0),
    "cbow": (0, 1, 0),
    "sg-ns": (1, 0, 5),
    "cbow-ns": (0, 0, 5),
    "sg-ns-shared": (1, 0, 5),  # shared negatives (Trainer(shared_negatives=True))
    "cbow-ns-shared": (0, 0, 5),  # the same (builds before CBOW shared draw a set per centre)
}
FASTTEXT = {  # name: (sg, hs, negative); FastText's kernel (--in-process only)
    "ft-sg": (1, 1, 0),
    "ft-cbow": (0, 1, 0),
    "ft-sg-ns": (1, 0, 5),
    "ft-cbow-ns": (0, 0, 5),
}
DOC2VEC = {  # name: (dm, hs, negative); Doc2Vec's kernel (--in-process only)
    "d2v-dm": (1, 1, 0),
    "d2v-dbow": (0, 1, 0),
    "d2v-dm-ns": (1, 0, 5),
    "d2v-dbow-ns": (0, 0, 5),
}
SHARED = {
    "sg-ns-shared",
    "cbow-ns-shared",
}  # settings that only builds with shared negatives can run


def child(
    corpus: str, words: int, setting: str, inner: int, kernel: str | None = None, size: int = 100
) -> dict:
    """One run (in the subprocess): the fastest of ``inner`` timed passes over the jobs."""
    import types

    try:
        from hsw2v._kernels import _inner
    except ImportError:  # a build from before the kernels had a folder
        from hsw2v import _inner
    Trainer = _inner.Trainer
    if kernel in ("loop", "blas"):
        try:  # the benchmark-only walks' own module (HSW2V_BENCH_WALKS=1 builds)
            from hsw2v._kernels._bench_walks import Trainer
        except ImportError:
            try:  # a build from before the kernels had a folder
                from hsw2v._bench_walks import Trainer
            except ImportError:
                pass  # builds before it: the shipped Trainer held them
    # the Trainer with the output makers of its build (none in builds of keywords)
    module = types.SimpleNamespace(Trainer=Trainer)
    for name in ("tree_output", "draw_output"):
        if hasattr(_inner, name):
            setattr(module, name, getattr(_inner, name))

    model, jobs = prepare(corpus, words, setting, size)
    best, kept_words = float("inf"), 0
    for _ in range(inner):
        seconds, kept_words, _ = train_pass(module, model, jobs, setting, kernel)
        best = min(best, seconds)
    return {"seconds": best, "kept_words": kept_words}


def prepare(corpus: str, words: int, setting: str, size: int):
    """The model after one warm-up epoch over the corpus's first ``words`` words (one worker,
    seed 1), and that prefix's jobs."""
    from hsw2v import LineSentence, Word2Vec

    try:
        from hsw2v.running.epochs import iter_jobs
    except ImportError:
        try:  # a build before the running layer's modules had public names
            from hsw2v.running._train import iter_jobs
        except ImportError:  # a build of the flat layout, before the running layer's folder
            from hsw2v._train import iter_jobs

    sentences, n = [], 0
    for sentence in LineSentence(corpus):
        sentences.append(sentence)
        n += len(sentence)
        if n >= words:
            break
    if setting in DOC2VEC:  # each line a document tagged with its number
        from hsw2v import Doc2Vec, TaggedDocument

        dm, hs, negative = DOC2VEC[setting]
        documents = [TaggedDocument(words, [k]) for k, words in enumerate(sentences)]
        model = Doc2Vec(documents, dm=dm, hs=hs, negative=negative, workers=1, epochs=1,
                        seed=1, vector_size=size)  # fmt: skip
        return model, list(model._corpus_jobs(documents, model.corpus_total_words))
    if setting in FASTTEXT:
        from hsw2v import FastText

        sg, hs, negative = FASTTEXT[setting]
        model = FastText(sentences, sg=sg, hs=hs, negative=negative, workers=1, epochs=1, seed=1,
                         vector_size=size, min_n=3, max_n=6)  # fmt: skip
    else:
        sg, hs, negative = SETTINGS[setting]
        model = Word2Vec(sentences, sg=sg, hs=hs, negative=negative, workers=1, epochs=1, seed=1,
                         vector_size=size)  # fmt: skip
    return model, list(iter_jobs(sentences, model.wv.key_to_index, model.batch_words))


def train_pass(module, model, jobs, setting: str, kernel: str | None = None):
    """One pass of ``module.Trainer`` (a build's ``_inner``) over the jobs from copies of the
    model's weights: (thread CPU seconds, kept words, the trained weights)."""

    try:  # the jobs' seeds: the same in every build
        from hsw2v._kernels._inner import job_seed
    except ImportError:  # a build from before the kernels had a folder
        from hsw2v._inner import job_seed

    if setting in FASTTEXT or setting in DOC2VEC:
        return settings_pass(module, model, jobs, job_seed)
    sg, hs, negative = SETTINGS[setting]
    syn0, syn1, syn1neg = (w.copy() for w in (model.wv.vectors, model.syn1, model.syn1neg))
    t = model.tree
    kernel = kernel or getattr(model, "_walk_variant", getattr(model, "_kernel_variant", None))()
    shared = {"shared_negatives": True} if setting in SHARED else {}
    Trainer = module.Trainer
    if not hasattr(module, "tree_output"):  # a build of per-objective keywords
        trainer = Trainer(
            syn0, syn1, t.codes, t.points, t.lengths, model.wv.expandos["sample_int"],
            model.window, bool(sg), True, True, False, kernel,
            hs=bool(hs), syn1neg=syn1neg if negative else None,
            cum_table=model.cum_table if negative else None, negative=negative, **shared,
        )  # fmt: skip
    else:  # a build whose Trainer takes its outputs as a list
        outputs = [module.tree_output(syn1, t.codes, t.points, t.lengths)] if hs else []
        if negative:
            outputs.append(module.draw_output(syn1neg, model.cum_table, negative,
                                       shared=bool(shared)))  # fmt: skip
        params = dict(window=model.window, sg=bool(sg), **KERNEL_DEFAULTS)
        trainer = any_trainer(Trainer, (syn0, model.wv.expandos["sample_int"], outputs, params),
                              {"walk": kernel})
    seconds, kept_words = time_jobs(trainer, jobs, job_seed)
    return seconds, kept_words, (syn0, syn1, syn1neg)


def settings_pass(module, model, jobs, job_seed):
    """``train_pass`` for FastText and Doc2Vec: the model's own trainer settings,
    ``module``'s Trainer over copies of its input matrix, output matrices and (Doc2Vec) its
    document rows."""
    import dataclasses

    from hsw2v.running.objectives import outputs_of
    from hsw2v.running.trainer import trainer_settings

    syn0 = model._input_matrix().copy()
    outputs = [matrix.copy() for matrix in outputs_of(model).values()]
    settings = trainer_settings(model, 1)
    docs = ()
    if settings.docs is not None:  # trained in place too: each pass starts from a copy
        docs = (settings.docs[0].copy(),)
        settings = dataclasses.replace(settings, docs=(*docs, *settings.docs[1:]))
    trainer = any_trainer(module.Trainer, *settings.arguments(syn0, *outputs))
    seconds, kept_words = time_jobs(trainer, jobs, job_seed)
    return seconds, kept_words, (syn0, *outputs, *docs)


KERNEL_DEFAULTS = dict(cbow_mean=True, shrink_windows=True, compute_loss=False)


def any_trainer(Trainer, args, kwargs):
    """``Trainer(*args, **kwargs)`` for any build since the outputs became a list, ``args``
    and ``kwargs`` in either form, whichever build's Python made them: this one's ``(syn0,
    sample_int, outputs, params)``, or an earlier one's ``(syn0, sample_int, window, sg,
    outputs)`` with the other kernel parameters as keywords (the walk once named
    ``kernel``)."""
    kwargs = dict(kwargs)
    if len(args) == 5:  # an earlier build's form: to this one's
        syn0, sample_int, window, sg, outputs = args
        params = {k: kwargs.pop(k, v) for k, v in KERNEL_DEFAULTS.items()}
        args = (syn0, sample_int, outputs, dict(window=window, sg=sg, **params))
    try:
        return Trainer(*args, **kwargs)
    except TypeError:  # a build from before the kernel's parameters came by name
        pass
    syn0, sample_int, outputs, params = args
    params = dict(params)
    earlier = (syn0, sample_int, params.pop("window"), params.pop("sg"), outputs)
    try:
        return Trainer(*earlier, **params, **kwargs)
    except TypeError:  # a build whose Trainer named the walk ``kernel``
        return Trainer(*earlier, **params, kernel=kwargs.pop("walk"), **kwargs)


def time_jobs(trainer, jobs, job_seed) -> tuple[float, int]:
    """Train ``jobs`` in order on ``trainer`` (every build's rates and seeds): (thread CPU
    seconds, kept words)."""
    import time

    started = time.thread_time()
    kept_words = 0
    for index, job in enumerate(jobs):
        kept, _ = trainer.train_job(job.ids, job.ends, 0.02, 0.01, job_seed(1, 0, index))
        kept_words += kept
    return time.thread_time() - started, kept_words


def build_dir(build: str) -> str:
    """The directory of a ``--build`` given as ``DIR`` or ``DIR@LEVEL``."""
    return build.rpartition("@")[0] or build


def build_level(build: str) -> str | None:
    """The CPU level of a ``--build`` given as ``DIR@LEVEL``, else None."""
    return build.rpartition("@")[2] if "@" in build else None


def child_in_process(corpus, words, setting, size, builds, repeats, kernel=None) -> dict:
    """``--in-process`` (in the subprocess, the first build on PYTHONPATH): every build's
    ``_inner`` side by side, one pass each per repeat, alternated; the seconds per build."""
    import importlib.util

    import numpy as np

    from hsw2v._kernels import _inner

    level_path = Path(_inner.__file__).resolve().relative_to(Path(build_dir(builds[0])).resolve())
    trainers = []
    for i, build in enumerate(builds):
        path = Path(build_dir(build)).resolve() / level_path
        if build_level(build):  # another CPU level of that build: hsw2v/_cpu/LEVEL/_inner...
            path = path.parents[1] / build_level(build) / path.name
        if i == 0 and path == Path(_inner.__file__).resolve():
            trainers.append(_inner)
            continue
        spec = importlib.util.spec_from_file_location(f"ab_build{i}._inner", path)
        if spec is None or not path.exists():
            raise SystemExit(f"{path} not found: --in-process needs in-place builds")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        trainers.append(module)
    model, jobs = prepare(corpus, words, setting, size)
    seconds = [[] for _ in builds]
    same_bits = True
    for repeat in range(repeats):
        order = range(len(builds)) if repeat % 2 == 0 else reversed(range(len(builds)))
        trained = {}
        for b in order:
            took, _, trained[b] = train_pass(trainers[b], model, jobs, setting, kernel)
            seconds[b].append(took)
        same_bits &= all(
            np.array_equal(x, y)
            for b in trained
            for x, y in zip(trained[0], trained[b], strict=True)
        )
    return {"seconds": seconds, "same_bits": same_bits}


def in_process(args, settings) -> None:
    """``--in-process``: one subprocess per setting (``child_in_process``), then medians and
    paired ratios to the first build."""
    env = child_env()
    env["PYTHONPATH"] = str(Path(build_dir(args.build[0])).resolve())
    for setting in settings:
        spec = json.dumps([args.corpus, args.words, setting, args.size, args.build, args.repeats,
                           args.kernel])  # fmt: skip
        out = subprocess.run(
            [sys.executable, __file__, "--child-in-process", spec],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        result = json.loads(out.stdout.strip().splitlines()[-1])
        base = result["seconds"][0]
        print(f"{setting}, d={args.size}, {args.repeats} alternated passes per build in one "
              f"process, kernel CPU seconds (same bits in every build: "
              f"{'yes' if result['same_bits'] else 'NO'})")  # fmt: skip
        for build, times in zip(args.build, result["seconds"], strict=True):
            paired = sorted(t / b for t, b in zip(times, base, strict=True))
            print(f"  {build:30s} median {statistics.median(times):.3f} s  fastest "
                  f"{min(times):.3f} s  paired ratio median {statistics.median(paired):.3f} "
                  f"(range {paired[0]:.3f}-{paired[-1]:.3f})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--build", action="append", default=[])
    parser.add_argument("--settings", default="sg,cbow")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--words", type=int, default=600_000)
    parser.add_argument("--inner", type=int, default=3)
    parser.add_argument("--kernel", help="a path walk by name (default: Word2Vec's choice)")
    parser.add_argument("--size", type=int, default=100, help="vector_size")
    parser.add_argument(
        "--in-process", action="store_true",
        help="every build's _inner in one process, passes alternated (see the module note)",
    )  # fmt: skip
    parser.add_argument("--child")
    parser.add_argument("--child-in-process")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*json.loads(args.child))))
        return
    if args.child_in_process:
        print(json.dumps(child_in_process(*json.loads(args.child_in_process))))
        return
    if len(args.build) < 2 or not args.corpus:
        parser.error("give --corpus and at least two --build directories")
    settings = args.settings.split(",")
    if any(build_level(build) for build in args.build) and not args.in_process:
        parser.error("a build given as DIR@LEVEL needs --in-process")
    if any(setting in FASTTEXT or setting in DOC2VEC for setting in settings) and (
        not args.in_process
    ):
        parser.error("the FastText and Doc2Vec settings (ft-..., d2v-...) need --in-process")
    unknown = [s for s in settings if s not in SETTINGS and s not in FASTTEXT and s not in DOC2VEC]
    if unknown:
        parser.error(f"unknown settings {unknown}: choose from "
                     f"{', '.join([*SETTINGS, *FASTTEXT, *DOC2VEC])}")  # fmt: skip
    if args.in_process:
        if args.kernel in ("loop", "blas"):  # their Trainer lives in another module
            parser.error("--in-process swaps the shipped _inner only: time the benchmark-only "
                         "walks without it")  # fmt: skip
        in_process(args, settings)
        return
    times: dict = {(s, b): [] for s in settings for b in args.build}
    for repeat in range(args.repeats):
        for setting in settings:
            for build in args.build if repeat % 2 == 0 else args.build[::-1]:
                env = child_env()
                env["PYTHONPATH"] = str(Path(build).resolve())
                spec = json.dumps(
                    [args.corpus, args.words, setting, args.inner, args.kernel, args.size]
                )
                out = subprocess.run(
                    [sys.executable, __file__, "--child", spec],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                result = json.loads(out.stdout.strip().splitlines()[-1])
                times[setting, build].append(result["seconds"])
                rate = result["kept_words"] / result["seconds"] / 1e3
                print(f"[{repeat + 1}/{args.repeats}] {setting} {build}: {rate:,.0f}k words/s "
                      f"({result['seconds']:.3f} CPU s)", flush=True)  # fmt: skip
    print("\nmedian CPU seconds of the kernel (ratio to the first build; < 1 is faster)")
    for setting in settings:
        base = statistics.median(times[setting, args.build[0]])
        for build in args.build:
            med = statistics.median(times[setting, build])
            print(f"  {setting:8s} {build:30s} {med:.3f} s  ratio {med / base:.3f}")


if __name__ == "__main__":
    main()
