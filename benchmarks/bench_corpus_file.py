"""corpus_file mode: hsw2v reading the file in its workers, against hsw2v's iterable mode and
gensim 4.4's corpus_file mode, alternated run by run, with the vectors scored by one judge.

    python3 benchmarks/bench_corpus_file.py CORPUS.txt --max-words 1000000 --epochs 2 --repeats 2

Systems: ``hsw2v-file`` (``hsw2v.Word2Vec`` with ``corpus_file=``), ``hsw2v`` (the iterable
mode on ``hsw2v.LineSentence``) and ``gensim-file`` (gensim with ``corpus_file=``), all
``hs=1, negative=0``; for each repeat, each (mode, workers) and each system in turn. By default
every training is a fresh subprocess (``systems.py``); ``--in-process`` trains them all in this
process instead (imports paid once: for a machine so loaded that starting a process takes
minutes). Reported per configuration, as medians over the repeats:

- training words/s by the wall clock (corpus words x epochs / training seconds, as
  ``bench_speed.py``);
- training words per CPU-second: the same words over the CPU seconds of all the training
  process's threads (``time.process_time``). On a shared machine where other programs take
  the cores, wall-clock speed measures the load more than the program; CPU time does not
  (with several workers it measures work, not scaling);
- analogy accuracy and WordSim-353 Spearman (``evaluate.py``) of the median-speed run,
  unless ``--no-eval``.

It prints a Markdown section (and writes it to ``--out`` if given).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import count_words, display_command, machine_info, make_slice  # noqa: E402
from systems import get_system  # noqa: E402

SYSTEMS = ("hsw2v-file", "hsw2v", "gensim-file")


def train_here(name, corpus, mode, workers, epochs, vectors):
    """Train one system in this process; returns (training wall seconds, CPU seconds)."""
    import time

    if name.startswith("hsw2v"):
        from hsw2v import LineSentence, Word2Vec
    else:
        from gensim.models.word2vec import LineSentence, Word2Vec
    model = Word2Vec(
        vector_size=100,
        window=5,
        min_count=5,
        sample=1e-3,
        seed=1,
        workers=workers,
        sg=int(mode == "sg"),
        hs=1,
        negative=0,
        epochs=epochs,
    )
    if name.endswith("-file"):
        model.build_vocab(corpus_file=corpus)
        wall, cpu = time.perf_counter(), time.process_time()
        model.train(corpus_file=corpus, total_words=model.corpus_total_words, epochs=epochs)
    else:
        sentences = LineSentence(corpus)
        model.build_vocab(sentences)
        wall, cpu = time.perf_counter(), time.process_time()
        model.train(sentences, total_examples=model.corpus_count, epochs=epochs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    model.wv.save_word2vec_format(vectors, binary=True)
    return wall, cpu


def main(argv=None) -> int:
    raw_argv = list(sys.argv if argv is None else [sys.argv[0], *argv])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("--max-words", type=int, default=None, help="first N words (whole lines)")
    ap.add_argument("--modes", default="sg,cbow")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=None, help="write the Markdown section here too")
    ap.add_argument("--in-process", action="store_true", help="train in this process")
    ap.add_argument("--no-eval", action="store_true", help="do not score the vectors")
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    workers = [int(w) for w in args.workers.split(",")]
    tmp = tempfile.mkdtemp(prefix="bench_corpus_file-")
    corpus = args.corpus
    if args.max_words:
        corpus = os.path.join(tmp, "slice.txt")
        words = make_slice(args.corpus, corpus, args.max_words)
    else:
        words = count_words(corpus)
    load_before = os.getloadavg()
    runs: dict = {}
    n, total = 0, args.repeats * len(modes) * len(workers) * len(SYSTEMS)
    for _ in range(args.repeats):
        for mode in modes:
            for w in workers:
                for name in SYSTEMS:
                    n += 1
                    vectors = os.path.join(tmp, f"{name}-{mode}-{w}-{n}.bin")
                    if args.in_process:
                        wall, cpu = train_here(name, corpus, mode, w, args.epochs, vectors)
                    else:
                        r = get_system(name).train(
                            corpus, mode, w, args.epochs, out_dir=tmp, corpus_words=words
                        )
                        wall, cpu = r.train_seconds, r.extra.get("train_cpu_seconds")
                        vectors = r.vectors_path
                    runs.setdefault((mode, w, name), []).append(
                        (words * args.epochs / wall, words * args.epochs / cpu, vectors)
                    )
                    print(
                        f"[{n}/{total}] {mode} workers={w} {name}: "
                        f"{words * args.epochs / wall / 1e3:,.0f}k words/s wall, "
                        f"{words * args.epochs / cpu / 1e3:,.0f}k words/CPU-s",
                        flush=True,
                    )
    from evaluate import evaluate

    rows = {}
    for key, results in runs.items():
        by_speed = sorted(results, key=lambda x: x[0])
        median_run = by_speed[len(by_speed) // 2]
        q = {"analogy_pct": float("nan"), "wordsim_spearman": float("nan")}
        if not args.no_eval:
            q = evaluate(median_run[2])
        rows[key] = {
            "wall": statistics.median(x[0] for x in results),
            "cpu": statistics.median(x[1] for x in results),
            "analogy": q["analogy_pct"],
            "wordsim": q["wordsim_spearman"],
        }
    info = machine_info()
    lines = [
        "## corpus_file mode (`bench_corpus_file.py`)",
        "",
        "```",
        display_command(raw_argv),
        "```",
        "",
        f"{words:,} words"
        + (f" (the first lines of {os.path.basename(args.corpus)})" if args.max_words else "")
        + f", {args.epochs} epochs, d=100, window 5, min_count 5, sample 1e-3, hs=1; "
        f"{args.repeats} alternated runs per cell, medians; "
        f"{'one process' if args.in_process else 'a fresh process per run'}. "
        f"{info['cpu_model']}, "
        f"{info['logical_cpus']} logical CPUs; load average {load_before[0]:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after.",
        "",
        "| mode | workers | system | words/s (wall) | words/CPU-s | analogy % | wordsim |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for mode in modes:
        for w in workers:
            for name in SYSTEMS:
                r = rows[(mode, w, name)]
                lines.append(
                    f"| {mode} | {w} | {name} | {r['wall']:,.0f} | {r['cpu']:,.0f} | "
                    f"{r['analogy']:.1f} | {r['wordsim']:.3f} |"
                )
    lines += [
        "",
        "| mode | workers | hsw2v-file / hsw2v (wall, CPU) | hsw2v-file / gensim-file (wall, CPU) |",
        "|---|---:|---:|---:|",
    ]
    for mode in modes:
        for w in workers:
            f, h, g = (rows[(mode, w, name)] for name in SYSTEMS)
            lines.append(
                f"| {mode} | {w} | {f['wall'] / h['wall']:.2f}×, {f['cpu'] / h['cpu']:.2f}× | "
                f"{f['wall'] / g['wall']:.2f}×, {f['cpu'] / g['cpu']:.2f}× |"
            )
    section = "\n".join(lines) + "\n"
    print(section)
    if args.out:
        Path(args.out).write_text(section, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
