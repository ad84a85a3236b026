"""Speed benchmark: hsw2v against gensim (iterable and corpus_file modes), the original C word2vec
tool and fastText, all with hierarchical softmax, on one corpus, scored by one judge.

    python3 benchmarks/bench_speed.py --corpus CORPUS.txt \\
        --systems hsw2v,gensim-iter,gensim-file,w2v-c,fasttext --modes sg,cbow --workers 1,2 \\
        --epochs 5 --repeats 3
    python3 benchmarks/bench_speed.py --corpus CORPUS.txt --quick      # a few minutes in all

If CORPUS.txt does not exist it is built with shared/bench/make_gcide_corpus.py (beside the
checkout). ``--quick`` uses the first ~1M words, 1 epoch, 2 repeats, and scores only the
median-speed run of each configuration; its output goes to a separate section and files
(``*-quick``) so that it never replaces the full results.

Method: every training is a fresh subprocess (``systems.py``), so peak RSS and threads belong to one
system; runs are alternated (for each repeat, for each (mode, workers), each system once in turn)
so that drift on a shared machine affects all systems alike. words/s = corpus words x epochs /
seconds, the same word count for every system. For gensim and hsw2v the seconds are the training
time (build_vocab is timed separately); the C tool and fastText cannot separate their vocabulary
pass, so their seconds are the total (marked in the report); for the C tool a vocabulary-only run
(``-save-vocab`` without ``-output``) gives an estimate of that part. Vectors are scored after all
the timed runs (``evaluate.py``): analogy accuracy on questions-words (restrict_vocab=30000) and
wordsim353 Spearman. ``compute_floor.py`` gives the machine's words/s ceiling for this corpus; each
system's fraction of it is reported.

Outputs (next to this file unless --out-dir): speed.png, results_speed.json and the report, a
section between ``<!-- bench_speed:start -->`` and ``<!-- bench_speed:end -->`` (replaced if
there, else appended) of ``history/YYYY-MM-DD.md``, the day's record (UTC); with --out-dir, of
RESULTS.md in that folder. The standing figure in benchmarks/RESULTS.md is one entry, updated
by hand, that links to the section.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compute_floor  # noqa: E402
from common import (  # noqa: E402
    BENCH_DIR,
    count_words,
    display_command,
    display_path,
    ensure_corpus,
    machine_info,
    machine_markdown,
    make_slice,
    source_commit,
)
from systems import DEFAULT_ALPHA, MODES, SYSTEMS, find_w2v_binary, get_system  # noqa: E402

NOT_SEPARABLE = ("w2v-c", "fasttext")
QUICK_WORDS = 1_000_000


def _sanitize(text: str) -> str:
    """Drop directories from absolute paths in free text (error messages) before it is saved."""
    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"]+/)+([^\s/:'\"]*)", r"\1", text or "")


def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", help="training text (built if missing); required unless --replot")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--modes", default="sg,cbow")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--epochs", type=int, default=None, help="default 5 (1 with --quick)")
    ap.add_argument("--repeats", type=int, default=None, help="default 3 (2 with --quick)")
    ap.add_argument(
        "--quick", action="store_true", help=f"first ~{QUICK_WORDS:,} words, epochs 1, repeats 2"
    )
    ap.add_argument(
        "--max-words",
        type=int,
        default=None,
        help="train on the first N words only (whole lines); --quick sets 1M",
    )
    ap.add_argument("--vector-size", type=int, default=100)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--sample", type=float, default=1e-3)
    ap.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_ALPHA,
        help="starting learning rate given to every system (gensim's default)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--negative",
        type=int,
        default=0,
        help="0: hierarchical softmax (hs=1, negative=0, the default); N > 0: negative "
        "sampling alone (hs=0, negative=N; hsw2v and gensim only)",
    )
    ap.add_argument(
        "--eval",
        choices=("all", "median", "none"),
        default=None,
        help="score every run (default), only the median-speed run of each "
        "configuration (default with --quick), or none",
    )
    ap.add_argument("--no-floor", action="store_true", help="skip compute_floor")
    ap.add_argument(
        "--no-c-vocab-estimate",
        action="store_true",
        help="skip the C tool's vocabulary-only timing runs",
    )
    ap.add_argument("--timeout", type=float, default=None, help="seconds per training run")
    ap.add_argument(
        "--out-dir",
        default=None,
        help="where the report (RESULTS.md), the PNG and the JSON go (default: benchmarks/, "
        "the report into benchmarks/history/YYYY-MM-DD.md)",
    )
    ap.add_argument(
        "--section",
        default=None,
        help="marker name of the report's section (default bench_speed, "
        "bench_speed-quick with --quick)",
    )
    ap.add_argument(
        "--keep-vectors",
        action="store_true",
        help="keep the temporary directory with the trained vectors",
    )
    ap.add_argument(
        "--replot",
        metavar="JSON",
        help="only draw the chart again from a results JSON this script wrote (into --out-dir)",
    )
    ap.add_argument(
        "--commit",
        help="with --replot: the commit the results were measured on, for a JSON without one",
    )
    args = ap.parse_args(argv)
    if not args.corpus and not args.replot:
        ap.error("--corpus is required (or --replot JSON)")
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in args.systems:
        if s not in SYSTEMS:
            ap.error(f"unknown system {s!r}; choose from {', '.join(SYSTEMS)}")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in args.modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r}")
    args.workers = [int(w) for w in args.workers.split(",") if w.strip()]
    if args.quick:
        args.epochs = args.epochs or 1
        args.repeats = args.repeats or 2
        args.max_words = args.max_words or QUICK_WORDS
        args.eval = args.eval or "median"
        args.section = args.section or "bench_speed-quick"
    args.epochs = args.epochs or 5
    args.repeats = args.repeats or 3
    args.eval = args.eval or "all"
    args.section = args.section or "bench_speed"
    return args


# --------------------------------------------------------------------------------------------
# running


def run_all(args, corpus: str, corpus_words: int, systems: list[str], tmp: str) -> list[dict]:
    runs: list[dict] = []
    configs = list(itertools.product(args.modes, args.workers))
    total = args.repeats * len(configs) * len(systems)
    i = 0
    for rep in range(args.repeats):
        for mode, workers in configs:
            for name in systems:
                i += 1
                rec = {"repeat": rep, "mode": mode, "workers": workers, "system": name, "order": i}
                kw = {"negative": args.negative} if args.negative else {}
                if name == "w2v-c":
                    kw["vocab_estimate"] = not args.no_c_vocab_estimate
                try:
                    res = get_system(name).train(
                        corpus,
                        mode,
                        workers,
                        args.epochs,
                        vector_size=args.vector_size,
                        window=args.window,
                        min_count=args.min_count,
                        sample=args.sample,
                        seed=args.seed,
                        alpha=args.alpha,
                        out_dir=tmp,
                        corpus_words=corpus_words,
                        timeout=args.timeout,
                        **kw,
                    )
                except Exception as e:  # record and go on with the others
                    rec["error"] = _sanitize(str(e))[-2000:]
                    print(
                        f"[{i}/{total}] repeat {rep + 1} {mode} workers={workers} {name}: "
                        f"FAILED: {rec['error'].splitlines()[-1] if rec['error'] else ''}",
                        flush=True,
                    )
                    runs.append(rec)
                    continue
                d = res.to_dict()
                d.pop("system"), d.pop("mode"), d.pop("workers")
                rec.update(d)
                if "train_seconds_est" in res.extra:
                    rec["words_per_second_train_est"] = res.words / res.extra["train_seconds_est"]
                runs.append(rec)
                vs = (
                    f"vocab {res.vocab_seconds:.2f}s, train {res.train_seconds:.2f}s"
                    if res.separable
                    else f"total {res.total_seconds:.2f}s (vocab included)"
                )
                print(
                    f"[{i}/{total}] repeat {rep + 1} {mode} workers={workers} {name}: "
                    f"{res.words_per_second / 1e3:,.0f}k words/s ({vs}), peak RSS "
                    f"{res.peak_rss_bytes / 2**20:,.0f} MiB",
                    flush=True,
                )
    return runs


def score_runs(runs: list[dict], how: str) -> None:
    if how == "none":
        return
    import evaluate

    if how == "median":
        chosen = set()
        for _, group in _groups(runs).items():
            ok = [r for r in group if "error" not in r]
            if ok:
                ok.sort(key=lambda r: r["words_per_second"])
                chosen.add(id(ok[(len(ok) - 1) // 2]))
        todo = [r for r in runs if id(r) in chosen]
    else:
        todo = [r for r in runs if "error" not in r]
    for n, r in enumerate(todo, 1):
        t0 = time.perf_counter()
        try:
            r["quality"] = evaluate.evaluate(r["vectors_path"])
        except Exception as e:
            r["quality_error"] = _sanitize(str(e))
            continue
        q = r["quality"]
        print(
            f"[score {n}/{len(todo)}] {r['mode']} workers={r['workers']} {r['system']}: "
            f"analogy {q['analogy_pct']:.2f}%, wordsim {q['wordsim_spearman']:.3f} "
            f"({time.perf_counter() - t0:.0f}s)",
            flush=True,
        )


def _groups(runs):
    g: dict = {}
    for r in runs:
        g.setdefault((r["mode"], r["workers"], r["system"]), []).append(r)
    return g


# --------------------------------------------------------------------------------------------
# summarising


def summarise(runs, args, systems, floor, physical_cores) -> dict:
    summary = {}
    for (mode, workers, name), group in _groups(runs).items():
        ok = [r for r in group if "error" not in r]
        s = {
            "mode": mode,
            "workers": workers,
            "system": name,
            "n_runs": len(ok),
            "n_failed": len(group) - len(ok),
            "separable": name not in NOT_SEPARABLE,
            "errors": [r["error"] for r in group if "error" in r][:1],
        }
        s["words_per_second_runs"] = [r["words_per_second"] for r in ok]
        s["words_per_second"] = _median(s["words_per_second_runs"])
        s["words_per_second_total"] = _median([r["words_per_second_total"] for r in ok])
        s["words_per_second_train_est"] = _median([r.get("words_per_second_train_est") for r in ok])
        s["vocab_seconds"] = _median([r.get("vocab_seconds") for r in ok])
        s["vocab_seconds_est"] = _median([r.get("extra", {}).get("vocab_seconds_est") for r in ok])
        s["peak_rss_bytes"] = _median([r.get("peak_rss_bytes") for r in ok])
        s["process_peak_rss_bytes"] = _median([r.get("process_peak_rss_bytes") for r in ok])
        s["peak_rss_over_base_bytes"] = _median(
            [
                r["peak_rss_bytes"] - r["base_rss_bytes"]
                for r in ok
                if r.get("peak_rss_bytes") and r.get("base_rss_bytes")
            ]
        )
        scored = [r["quality"] for r in ok if "quality" in r]
        s["n_scored"] = len(scored)
        s["analogy_pct"] = _mean([q["analogy_pct"] for q in scored])
        s["wordsim_spearman"] = _mean([q["wordsim_spearman"] for q in scored])
        s["vocab_size"] = _median([r.get("vocab_size") for r in ok])
        if floor:
            ceiling = compute_floor.floor_for(floor, mode, workers, physical_cores)
            s["ceiling_words_per_second"] = ceiling
            # the C tool's training-only estimate where there is one, else the primary figure
            basis = s["words_per_second_train_est"] or s["words_per_second"]
            s["fraction_of_ceiling"] = basis / ceiling if basis and ceiling else None
        summary[f"{mode}/{workers}/{name}"] = s
    return summary


def ratios(summary, args) -> list[dict]:
    out = []

    def get(mode, w, name, key="words_per_second"):
        s = summary.get(f"{mode}/{w}/{name}")
        return s.get(key) if s else None

    def ratio(a, b):
        return a / b if a and b else None

    for mode, w in itertools.product(args.modes, args.workers):
        g = {n: get(mode, w, n) for n in ("gensim-iter", "gensim-file")}
        g = {k: v for k, v in g.items() if v}
        best_name = max(g, key=g.get) if g else None
        h = get(mode, w, "hsw2v")
        h_total = get(mode, w, "hsw2v", "words_per_second_total")
        out.append(
            {
                "mode": mode,
                "workers": w,
                "gensim_best": best_name,
                "hsw2v_over_gensim_best": ratio(h, g.get(best_name)) if best_name else None,
                "hsw2v_over_gensim_best_total": ratio(
                    h_total, get(mode, w, best_name, "words_per_second_total")
                )
                if best_name
                else None,
                "hsw2v_over_w2v_c_total": ratio(
                    h_total, get(mode, w, "w2v-c", "words_per_second_total")
                ),
                "hsw2v_over_w2v_c_train_est": ratio(
                    h, get(mode, w, "w2v-c", "words_per_second_train_est")
                ),
                "hsw2v_over_fasttext_total": ratio(
                    h_total, get(mode, w, "fasttext", "words_per_second_total")
                ),
            }
        )
    return out


def corpus_file_ratios(summary, args) -> list[dict]:
    """hsw2v's corpus_file mode against its iterable mode and gensim's corpus_file mode."""
    out = []
    for mode, w in itertools.product(args.modes, args.workers):
        f = summary.get(f"{mode}/{w}/hsw2v-file", {}).get("words_per_second")
        if not f:
            continue
        h = summary.get(f"{mode}/{w}/hsw2v", {}).get("words_per_second")
        g = summary.get(f"{mode}/{w}/gensim-file", {}).get("words_per_second")
        out.append(
            {
                "mode": mode,
                "workers": w,
                "file_over_iterable": f / h if h else None,
                "file_over_gensim_file": f / g if g else None,
            }
        )
    return out


def scaling(summary, args, systems) -> list[dict]:
    """workers=max / workers=min per system and mode (training words/s)."""
    if len(args.workers) < 2:
        return []
    lo, hi = min(args.workers), max(args.workers)
    out = []
    for mode in args.modes:
        for name in systems:
            a = summary.get(f"{mode}/{lo}/{name}", {}).get("words_per_second")
            b = summary.get(f"{mode}/{hi}/{name}", {}).get("words_per_second")
            out.append(
                {
                    "mode": mode,
                    "system": name,
                    "lo": lo,
                    "hi": hi,
                    "ratio": b / a if a and b else None,
                }
            )
    return out


# --------------------------------------------------------------------------------------------
# reporting


def _f(x, fmt="{:,.0f}", none="–"):
    return none if x is None else fmt.format(x)


def _k(x):
    return _f(x / 1e3 if x else None, "{:,.0f}k")


def chart_title(data) -> str:
    """The chart's title: what was trained, and when and from which commit."""
    corpus, settings = data["corpus"], data["settings"]
    return (
        f"HS word2vec, {corpus['name']} ({corpus['words'] / 1e6:.2f}M words), "
        f"{settings['epochs']} epoch(s), d={settings['vector_size']}\n"
        f"measured {data['date']}, commit {data.get('commit') or 'unknown'}"
    )


def replot(json_path: str, png: Path, commit: str | None) -> None:
    """Draw the chart of a results JSON again (e.g. with a new title), without training."""
    data = json.loads(Path(json_path).read_text(encoding="utf-8"))
    if commit:
        data["commit"] = commit
    settings = data["settings"]
    args = argparse.Namespace(modes=settings["modes"], workers=settings["workers"])
    make_chart(data["summary"], args, settings["systems"], str(png), chart_title(data))


def make_chart(summary, args, systems, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(itertools.product(args.modes, args.workers))
    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(configs) * max(1, len(systems)) / 2.5), 4.8))
    width = 0.8 / max(1, len(systems))
    colors = {
        "hsw2v": "#d62728",
        "gensim-iter": "#1f77b4",
        "gensim-file": "#6baed6",
        "w2v-c": "#2ca02c",
        "fasttext": "#9467bd",
    }
    top = 1.0
    for j, name in enumerate(systems):
        xs, ys, lo, hi = [], [], [], []
        for i, (mode, w) in enumerate(configs):
            s = summary.get(f"{mode}/{w}/{name}")
            if not s or not s["words_per_second"]:
                continue
            runs = s["words_per_second_runs"]
            xs.append(i + (j - (len(systems) - 1) / 2) * width)
            ys.append(s["words_per_second"] / 1e3)
            lo.append((s["words_per_second"] - min(runs)) / 1e3)
            hi.append((max(runs) - s["words_per_second"]) / 1e3)
            top = max(top, max(runs) / 1e3)
        label = name + (" (incl. vocab)" if name in NOT_SEPARABLE else "")
        bars = ax.bar(
            xs,
            ys,
            width,
            label=label,
            color=colors.get(name),
            hatch="//" if name in NOT_SEPARABLE else None,
            edgecolor="white",
            yerr=[lo, hi],
            capsize=2,
            error_kw={"elinewidth": 0.8},
        )
        for b, y in zip(bars, ys, strict=True):
            ax.annotate(
                f"{y:,.0f}",
                (b.get_x() + b.get_width() / 2, y),
                ha="center",
                va="bottom",
                fontsize=7,
                xytext=(0, 2),
                textcoords="offset points",
            )
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"{m}, workers={w}" for m, w in configs])
    ax.set_ylabel("thousand words/s (median; bars: min–max of runs)")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(0, top * 1.08)
    ax.legend(
        fontsize=8,
        ncol=min(5, len(systems)),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.09),
        frameon=False,
    )
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render_markdown(data, args, systems, unavailable, png_name) -> str:
    summary, floor = data["summary"], data.get("floor")
    c = data["corpus"]
    lines = [
        "## Speed benchmark: hierarchical-softmax word2vec ("
        + ("quick run" if args.quick else "full corpus" if not c["sliced"] else "corpus slice")
        + ")",
        "",
        f"Command (paths relative to the repository root): `{data['command']}`",
        "",
        f"Date: {data['date']}",
        "",
        "Machine:",
        "",
        machine_markdown(data["machine"]),
        "",
        f"Corpus: `{c['name']}`, {c['words']:,} words"
        + (
            f" (its first lines, {c['words']:,} of {c['source_words']:,} words)"
            if c["sliced"]
            else ""
        )
        + (
            f", vocabulary {c['vocab_size']:,} words at min_count {args.min_count}"
            if c.get("vocab_size")
            else ""
        )
        + f"; {args.epochs} epoch(s), so {c['words'] * args.epochs:,} training words per run "
        "for every system.",
        "",
        f"Settings for every system: vector_size {args.vector_size}, window {args.window}, "
        f"min_count {args.min_count}, sample {args.sample:g}, alpha {args.alpha:g}, "
        f"hs={0 if args.negative else 1}, negative={args.negative}, seed {args.seed} (the C tool and this fastText take no seed). "
        f"{args.repeats} repeat(s), runs alternated (for each repeat, for each (mode, "
        "workers), each system once in turn), each run in a fresh subprocess with "
        "single-threaded BLAS.",
        "",
    ]
    if unavailable:
        lines += [
            "Not run: " + "; ".join(f"{k} ({_sanitize(v)})" for k, v in unavailable.items()),
            "",
        ]
    lines += [
        "### Throughput",
        "",
        "| mode | workers | system | words/s (median) | runs (words/s) | end-to-end words/s "
        "| vocab s | peak RSS MiB | analogy % | wordsim ρ | % of ceiling |",
        "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, w in itertools.product(args.modes, args.workers):
        for name in systems:
            s = summary.get(f"{mode}/{w}/{name}")
            if not s:
                continue
            if not s["n_runs"]:
                err = (s["errors"] or [""])[0].strip().splitlines()
                msg = (err[-1] if err else "?").replace("|", "\\|")
                lines.append(f"| {mode} | {w} | {name} | failed: {msg} | | | | | | | |")
                continue
            mark = "†" if name in NOT_SEPARABLE else ""
            vocab = (
                _f(s["vocab_seconds"], "{:.2f}")
                if s["vocab_seconds"] is not None
                else (_f(s["vocab_seconds_est"], "~{:.2f}‡") if s["vocab_seconds_est"] else "n/a")
            )
            lines.append(
                f"| {mode} | {w} | {name} | {_k(s['words_per_second'])}{mark} | "
                + ", ".join(_k(x) for x in s["words_per_second_runs"])
                + f" | {_k(s['words_per_second_total'])} | {vocab} | "
                f"{_f(s['peak_rss_bytes'] / 2**20 if s['peak_rss_bytes'] else None)}"
                f"{_f(s['peak_rss_over_base_bytes'] / 2**20 if s['peak_rss_over_base_bytes'] else None, ' (+{:,.0f})', '')} | "
                f"{_f(s['analogy_pct'], '{:.2f}')} | {_f(s['wordsim_spearman'], '{:.3f}')} | "
                f"{_f(100 * s['fraction_of_ceiling'] if s.get('fraction_of_ceiling') else None, '{:.0f}%')} |"
            )
    lines += [
        "",
        "words/s = corpus words × epochs / seconds. For hsw2v and gensim the seconds are "
        "`train()` only (`build_vocab()` is the *vocab s* column); "
        "† the C tool and fastText cannot time their vocabulary pass apart, so their words/s "
        "use the whole run (vocabulary + training; for the C tool the whole process, including "
        "writing the vectors). ‡ the C tool's vocabulary time estimated by a separate "
        "vocabulary-only run. *End-to-end* = vocabulary + training for every system. "
        "Peak RSS: the process's high-water mark right after training (Python systems: "
        "interpreter and imports included, and in brackets the growth over the resident size "
        "after the imports; the C tool: the whole process). "
        + (
            "Quality: not scored (--eval none). "
            if args.eval == "none"
            else f"Quality: {'mean over all runs' if args.eval == 'all' else 'the median-speed run'}"
            ", scored by gensim (`evaluate_word_analogies(questions-words.txt, "
            "restrict_vocab=30000)`, `evaluate_word_pairs(wordsim353.tsv)` Spearman). "
        )
        + "% of ceiling: see below (for the C "
        "tool its estimated training-only words/s).",
        "",
        "### Ratios",
        "",
        "| mode | workers | hsw2v / gensim-best (train) | gensim-best | hsw2v / gensim-best "
        "(end-to-end) | hsw2v / w2v-c (end-to-end) | hsw2v / w2v-c (train, est.) | "
        "hsw2v / fasttext (end-to-end) |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in data["ratios"]:
        lines.append(
            f"| {r['mode']} | {r['workers']} | {_f(r['hsw2v_over_gensim_best'], '{:.2f}×')} | "
            f"{r['gensim_best'] or '–'} | {_f(r['hsw2v_over_gensim_best_total'], '{:.2f}×')} | "
            f"{_f(r['hsw2v_over_w2v_c_total'], '{:.2f}×')} | "
            f"{_f(r['hsw2v_over_w2v_c_train_est'], '{:.2f}×')} | "
            f"{_f(r['hsw2v_over_fasttext_total'], '{:.2f}×')} |"
        )
    if data.get("corpus_file_ratios"):
        lines += [
            "",
            "hsw2v `corpus_file` mode (`hsw2v-file`), training words/s ratios:",
            "",
            "| mode | workers | hsw2v-file / hsw2v (iterable) | hsw2v-file / gensim-file |",
            "|---|---:|---:|---:|",
        ]
        for r in data["corpus_file_ratios"]:
            lines.append(
                f"| {r['mode']} | {r['workers']} | {_f(r['file_over_iterable'], '{:.2f}×')} | "
                f"{_f(r['file_over_gensim_file'], '{:.2f}×')} |"
            )
    if data["scaling"]:
        sc = data["scaling"]
        lo, hi = sc[0]["lo"], sc[0]["hi"]
        lines += [
            "",
            f"Scaling, words/s at workers={hi} / workers={lo} (training words/s):",
            "",
            "| mode | " + " | ".join(systems) + " |",
            "|---|" + "---:|" * len(systems),
        ]
        for mode in args.modes:
            row = {r["system"]: r["ratio"] for r in sc if r["mode"] == mode}
            lines.append(
                f"| {mode} | " + " | ".join(_f(row.get(n), "{:.2f}×") for n in systems) + " |"
            )
        h = [r for r in sc if r["system"] == "hsw2v" and r["ratio"]]
        if h:
            lines += [
                "",
                f"hsw2v workers={hi}/workers={lo}: "
                + ", ".join(f"{r['mode']} {r['ratio']:.2f}×" for r in h),
            ]
    if floor:
        lines += [
            "",
            "### Compute ceiling (`compute_floor.py`)",
            "",
            "```",
            compute_floor.describe(floor),
            "```",
            "",
            "Multiply-adds per kept word: sg Σ over its contexts of (3d × code length + d); "
            "cbow 3d × code length + 2d × contexts + d. The ceiling is the HS kernel's "
            "FMA/s (a compiled C loop on rows in L1, best over a few flag sets) divided by "
            "the multiply-adds per corpus word, × min(workers, physical cores). Real "
            "training also misses cache on the rows of a large vocabulary, so 100% is not "
            "reachable; a hand-tuned kernel could beat the compiled loop, so neither is it a "
            "hard bound.",
        ]
    lines += ["", f"![words/s per system]({png_name})", ""]
    return "\n".join(lines)


def write_section(path: Path, name: str, body: str) -> None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pat = re.compile(re.escape(start) + r".*?" + re.escape(end) + r"\n?", re.S)
    if pat.search(text):
        text = pat.sub(lambda _: block, text, count=1)
    else:
        if not text:  # a new day's record, or a scratch report
            dated = path.parent.name == "history"
            text = f"# Benchmark record: {path.stem}\n\n" if dated else "# Benchmark results\n\n"
        elif not text.endswith("\n"):
            text += "\n"
        text += ("\n" if not text.endswith("\n\n") else "") + block
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    raw_argv = list(sys.argv if argv is None else [sys.argv[0], *argv])
    args = parse_args(argv)
    out_dir = Path(args.out_dir) if args.out_dir else BENCH_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    # output files follow the section: bench_speed -> speed.png, bench_speed-quick ->
    # speed-quick.png, bench_speed_fasttext -> speed-fasttext.png
    suffix = args.section.removeprefix("bench_speed").lstrip("-_")
    suffix = f"-{suffix}" if suffix else ""
    png = out_dir / f"speed{suffix}.png"
    json_path = out_dir / f"results_speed{suffix}.json"
    if args.out_dir:
        md_path = out_dir / "RESULTS.md"
    else:  # the day's record; benchmarks/RESULTS.md holds one entry per standing figure
        md_path = BENCH_DIR / "history" / f"{_dt.datetime.now(_dt.UTC):%Y-%m-%d}.md"
    if args.replot:
        replot(args.replot, png, args.commit)
        print(f"wrote {png}", flush=True)
        return 0

    source = ensure_corpus(args.corpus)
    tmp = tempfile.mkdtemp(prefix="bench_speed-")
    try:
        corpus, source_words = str(source), None
        if args.max_words:
            corpus = os.path.join(tmp, "corpus-slice.txt")
            words = make_slice(source, corpus, args.max_words)
            source_words = count_words(source)
        else:
            words = count_words(source)
        print(
            f"corpus {display_path(source)}: {words:,} words"
            + (f" (slice of {source_words:,})" if source_words else ""),
            flush=True,
        )

        unavailable, systems = {}, []
        for name in args.systems:
            ok, why = get_system(name).available()
            (systems.append(name) if ok else unavailable.__setitem__(name, why))
        for k, v in unavailable.items():
            print(f"skipping {k}: {v}", flush=True)
        if "w2v-c" in systems:
            print(f"C word2vec tool: {find_w2v_binary()}", flush=True)

        info = machine_info()
        floor = None
        if not args.no_floor:
            try:
                floor = compute_floor.compute_floor(
                    corpus, args.vector_size, args.window, args.min_count, args.sample
                )
                print(compute_floor.describe(floor), flush=True)
            except Exception as e:
                print(f"compute floor unavailable: {e}", flush=True)

        t0 = time.time()
        runs = run_all(args, corpus, words, systems, tmp)
        print(f"timed runs done in {time.time() - t0:.0f}s", flush=True)
        score_runs(runs, args.eval)

        summary = summarise(runs, args, systems, floor, info.get("physical_cores"))
        data = {
            "command": display_command(raw_argv),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": source_commit(),
            "machine": info,
            "corpus": {
                "name": os.path.basename(str(source)),
                "words": words,
                "source_words": source_words or words,
                "sliced": bool(args.max_words),
                "vocab_size": floor["corpus"]["vocab_size"] if floor else None,
            },
            "settings": {
                k: getattr(args, k)
                for k in (
                    "systems",
                    "modes",
                    "workers",
                    "epochs",
                    "repeats",
                    "quick",
                    "max_words",
                    "vector_size",
                    "window",
                    "min_count",
                    "sample",
                    "alpha",
                    "seed",
                    "eval",
                )
            },
            "unavailable": {k: _sanitize(v) for k, v in unavailable.items()},
            "floor": floor,
            "summary": summary,
            "ratios": ratios(summary, args),
            "corpus_file_ratios": corpus_file_ratios(summary, args),
            "scaling": scaling(summary, args, systems),
            "runs": [{k: v for k, v in r.items() if k != "vectors_path"} for r in runs],
        }
        json_path.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        try:
            make_chart(summary, args, systems, str(png), chart_title(data))
        except Exception as e:  # matplotlib missing: the rest still stands
            print(f"chart not drawn: {e}", flush=True)
        body = render_markdown(
            data, args, systems, unavailable, os.path.relpath(png, md_path.parent)
        )
        write_section(md_path, args.section, body)
        print(f"wrote {md_path}, {png}, {json_path}", flush=True)
        print(body)
    finally:
        if args.keep_vectors:
            print(f"vectors kept in {tmp}", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
