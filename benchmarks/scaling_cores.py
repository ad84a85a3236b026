"""Scaling with cores: words/s of hsw2v and gensim at 1, 2, 4, 8, 16 workers on one corpus.

The standing question: does training speed keep growing with ``workers`` on a machine with
many cores (gensim issues #157, #336, #3089, #3376), and does hsw2v's quality hold there?

What it does:

1. Builds the corpus in a temporary folder (never in the repository, never committed): the
   text file given (plain or ``.gz``) repeated ``--copies`` times, cut at ``--max-words``.
   Many copies give enough jobs (10,000 words each) for 16 threads.
2. Trains, each run in a fresh subprocess (``systems.py``; single-threaded BLAS), hierarchical
   softmax, ``--epochs`` epochs, one seed: hsw2v (iterable mode, ``hsw2v.LineSentence``),
   gensim's ``corpus_file`` mode and gensim's iterable mode (``LineSentence``), at every worker
   count, and the C tool ``word2vec`` when ``--systems`` names ``w2v-c`` (``systems.py`` finds
   the binary, e.g. through ``W2V_C_BIN``; its time includes its vocabulary pass).
3. Scores each hsw2v run on analogies (gensim's ``questions-words.txt``, restrict_vocab
   30,000; ``evaluate.py``).
4. With ``--hot-study``: at the largest worker count (``--study-workers``), hsw2v skip-gram with other settings of
   the private rows (``HOT_NODES``: how many of the top tree nodes each job trains on a private
   copy, ``HOT_SYNC``: centre words between two syncs; ``hsw2v.word2vec``).

Runs go in order of importance (hsw2v, gensim corpus_file, the private-rows study, gensim
iterable, then CBOW when ``--modes`` names it) and stop when ``--budget`` seconds have passed;
a run not made is listed as such. After every run the tables are written again to ``OUT``:
``scaling.json`` (every run, the machine) and ``scaling.md`` (markdown tables).

Usage:
    python3 benchmarks/scaling_cores.py --corpus ../data/gcide.txt --out OUT \\
        [--copies 2] [--max-words 0] [--workers 1,2,4,8,16] [--modes sg] [--size 100] \\
        [--epochs 1] [--systems hsw2v,gensim-file,gensim-iter,w2v-c] [--hot-study] \\
        [--study-workers 8,16] [--budget 300]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import count_words, display_command, machine_info, source_commit  # noqa: E402

#: private-rows settings tried at 8+ workers (skip-gram); the first is hsw2v's default
HOT_VARIANTS = (
    {},
    {"HOT_NODES": 0},
    {"HOT_NODES": 255},
    {"HOT_SYNC": 1000},
    {"HOT_NODES": 255, "HOT_SYNC": 1000},
)


def build_corpus(src: str, dst: str, copies: int, max_words: int) -> int:
    """``src`` (text or gzip) written ``copies`` times to ``dst``, cut at ``max_words`` whole
    lines; returns the word count."""
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        data += b"\n"
    with open(dst, "wb") as out:
        for _ in range(copies):
            out.write(data)
    if max_words:
        cut = dst + ".cut"
        n = 0
        with open(dst, "rb") as fin, open(cut, "wb") as fout:
            for line in fin:
                if n >= max_words:
                    break
                fout.write(line)
                n += len(line.split())
        os.replace(cut, dst)
    return count_words(dst)


def plan(args) -> list[dict]:
    """Every run, most important first."""
    workers = [int(w) for w in args.workers.split(",")]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",")]
    study_workers = (
        [int(w) for w in args.study_workers.split(",")] if args.study_workers else [max(workers)]
    )
    runs = []
    for mode in modes:
        order = [s for s in systems if s not in ("gensim-iter", "w2v-c")]
        for system in order:
            runs += [dict(system=system, mode=mode, workers=w, constants={}) for w in workers]
            if system.startswith("hsw2v") and args.hot_study and mode == "sg":
                runs += [
                    dict(system=system, mode=mode, workers=w, constants=c, study=True)
                    for w in study_workers
                    for c in HOT_VARIANTS[1:]
                ]
        for late in ("gensim-iter", "w2v-c"):
            if late not in systems:
                continue
            runs += [dict(system=late, mode=mode, workers=w, constants={}) for w in workers]
    # the private-rows study after gensim's corpus_file mode: move it behind the main table
    main = [r for r in runs if not r.get("study")]
    study = [r for r in runs if r.get("study")]
    late = ("gensim-iter", "w2v-c")
    first_iter = next((i for i, r in enumerate(main) if r["system"] in late), len(main))
    return main[:first_iter] + study + main[first_iter:]


def run_one(run: dict, corpus: str, words: int, args, tmp: str, timeout: float) -> dict:
    from systems import get_system

    res = get_system(run["system"]).train(
        corpus,
        run["mode"],
        run["workers"],
        args.epochs,
        vector_size=args.size,
        seed=args.seed,
        out_dir=tmp,
        corpus_words=words,
        timeout=timeout,
        constants=run["constants"],
    )
    out = {
        **run,
        "words_per_s": res.words_per_second,
        "train_s": res.train_seconds,
        "total_s": res.total_seconds,
        "vocab_s": res.vocab_seconds,
        "cpu_s": res.extra.get("train_cpu_seconds"),
        "level": res.extra.get("level"),
        "vocab_size": res.vocab_size,
    }
    if run["system"].startswith("hsw2v") and not args.no_eval:
        from evaluate import evaluate

        t0 = time.perf_counter()
        out["analogy_pct"] = evaluate(res.vectors_path)["analogy_pct"]
        out["eval_s"] = time.perf_counter() - t0
    os.remove(res.vectors_path)
    return out


def label(run: dict) -> str:
    c = run.get("constants") or {}
    return run["system"] + ("" if not c else " " + ",".join(f"{k}={v}" for k, v in c.items()))


def render(data: dict) -> str:
    a = data["args"]
    lines = [
        f"# Scaling with cores ({data['date']})",
        "",
        f"`{data['command']}`",
        "",
        f"Corpus: {data['corpus_words']:,} words ({a['copies']} copies of the file given"
        f"{', cut at ' + format(a['max_words'], ',') + ' words' if a['max_words'] else ''}); "
        f"hierarchical softmax, vector_size {a['size']}, window 5, min_count 5, sample 1e-3, "
        f"{a['epochs']} epoch(s), seed {a['seed']}, one run per cell. Commit "
        f"{data.get('commit') or '?'}; hsw2v level {data.get('level') or '?'}.",
        f"Machine: {data['machine']['cpu_model']}, {data['machine'].get('physical_cores')} "
        f"physical cores, {data['machine']['logical_cpus']} logical CPUs, flags "
        f"{', '.join(data['machine'].get('cpu_flags') or [])}.",
        "",
    ]
    for mode in a["modes"].split(","):
        rows = [r for r in data["runs"] if r["mode"] == mode and "words_per_s" in r]
        if not rows:
            continue
        lines += [
            f"## {mode}",
            "",
            "| system | workers | words/s | x 1 worker | per worker | train s | CPU s | analogy % |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        base = {}
        for r in rows:
            if r["workers"] == 1:
                base[label(r)] = r["words_per_s"]
        for r in rows:
            b = base.get(label(r)) or base.get(r["system"])
            up = r["words_per_s"] / b if b else None
            ups = f"{up:.2f}" if up else "–"
            per = f"{up / r['workers']:.2f}" if up else "–"
            ana = f"{r['analogy_pct']:.2f}" if "analogy_pct" in r else "–"
            # the C tool times its vocabulary pass with its training: total seconds (marked *)
            secs = f"{r['train_s']:.2f}" if r.get("train_s") else f"{r.get('total_s') or 0:.2f}*"
            cpu = f"{r['cpu_s']:.1f}" if r.get("cpu_s") is not None else "–"
            lines.append(
                f"| {label(r)} | {r['workers']} | {r['words_per_s']:,.0f} | {ups} | {per} | "
                f"{secs} | {cpu} | {ana} |"
            )
        lines.append("")
    if any(not r.get("train_s") for r in data["runs"] if "words_per_s" in r):
        lines += ["\\* vocabulary pass and training together (not separable)", ""]
    missing = [r for r in data["runs"] if "words_per_s" not in r]
    if missing:
        lines += ["Not run or failed:", ""]
        lines += [
            f"- {r['mode']} {label(r)} workers={r['workers']}: {r.get('error', 'not run')}"
            for r in missing
        ]
        lines.append("")
    return "\n".join(lines)


def write(out: Path, data: dict) -> None:
    (out / "scaling.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / "scaling.md").write_text(render(data))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, help="text file (plain or .gz)")
    ap.add_argument("--out", required=True, help="folder for scaling.json and scaling.md")
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--max-words", type=int, default=0)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--modes", default="sg")
    ap.add_argument("--systems", default="hsw2v,gensim-file,gensim-iter")
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hot-study", action="store_true")
    ap.add_argument(
        "--study-workers", default="", help="worker counts of the study (default: the largest)"
    )
    ap.add_argument("--no-eval", action="store_true", help="do not score hsw2v's vectors")
    ap.add_argument("--budget", type=float, default=0, help="seconds for all runs (0: no limit)")
    ap.add_argument("--tmp", default=None, help="folder for the corpus copy (default: a temp dir)")
    args = ap.parse_args(argv)
    started = time.monotonic()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not os.path.exists(args.corpus):
        ap.error(f"--corpus {args.corpus}: no such file")
    tmp = tempfile.mkdtemp(prefix="scaling-", dir=args.tmp)
    try:
        corpus = os.path.join(tmp, "corpus.txt")
        words = build_corpus(args.corpus, corpus, args.copies, args.max_words)
        print(f"[scaling] corpus: {words:,} words", flush=True)
        data = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": display_command(sys.argv),
            "args": vars(args) | {"out": "OUT", "tmp": None},
            "corpus_words": words,
            "commit": source_commit(),
            "machine": machine_info(),
            "runs": plan(args),
        }
        for run in data["runs"]:
            left = args.budget - (time.monotonic() - started) if args.budget else None
            if left is not None and left < 5:
                run["error"] = "not run: time budget spent"
                continue
            try:
                run.update(run_one(run, corpus, words, args, tmp, left))
                data["level"] = data.get("level") or run.get("level")
                print(
                    f"[scaling] {run['mode']} {label(run)} workers={run['workers']}: "
                    f"{run['words_per_s']:,.0f} words/s"
                    + (f", analogy {run['analogy_pct']:.2f}%" if "analogy_pct" in run else ""),
                    flush=True,
                )
            except Exception as e:  # a failed or timed-out run is reported, the rest go on
                run["error"] = f"{type(e).__name__}: {str(e)[-300:]}"
                print(
                    f"[scaling] {label(run)} workers={run['workers']}: {run['error']}", flush=True
                )
            write(out, data)
        write(out, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
