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
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    child_env,
    count_words,
    display_command,
    machine_info,
    source_commit,
)

#: private-rows settings tried at 8+ workers, per mode; the first is hsw2v's default
HOT_VARIANTS = {
    "sg": (
        {},
        {"HOT_MERGE": "mean"},
        {"HOT_MERGE": "sum"},
        {"HOT_NODES": 0},
        {"HOT_NODES": 255},
    ),
    "sg-ns": ({}, {"HOT_MERGE": "mean"}, {"HOT_WORDS": 0}, {"HOT_WORDS": 256}),
}

#: negative samples of a mode's objective: "sg"/"cbow" hierarchical softmax alone,
#: "sg-ns"/"cbow-ns" negative sampling alone (gensim's default objective, negative=5)
NEGATIVE = {"sg": 0, "cbow": 0, "sg-ns": 5, "cbow-ns": 5}


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
            variants = (
                json.loads(args.variants) if args.variants else HOT_VARIANTS.get(mode, ())[1:]
            )
            if system.startswith("hsw2v") and args.hot_study and variants:
                runs += [
                    dict(system=system, mode=mode, workers=w, constants=c, study=True)
                    for w in study_workers
                    for c in variants
                ]
        for late in ("gensim-iter", "w2v-c"):
            if late not in systems:
                continue
            runs += [dict(system=late, mode=mode, workers=w, constants={}) for w in workers]
    if args.seeds:
        runs = [dict(r, seed=int(s)) for r in runs for s in args.seeds.split(",")]
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
        run["mode"].split("-")[0],
        run["workers"],
        args.epochs,
        vector_size=args.size,
        seed=run.get("seed", args.seed),
        out_dir=tmp,
        corpus_words=words,
        timeout=timeout,
        constants=run["constants"],
        negative=NEGATIVE[run["mode"]],
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
    c = dict(run.get("constants") or {})
    if "seed" in run:
        c["seed"] = run["seed"]
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
        f"sg/cbow: hierarchical softmax alone, -ns: negative sampling alone (negative=5); "
        f"vector_size {a['size']}, window 5, min_count 5, sample 1e-3, "
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
        seeded = [r for r in rows if "seed" in r]
        if seeded:
            groups: dict = {}
            for r in seeded:
                c = r.get("constants") or {}
                key = (r["system"] + "".join(f" {k}={v}" for k, v in c.items()), r["workers"])
                groups.setdefault(key, []).append(r)
            lines += [
                "Means over seeds:",
                "",
                "| system | workers | seeds | words/s (median) | analogy % (mean) |",
                "|---|---:|---:|---:|---:|",
            ]
            for (name, w), rs in groups.items():
                ana = [r["analogy_pct"] for r in rs if "analogy_pct" in r]
                mean = f"{statistics.mean(ana):.2f}" if ana else "–"
                wps = statistics.median(r["words_per_s"] for r in rs)
                lines.append(f"| {name} | {w} | {len(rs)} | {wps:,.0f} | {mean} |")
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
    stem = data["args"].get("name") or "scaling"
    (out / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / f"{stem}.md").write_text(render(data) + render_independent(data))


_INDEPENDENT_CHILD = r"""
import json, os, sys, time
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["root"])
from hsw2v import Word2Vec
m = Word2Vec(vector_size=spec["size"], window=5, min_count=5, sample=1e-3, sg=spec["sg"],
             hs=0 if spec["negative"] else 1, negative=spec["negative"], workers=1,
             epochs=spec["epochs"], seed=spec["seed"])
m.build_vocab(corpus_file=spec["corpus"])
print("ready", flush=True)
while not os.path.exists(spec["go"]):
    time.sleep(0.005)
t, c = time.perf_counter(), time.process_time()
m.train(corpus_file=spec["corpus"], total_examples=m.corpus_count,
        total_words=m.corpus_total_words, epochs=spec["epochs"])
print(json.dumps({"train_s": time.perf_counter() - t, "cpu_s": time.process_time() - c,
                  "words": m.corpus_total_words * spec["epochs"]}), flush=True)
"""


def independent(corpus: str, mode: str, k: int, args, tmp: str, timeout: float | None) -> dict:
    """``k`` one-worker hsw2v processes training at once, each its own model on the same corpus
    (``corpus_file`` mode), started together once all have built their vocabulary.

    Nothing is shared between them but the machine (cores' clocks, the shared cache, memory),
    so their words/s against one process alone is the most that ``k`` threads of one model can
    reach: the machine's own scaling ceiling, which thread contention then lowers further."""
    import subprocess

    go = os.path.join(tmp, f"go-{k}-{time.monotonic_ns()}")
    spec = dict(
        root=str(Path(__file__).resolve().parents[1]),
        corpus=corpus,
        go=go,
        size=args.size,
        sg=int(mode.startswith("sg")),
        negative=NEGATIVE[mode],
        epochs=args.epochs,
        seed=args.seed,
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _INDEPENDENT_CHILD, json.dumps(spec)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for _ in range(k)
    ]
    try:
        for p in procs:
            if p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"an independent child failed: {p.stderr.read()[-400:]}")
        open(go, "w").close()
        rows = []
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            if p.returncode:
                raise RuntimeError(f"an independent child failed: {err[-400:]}")
            rows.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    per = sorted(r["words"] / r["train_s"] for r in rows)
    return {
        "mode": mode,
        "processes": k,
        "per_process_words_per_s": per,
        "aggregate_words_per_s": sum(r["words"] for r in rows) / max(r["train_s"] for r in rows),
    }


def render_independent(data: dict) -> str:
    rows = data.get("independent") or []
    if not rows:
        return ""
    lines = [
        "",
        "## The machine's own ceiling: k independent one-worker processes at once",
        "",
        "| mode | processes | per process words/s (min / median / max) | x one alone "
        "(median) | aggregate words/s | x one alone |",
        "|---|---:|---|---:|---:|---:|",
    ]
    alone = {
        r["mode"]: statistics.median(r["per_process_words_per_s"])
        for r in rows
        if r.get("processes") == 1 and "per_process_words_per_s" in r
    }
    for r in rows:
        if "per_process_words_per_s" not in r:
            lines.append(f"| {r['mode']} | {r['processes']} | {r.get('error', 'not run')} | | | |")
            continue
        per = r["per_process_words_per_s"]
        med = statistics.median(per)
        a = alone.get(r["mode"])
        lines.append(
            f"| {r['mode']} | {r['processes']} | {per[0]:,.0f} / {med:,.0f} / {per[-1]:,.0f} | "
            f"{med / a:.2f} | {r['aggregate_words_per_s']:,.0f} | "
            f"{r['aggregate_words_per_s'] / a:.2f} |"
            if a
            else f"| {r['mode']} | {r['processes']} | {per[0]:,.0f} / {med:,.0f} / {per[-1]:,.0f} | "
            f"– | {r['aggregate_words_per_s']:,.0f} | – |"
        )
    return "\n".join(lines) + "\n"


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
    ap.add_argument(
        "--seeds",
        default="",
        help="run every cell once per seed listed (e.g. 1,2,3), seeds inner; default --seed",
    )
    ap.add_argument(
        "--variants",
        default="",
        help="the private-rows study's settings as JSON, e.g. '[{\"HOT_SYNC\": 400}]' "
        "(default: HOT_VARIANTS of the mode)",
    )
    ap.add_argument("--hot-study", action="store_true")
    ap.add_argument(
        "--study-workers", default="", help="worker counts of the study (default: the largest)"
    )
    ap.add_argument("--no-eval", action="store_true", help="do not score hsw2v's vectors")
    ap.add_argument(
        "--independent",
        default="",
        help="also run k independent one-worker processes at once for each k listed (e.g. "
        "1,8,16; the machine's scaling ceiling), first mode of --modes, before the scaling runs",
    )
    ap.add_argument("--name", default="scaling", help="stem of the output files (NAME.md/json)")
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
            "independent": [],
        }
        ind_mode = args.modes.split(",")[0].strip()
        for k in [int(x) for x in args.independent.split(",") if x.strip()]:
            left = args.budget - (time.monotonic() - started) if args.budget else None
            try:
                if left is not None and left < 5:
                    raise RuntimeError("not run: time budget spent")
                row = independent(corpus, ind_mode, k, args, tmp, left)
                print(
                    f"[scaling] independent {ind_mode} x{k}: per process "
                    f"{statistics.median(row['per_process_words_per_s']):,.0f} words/s",
                    flush=True,
                )
            except Exception as e:
                row = {
                    "mode": ind_mode,
                    "processes": k,
                    "error": f"{type(e).__name__}: {str(e)[-300:]}",
                }
                print(f"[scaling] independent x{k}: {row['error']}", flush=True)
            data["independent"].append(row)
            write(out, data)
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
