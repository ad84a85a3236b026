"""compute_loss's cost in the kernel alone: one 300k-word job (Trainer.train_job) trained
with and without the loss tally, alternated ``ROUNDS`` times (default 9) in one process. The
thread's CPU time of each call (the machine may be loaded: wall time would count other
processes' turns); prints the minimum and the median of each and their ratios.

    python benchmarks/probes/loss_tally_job.py CORPUS SG HS NEGATIVE [ROUNDS]
"""

import statistics
import sys
import time

from hsw2v import Word2Vec
from hsw2v._kernels import _inner
from hsw2v.running._make_trainer import make_trainer

path = sys.argv[1]
sg, hs, neg = (int(a) for a in sys.argv[2:5])
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 9
with open(path, encoding="utf-8") as f:
    sents = [line.split() for line in f.read().splitlines()[:20000]]
m = Word2Vec(sg=sg, hs=hs, negative=neg, vector_size=100, window=5, workers=1, seed=1)
m.build_vocab(sents)
ids, ends, raw = _inner.encode_sentences(sents, m.wv.key_to_index)
tr = {}
for cl in (False, True):
    m.compute_loss = cl
    tr[cl] = make_trainer(m)
res = {False: [], True: []}
for _ in range(rounds):
    for cl in (False, True):
        t = time.thread_time()
        k, loss = tr[cl].train_job(ids, ends, 0.001, 0.001, 7)
        res[cl].append(time.thread_time() - t)
lo = {cl: min(v) * 1e3 for cl, v in res.items()}
med = {cl: statistics.median(v) * 1e3 for cl, v in res.items()}
pairs = sorted(b / a for a, b in zip(res[False], res[True], strict=True))
print(
    f"sg={sg} hs={hs} neg={neg} words={len(ids)}: CPU ms min off {lo[False]:.1f} on "
    f"{lo[True]:.1f} ratio {lo[True] / lo[False]:.3f}; median off {med[False]:.1f} on "
    f"{med[True]:.1f} ratio {med[True] / med[False]:.3f}; pair ratios "
    f"{pairs[0]:.3f}-{pairs[-1]:.3f}; loss {loss:.1f}"
)
