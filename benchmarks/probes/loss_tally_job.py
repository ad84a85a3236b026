"""compute_loss's cost in the kernel alone: one 300k-word job (Trainer.train_job) trained
with and without the loss tally, alternated ``ROUNDS`` times (default 9) in one process.
The CPU time of each call (the machine may be loaded: wall time would count other
processes' turns); prints the minimum and the median of each and their ratios.

With ``WORKERS`` > 1 (default 1), that many threads train one such job each at the same
time over the same weights, as training with that many workers does (the Trainer made for
that many threads: private hot rows), and each call's time is the process's CPU time of the
whole batch; this shows whether anything in the loss path is shared between threads.

    python benchmarks/probes/loss_tally_job.py CORPUS SG HS NEGATIVE [ROUNDS] [WORKERS]
"""

import statistics
import sys
import threading
import time

from hsw2v import Word2Vec
from hsw2v._kernels import _inner
from hsw2v.running.trainer import make_trainer

path = sys.argv[1]
sg, hs, neg = (int(a) for a in sys.argv[2:5])
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 9
workers = int(sys.argv[6]) if len(sys.argv) > 6 else 1
with open(path, encoding="utf-8") as f:
    sents = [line.split() for line in f.read().splitlines()[:20000]]
m = Word2Vec(sg=sg, hs=hs, negative=neg, vector_size=100, window=5, workers=workers, seed=1)
m.build_vocab(sents)
ids, ends, raw = _inner.encode_sentences(sents, m.wv.key_to_index)
tr = {}
for cl in (False, True):
    m.compute_loss = cl
    tr[cl] = make_trainer(m, workers)


def batch(trainer):
    """``workers`` jobs at once, one per thread (seeds 7, 8, ...); the last one's loss."""
    out = [None] * workers
    start = threading.Barrier(workers)

    def one(k):
        start.wait()
        out[k] = trainer.train_job(ids, ends, 0.001, 0.001, 7 + k)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out[-1]


res = {False: [], True: []}
for _ in range(rounds):
    for cl in (False, True):
        if workers == 1:
            t = time.thread_time()
            k, loss = tr[cl].train_job(ids, ends, 0.001, 0.001, 7)
            res[cl].append(time.thread_time() - t)
        else:
            t = time.process_time()
            k, loss = batch(tr[cl])
            res[cl].append(time.process_time() - t)
lo = {cl: min(v) * 1e3 for cl, v in res.items()}
med = {cl: statistics.median(v) * 1e3 for cl, v in res.items()}
pairs = sorted(b / a for a, b in zip(res[False], res[True], strict=True))
print(
    f"sg={sg} hs={hs} neg={neg} words={len(ids)} workers={workers}: CPU ms min off "
    f"{lo[False]:.1f} on {lo[True]:.1f} ratio {lo[True] / lo[False]:.3f}; median off "
    f"{med[False]:.1f} on {med[True]:.1f} ratio {med[True] / med[False]:.3f}; pair ratios "
    f"{pairs[0]:.3f}-{pairs[-1]:.3f}; loss {loss:.1f}"
)
