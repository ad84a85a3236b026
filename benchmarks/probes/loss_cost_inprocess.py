"""compute_loss's cost end to end, measured inside one process: ``train()`` of a fresh model with
``compute_loss`` off and on, alternated (every other repeat "on" first), CPU seconds of all
threads (``time.process_time``). One process avoids the machine's per-process fast and slow
groups that ``benchmarks/loss_cost.py`` (a fresh process per run) sees; it gives up that
script's isolation, so quote both.

    PYTHONPATH=. python3 benchmarks/probes/loss_cost_inprocess.py CORPUS SG HS NEGATIVE WORKERS [REPEATS]
"""

import statistics
import sys
import time

from hsw2v import LineSentence, Word2Vec


def main() -> None:
    corpus = LineSentence(sys.argv[1])
    sg, hs, negative, workers = (int(a) for a in sys.argv[2:6])
    repeats = int(sys.argv[6]) if len(sys.argv) > 6 else 6
    settings = dict(vector_size=100, sg=sg, hs=hs, negative=negative, workers=workers, seed=1,
                    min_count=5)  # fmt: skip
    cpu = {False: [], True: []}
    for repeat in range(repeats):
        for loss in (False, True) if repeat % 2 == 0 else (True, False):
            model = Word2Vec(**settings)
            model.build_vocab(corpus)
            started = time.process_time()
            model.train(corpus, total_examples=model.corpus_count, epochs=1, compute_loss=loss)
            cpu[loss].append(time.process_time() - started)
    off, on = cpu[False], cpu[True]
    print(f"sg={sg} hs={hs} negative={negative} workers={workers}: "
          f"off {' '.join(f'{x:.2f}' for x in off)} | on {' '.join(f'{x:.2f}' for x in on)} | "
          f"on/off medians {statistics.median(on) / statistics.median(off):.3f}, "
          f"minima {min(on) / min(off):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
