"""What the index check of a tree costs (``hsw2v._tree_checks.check_tree_indices``), run by
``train()``, ``load()`` and the first ``infer_vector`` over a model's tree.

    PYTHONPATH=BUILD python3 benchmarks/probes/tree_check_cost.py [--vocab 42000] [--repeats 7]

Builds a Huffman tree over ``--vocab`` Zipf-like counts (seed 0) and prints the fastest of
``--repeats`` rounds of 20 checks, in milliseconds per check. Run it once per build, in
alternation, to compare two builds.
"""

import argparse
import timeit

import numpy as np

from hsw2v._tree_checks import check_tree_indices
from hsw2v.huffman import Tree

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--vocab", type=int, default=42000)
parser.add_argument("--repeats", type=int, default=7)
args = parser.parse_args()
counts = np.sort(np.random.default_rng(0).zipf(1.3, args.vocab) % 100000 + 5)[::-1]
tree = Tree.huffman(counts)
rounds = timeit.repeat(
    lambda: check_tree_indices(tree.codes, tree.points, tree.lengths, args.vocab),
    number=20,
    repeat=args.repeats,
)
print(f"V={args.vocab} L={tree.codes.shape[1]}: {min(rounds) / 20 * 1e3:.3f} ms per check")
