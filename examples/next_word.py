"""A small next-word model whose output layer is chosen by a flag: the full softmax,
PyTorch's adaptive softmax, or hsw2v's hierarchical softmax.

    python3 examples/next_word.py --layer hs                  # the bundled demo corpus
    python3 examples/next_word.py --layer adaptive corpus.txt # your own text

The model reads the previous ``--context`` words, concatenates their embeddings, maps them
to a hidden vector and predicts the next word. Only the output layer changes with
``--layer``; each returns the mean negative log-likelihood of a batch, so the training loop
is the same for the three. At the end it prints the validation perplexity and the model's
most probable next words after a few contexts (``predict``/``topk``).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import math
import re

import torch
import torch.nn.functional as F
from torch import nn

from hsw2v.torch import HierarchicalSoftmaxLoss


def words(path: str) -> list[str]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return re.findall(r"[a-z']+", f.read().lower())


def output_layer(kind: str, dim: int, counts: list[int]) -> nn.Module:
    """The one line that differs: each takes (hidden, target) and returns (output, loss),
    except the full softmax, which is a Linear layer scored by cross_entropy."""
    n = len(counts)
    if kind == "full":
        return nn.Linear(dim, n)
    if kind == "adaptive":
        cutoffs = [c for c in (2000, 10000) if c < n] or [n // 4]
        return nn.AdaptiveLogSoftmaxWithLoss(dim, n, cutoffs)
    return HierarchicalSoftmaxLoss(dim, n, counts=counts)  # Huffman tree of the counts


class NextWord(nn.Module):
    def __init__(self, kind: str, counts: list[int], context: int, dim: int = 128):
        super().__init__()
        self.kind = kind
        self.embed = nn.Embedding(len(counts), 64)
        self.hidden = nn.Linear(64 * context, dim)
        self.out = output_layer(kind, dim, counts)

    def encode(self, x):
        return F.relu(self.hidden(self.embed(x).flatten(1)))

    def loss(self, x, y):
        h = self.encode(x)
        return F.cross_entropy(self.out(h), y) if self.kind == "full" else self.out(h, y).loss

    def predict(self, x, k: int):
        h = self.encode(x)
        if self.kind == "full":
            return torch.topk(self.out(h), k).indices
        if self.kind == "adaptive":
            return torch.topk(self.out.log_prob(h), k).indices
        return self.out.topk(h, k).indices  # exact best-first search of the tree


def main():
    from hsw2v.datasets import demo_corpus_path

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", nargs="?", default=None, help="text file (default: demo corpus)")
    p.add_argument("--layer", choices=("full", "adaptive", "hs"), default="hs")
    p.add_argument("--context", type=int, default=4)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--max-words", type=int, default=None, help="read only this many words")
    args = p.parse_args()
    tokens = words(args.corpus or demo_corpus_path())[: args.max_words]
    vocab = [w for w, _ in collections.Counter(tokens).most_common()]
    index = {w: i for i, w in enumerate(vocab)}
    ids = torch.tensor([index[w] for w in tokens])
    windows = ids.unfold(0, args.context + 1, 1)
    split = int(len(windows) * 0.95)
    train, valid = windows[:split], windows[split:]
    counts = torch.bincount(train[:, -1], minlength=len(vocab)).add(1).tolist()
    torch.manual_seed(0)
    model = NextWord(args.layer, counts, args.context)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(args.steps):
        batch = train[torch.randint(0, len(train), (args.batch,))]
        loss = model.loss(batch[:, :-1], batch[:, -1])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.3f}")
    with torch.no_grad():
        nll = sum(model.loss(v[:, :-1], v[:, -1]).item() * len(v)
                  for v in valid.split(4096)) / len(valid)
        print(f"{args.layer}: validation perplexity {math.exp(nll):.1f} after {args.steps} steps")
        for row in valid[:3]:
            guess = model.predict(row[None, :-1], 5)[0]
            print(" ".join(vocab[i] for i in row[:-1]), "->", [vocab[i] for i in guess])


if __name__ == "__main__":
    main()
