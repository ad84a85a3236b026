"""Pictures of training and of the Huffman tree (needs matplotlib: ``pip install matplotlib``).

* :func:`plot_training` draws the per-epoch loss, learning rate and throughput recorded by
  :class:`hsw2v.callbacks.TrainingHistory`.
* :func:`tree` draws the Huffman paths of chosen words: the inner nodes (rows of ``syn1``)
  each word's prediction walks through, from the root down, with the code bit taken at each
  step; nodes shared by several of the words are highlighted.

Both return a matplotlib ``Figure`` and, given ``path``, also save it there (the format comes
from the file name's extension).

Examples
--------
>>> import os, tempfile
>>> from hsw2v import Word2Vec
>>> model = Word2Vec([["a", "b", "b", "c", "c", "c", "d"]] * 20, min_count=1, workers=1,
...                  vector_size=8, epochs=1)
>>> path = os.path.join(tempfile.mkdtemp(), "tree.png")
>>> fig = tree(model, words=["a", "d"], path=path)
>>> os.path.getsize(path) > 0
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["huffman_paths", "plot_training", "tree"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt  # without a display, matplotlib picks Agg itself
    except ImportError:
        raise ImportError(
            "plotting needs matplotlib: pip install matplotlib (or, from a source checkout, pip install '.[plot]')"
        ) from None
    return plt


def _finish(fig: Any, path: Any) -> Any:
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def plot_training(history: Any, path: Any = None, title: str | None = None) -> Any:
    """Draw per-epoch loss, learning rate and words/s side by side; return the figure.

    Parameters
    ----------
    history
        A :class:`hsw2v.callbacks.TrainingHistory` (or anything with an ``epochs``
        list of :class:`hsw2v.callbacks.EpochRecord`).
    path
        Also save the figure to this file.
    title
        Figure title.

    Examples
    --------
    >>> from hsw2v.callbacks import EpochRecord, TrainingHistory
    >>> history = TrainingHistory([EpochRecord(1, 3.0, 0.02, 1.0, 10, 12, 10.0)])
    >>> [ax.get_title() for ax in plot_training(history).axes]
    ['training loss', 'learning rate (end of epoch)', 'throughput']
    """
    plt = _pyplot()
    records = list(history.epochs)
    epochs = [r.epoch for r in records]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    series = (
        ("training loss", "-log-likelihood", [r.loss for r in records]),
        ("learning rate (end of epoch)", "alpha", [r.alpha for r in records]),
        ("throughput", "effective words/s", [r.words_per_second for r in records]),
    )
    for ax, (label, ylabel, values) in zip(axes, series, strict=True):
        ax.set_title(label)
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        if any(not math.isnan(v) for v in values):
            ax.plot(epochs, values, marker="o")
        else:
            ax.text(0.5, 0.5, "not recorded", ha="center", va="center", transform=ax.transAxes)
        ax.grid(True, alpha=0.3)
        if epochs:
            ax.set_xticks(epochs if len(epochs) <= 12 else epochs[:: max(1, len(epochs) // 10)])
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _finish(fig, path)


def huffman_paths(model: Any, words: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """The Huffman path of each word: ``[(inner node, code bit), ...]`` from the root down.

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec(vector_size=4, min_count=1)
    >>> model.build_vocab([["a", "a", "a", "b", "b", "c"]])
    >>> huffman_paths(model, ["a", "c"])
    {'a': [(1, 1)], 'c': [(1, 0), (0, 0)]}
    """
    wv = model.wv
    paths = {}
    for word in words:
        if word not in wv:
            raise KeyError(f"word {word!r} not in vocabulary")
        points = [int(p) for p in wv.get_vecattr(word, "point")]
        codes = [int(c) for c in wv.get_vecattr(word, "code")]
        paths[word] = list(zip(points, codes, strict=True))
    return paths


def tree(model: Any, words: Sequence[str], path: Any = None, title: str | None = None) -> Any:
    """Draw the Huffman paths of ``words`` (which inner nodes they share); return the figure.

    Inner nodes are labelled with their ``syn1`` row; an edge's label is the code bit taken
    (``sigmoid(h . syn1[n])`` is the probability of bit 0). Nodes on the paths of more than
    one of the words are filled.

    Parameters
    ----------
    model
        A trained or vocabulary-built :class:`hsw2v.Word2Vec`.
    words
        Words to draw (each must be in the vocabulary).
    path
        Also save the figure to this file.
    title
        Figure title (default: a description of the tree).

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec(vector_size=4, min_count=1)
    >>> model.build_vocab([["a", "a", "a", "b", "b", "c"]])
    >>> fig = tree(model, ["a", "b", "c"])
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("n"))
    ['n0', 'n1']
    """
    plt = _pyplot()
    if not words:
        raise ValueError("give at least one word to draw")
    paths = huffman_paths(model, words)
    # The drawn subtree: node -> {bit: child}; leaves are ("leaf", word).
    children: dict[Any, dict[int, Any]] = {}
    users: dict[Any, int] = {}
    root = None
    for word, steps in paths.items():
        node = None
        for k, (point, bit) in enumerate(steps):
            here = ("inner", point)
            if k == 0:
                root = here
            users[here] = users.get(here, 0) + 1
            child = ("inner", steps[k + 1][0]) if k + 1 < len(steps) else ("leaf", word)
            children.setdefault(here, {})[bit] = child
            node = here
        if node is None:  # a one-word vocabulary: no decision to draw
            root = ("leaf", word)
    # Layout: leaves left to right in code order (bit 0 left), parents above their children.
    x: dict[Any, float] = {}
    y: dict[Any, float] = {}
    next_leaf = [0.0]

    def place(node: Any, depth: int) -> float:
        y[node] = -depth
        kids = children.get(node, {})
        if not kids:
            x[node] = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            xs = [place(kids[bit], depth + 1) for bit in sorted(kids)]
            x[node] = sum(xs) / len(xs)
        return x[node]

    place(root, 0)
    n_leaves = int(next_leaf[0])
    depth = int(-min(y.values()))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * n_leaves + 1), max(2.5, 0.9 * depth + 1.2)))
    for node, kids in children.items():
        for bit, child in kids.items():
            ax.plot([x[node], x[child]], [y[node], y[child]], color="0.45", zorder=1)
            ax.text(
                (x[node] + x[child]) / 2,
                (y[node] + y[child]) / 2,
                str(bit),
                fontsize=8,
                color="tab:blue",
                ha="center",
                va="center",
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
                zorder=3,
            )
    for node in x:
        kind, ident = node
        if kind == "inner":
            shared = users.get(node, 0) > 1
            ax.scatter(
                [x[node]],
                [y[node]],
                s=760,
                zorder=2,
                facecolor="tab:orange" if shared else "white",
                edgecolor="tab:orange",
                linewidth=1.5,
            )
            ax.text(x[node], y[node], f"n{ident}", ha="center", va="center", fontsize=7, zorder=4)
        else:
            ax.text(
                x[node],
                y[node],
                str(ident),
                ha="center",
                va="top",
                fontsize=9,
                zorder=4,
                bbox={"boxstyle": "round,pad=0.3", "fc": "#e8f0fe", "ec": "tab:blue"},
            )
    ax.set_xlim(-0.7, max(n_leaves - 0.3, 0.7))
    ax.set_ylim(-depth - 0.8, 0.6)
    ax.axis("off")
    vocab = len(model.wv)
    root_id = model.tree.root if vocab > 1 else 0
    ax.set_title(
        title
        or f"Huffman paths of {len(paths)} words (vocabulary {vocab:,}, root n{root_id});"
        " filled: shared nodes",
        fontsize=9,
    )
    fig.tight_layout()
    return _finish(fig, path)
