"""compute_loss's cost in the kernel alone: one 300k-word job (Trainer.train_job) trained
with and without the loss tally, alternated 9 times in one process, min wall time of each.

    python benchmarks/probes/loss_tally_job.py CORPUS SG HS NEGATIVE
"""

import sys
import time

from hsw2v import Word2Vec, _inner
from hsw2v.running._make_trainer import make_trainer

path = sys.argv[1]
sg, hs, neg = (int(a) for a in sys.argv[2:5])
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
for _ in range(9):
    for cl in (False, True):
        t = time.perf_counter()
        k, loss = tr[cl].train_job(ids, ends, 0.001, 0.001, 7)
        res[cl].append(time.perf_counter() - t)
print(
    f"sg={sg} hs={hs} neg={neg} words={len(ids)}: min off {min(res[False]) * 1e3:.1f} ms on {min(res[True]) * 1e3:.1f} ms ratio {min(res[True]) / min(res[False]):.3f}; loss {loss:.1f}"
)
