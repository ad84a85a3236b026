#!/usr/bin/env bash
# One script for a fresh many-core x86-64 machine: build hsw2v, check its kernels at every CPU
# level the machine runs, compare the avx512 and avx2 levels at vector_size 300, and measure
# scaling with cores against gensim (benchmarks/scaling_cores.py). About 8 minutes in all.
#
# Run from the repository root:
#     OUT=/some/folder bash benchmarks/device/run_scaling.sh
# Inputs (all optional):
#     .whl/*.whl      wheels installed with pip --no-index --no-deps into /tmp/site (gensim and
#                     smart_open where the machine lacks them; no network needed)
#     .whl/word2vec-*.tar.gz  the PyPI sdist of `word2vec`: its word2vec.c is compiled here
#                     and the C tool joins the scaling table (last, as time allows)
#     CORPUS          the training text, plain or .gz (default: devdata/gcide.txt.gz, else
#                     devdata/gcide.txt); it is copied and repeated in /tmp, never written here
#     BUDGET          seconds for the whole script (default 470); BUILD_LIMIT: the build's (200)
#     COPIES          copies of the corpus for the scaling table (default 2)
#     WORKERS         worker counts (default 1,2,4,8,16, cut at the machine's CPUs)
#     TEST_LEVELS     CPU levels whose kernel twins are tested (default: every level the CPU runs)
#     INDEP           process counts of the independent-processes ceiling (default 1,NPROC)
# Results in $OUT (at most 8 files, flat): summary.txt (CPU, build info, every part's time and
# exit status), build.log, tests.txt, levels_d300.txt, floor.txt, scaling.md (the sg-hs, sg-ns
# and reference tables), scaling-json.tar.gz (every run).
set -u
: "${OUT:?set OUT to an output folder}"
mkdir -p "$OUT"
START=$(date +%s)
BUDGET=${BUDGET:-470}
COPIES=${COPIES:-2}
JOBS=$(nproc)
export PYTHONUNBUFFERED=1
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# part NAME SECONDS LOGFILE COMMAND...: run with a time limit, record time and exit status
part() {
    local name=$1 limit=$2 file=$3 t0 rc
    shift 3
    t0=$(date +%s)
    log "$name: start (limit ${limit}s)"
    timeout --kill-after=5 "$limit" "$@" >>"$file" 2>&1
    rc=$?
    log "$name: exit $rc after $(($(date +%s) - t0))s$([ $rc -eq 124 ] && echo ' (TIMED OUT)')"
    return $rc
}

log "host: $(uname -m), $JOBS CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512cd|avx512vl|avx512bw|avx512dq|avx512_vnni|avx512_bf16)$' | tr '\n' ' ')
log "cpu flags: $flags"
case " $flags " in *" avx512f "*) HAS512=1 ;; *) HAS512=0 ;; esac
log "AVX-512: $([ $HAS512 = 1 ] && echo yes || echo no)"
log "python: $(python3 --version 2>&1), $(command -v python3); cc: $(cc --version 2>/dev/null | head -1)"

# ---- 1. wheels (gensim, smart_open) ------------------------------------------------------
export PYTHONPATH="$PWD"
if ls .whl/*.whl >/dev/null 2>&1; then
    part wheels 60 "$OUT/build.log" python3 -m pip install -q --no-index --no-deps --no-compile \
        --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD"
fi
python3 -c 'import gensim; print("gensim", gensim.__version__)' >>"$SUMMARY" 2>&1 ||
    log "gensim is not importable: the gensim columns will fail"
# the C tool, compiled from the PyPI sdist of `word2vec` if one travels in .whl/ (with the
# flags that package's own build uses); without it the scaling table has no C-tool rows
SYSTEMS=hsw2v,gensim-file,gensim-iter
if ls .whl/word2vec-*.tar.gz >/dev/null 2>&1; then
    mkdir -p /tmp/w2vc && tar xzf "$(ls .whl/word2vec-*.tar.gz | head -1)" -C /tmp/w2vc &&
        src=$(find /tmp/w2vc -path '*includes/word2vec.c' | head -1) && [ -n "$src" ] &&
        gcc "$src" -o /tmp/w2vc/word2vec -lm -pthread -Ofast -Wall -march=native -funroll-loops \
            -Wno-unused-result >>"$OUT/build.log" 2>&1 &&
        export W2V_C_BIN=/tmp/w2vc/word2vec && SYSTEMS=$SYSTEMS,w2v-c
    log "C tool: ${W2V_C_BIN:-not built}"
else
    log "C tool: no word2vec sdist in .whl/, left out"
fi

# ---- 2. build in place with every core -----------------------------------------------------
part build "${BUILD_LIMIT:-200}" "$OUT/build.log" python3 setup.py build_ext --inplace -j "$JOBS" || {
    log "build failed: see build.log"
    tail -30 "$OUT/build.log"
    exit 1
}
python3 -m hsw2v info --build >>"$SUMMARY" 2>&1
LEVELS=$(python3 -c 'import hsw2v._cpu as c; f = c.cpu_features(); print(" ".join(l for l in c.compiled_levels() if not c.missing_features(l, f)))')
log "levels this CPU runs: $LEVELS"

# ---- 3. kernel twins and kernels at the levels this machine adds; dispatch once -------------
# (TEST_LEVELS: the levels to test, default every level the CPU runs)
NPAR=$((JOBS < 8 ? JOBS : 8))
XDIST=""
python3 -c 'import xdist' 2>/dev/null && [ "$NPAR" -gt 1 ] && XDIST="-n $NPAR"
TESTS=$(ls tests/test_kernel_twins.py tests/test_kernels.py tests/test_widths.py 2>/dev/null)
for level in ${TEST_LEVELS-$LEVELS}; do
    echo "===== HSW2V_CPU=$level" >>"$OUT/tests.txt"
    part "tests[$level]" 90 "$OUT/tests.txt" env HSW2V_CPU="$level" python3 -m pytest -q \
        -p no:cacheprovider $XDIST $TESTS
done
echo "===== dispatch" >>"$OUT/tests.txt"
part "tests[dispatch]" 60 "$OUT/tests.txt" python3 -m pytest -q -p no:cacheprovider $XDIST tests/test_dispatch.py
grep -E "passed|failed|error" "$OUT/tests.txt" | tee -a "$SUMMARY"

# ---- 4. the corpus -------------------------------------------------------------------------
CORPUS=${CORPUS:-}
if [ -z "$CORPUS" ]; then
    for c in devdata/gcide.txt.gz devdata/gcide.txt; do [ -f "$c" ] && CORPUS=$c && break; done
fi
if [ -z "$CORPUS" ] || [ ! -f "$CORPUS" ]; then
    log "no corpus (set CORPUS or put devdata/gcide.txt.gz in the tree): stopping here"
    exit 1
fi
SLICE=/tmp/levels_slice.txt
python3 - "$CORPUS" "$SLICE" <<'EOF'
import gzip, sys
src, dst = sys.argv[1:3]
n = 0
with (gzip.open if src.endswith(".gz") else open)(src, "rb") as f, open(dst, "wb") as out:
    for line in f:
        if n >= 1_000_000:
            break
        out.write(line)
        n += len(line.split())
print(f"slice: {n} words")
EOF
log "corpus: $CORPUS ($(du -h "$CORPUS" | cut -f1)); level comparison slice: $(wc -w <"$SLICE") words"

# ---- 5. avx512 against avx2 at vector_size 300 (one worker, sg and cbow) -------------------
if [ $HAS512 = 1 ] && [[ " $LEVELS " == *" avx512 "* ]]; then
    part levels_d300 100 "$OUT/levels_d300.txt" python3 benchmarks/ab_builds.py --corpus "$SLICE" \
        --build 'HSW2V_CPU=avx2 .' --build 'HSW2V_CPU=avx512 .' --modes sg,cbow --workers 1 \
        --repeats 3 --epochs 1 --size 300
    tail -4 "$OUT/levels_d300.txt" | tee -a "$SUMMARY"
else
    log "levels_d300: skipped (this CPU does not run the avx512 level)"
fi

# ---- 6. scaling with cores -----------------------------------------------------------------
# Three tables, each its own benchmarks/scaling_cores.py run with a share of the time left:
#   sg-hs: hsw2v corpus_file at every worker count, k independent one-worker processes at once
#          (the machine's own ceiling), the private-rows study at the most workers;
#   sg-ns: the same for negative sampling (gensim's default objective) and its private rows;
#   ref:   gensim and the C tool, skip-gram hierarchical softmax (as time allows).
MAXW=$JOBS
WORKERS=${WORKERS:-$(python3 -c "print(','.join(str(w) for w in (1, 2, 4, 8, 16) if w <= $MAXW))")}
INDEP=${INDEP:-1,$MAXW}
scaling() {  # NAME SHARE(percent of the time left) ARGS...
    local name=$1 share=$2 b
    shift 2
    b=$(( ($(left) - 30) * share / 100 ))
    if [ "$b" -gt 20 ]; then
        part "scaling[$name]" $((b + 40)) "$OUT/summary.txt" python3 benchmarks/scaling_cores.py \
            --corpus "$CORPUS" --out "$OUT/tables" --copies "$COPIES" --workers "$WORKERS" \
            --name "$name" --budget "$b" "$@"
    else
        log "scaling[$name]: skipped, only $(left)s left"
    fi
}
mkdir -p "$OUT/tables"
scaling sg-hs 45 --modes sg --systems hsw2v-file --independent "$INDEP" --hot-study
scaling sg-ns 75 --modes sg-ns --systems hsw2v-file --independent "$INDEP" --hot-study
scaling ref 90 --modes sg --systems "${SYSTEMS/hsw2v,/}" --no-eval
cat "$OUT"/tables/*.md >"$OUT/scaling.md" 2>/dev/null
tar czf "$OUT/scaling-json.tar.gz" -C "$OUT/tables" . && rm -rf "$OUT/tables"

# ---- 7. the FMA ceiling per width (machine half only), if time is left --------------------
if [ "$(left)" -gt 25 ]; then
    part floor $(($(left) - 5)) "$OUT/floor.txt" python3 benchmarks/compute_floor.py \
        --machine-only --widths 50,100,200,300
fi
log "done in $(($(date +%s) - START))s"
