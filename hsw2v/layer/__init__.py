"""Hierarchical softmax as a standalone output layer over many classes.

``P(y | h) = prod_j sigmoid(s_j h . w_{n_j})`` over the inner nodes ``n_j`` on the path from
the root to leaf ``y``, with ``s_j = +1`` for code bit 0 and ``-1`` for bit 1 (Morin & Bengio,
"Hierarchical Probabilistic Neural Network Language Model", AISTATS 2005; Mikolov et al. 2013,
whose tree conventions hsw2v's Word2Vec shares). Scoring one class costs one dot product per
node on its path, ``O(log V)`` for a balanced or Huffman tree, instead of the ``O(V)`` of a
full softmax.

The whole distribution costs ``O(V d)`` for the node scores (one matrix product over the
``V - 1`` inner nodes) plus ``O(V)`` for one top-down pass that gives every node its path
log-probability, with ``O(V)`` scratch per row: a million classes need a few megabytes
beyond the weights and the output. The top ``k`` classes come from a best-first search that
never scores most of the tree.

:meth:`HierarchicalSoftmax.fit` trains a linear classifier ``h = x W_in`` with this loss, as
fastText's supervised mode does (Joulin et al., "Bag of Tricks for Efficient Text
Classification", 2017), on the threads and nogil kernels Word2Vec uses.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from hsw2v._kernels._layer import fill_log_proba, path_batch
from hsw2v.huffman import HuffmanTree, build_huffman_tree
from hsw2v.layer._args import check_seed as _seed
from hsw2v.layer._args import checked_features
from hsw2v.layer._args import positive_int as _positive_int
from hsw2v.layer._files import LayerFiles
from hsw2v.layer._fit import LayerFitting
from hsw2v.layer._root import WideRoot, root_gradient, root_log_softmax
from hsw2v.layer._search import best_first_topk
from hsw2v.running.params import VECTOR_SIZE_MAX
from hsw2v.scoring import child_table
from hsw2v.trees import balanced_tree, check_tree, top_down_order

__all__ = ["Gradient", "HierarchicalSoftmax"]

_SCORE_LIMIT = 1e4  # node scores are clipped here when float32 overflowed (_scores_float64)
_SCORE_BUDGET = 1 << 22  # float32 node scores per log_proba chunk (16 MB, and as much again
# for their log-sigmoids)
_CONSTRUCTORS = (
    "HierarchicalSoftmax.from_counts(counts, dim), HierarchicalSoftmax.balanced(n_classes, "
    "dim) or HierarchicalSoftmax.from_paths(codes, points, dim)"
)


class Gradient(NamedTuple):
    """What :meth:`HierarchicalSoftmax.backward` returns with ``nodes=True``: the gradient of
    ``L = -sum_i log P(y_i | h_i)`` for the hidden vectors and for the inner-node rows the
    batch touched (only those: a batch of ``B`` paths touches at most ``B L`` of the
    ``V - 1`` rows)."""

    hidden: np.ndarray
    """``dL/dH``, float32 ``B x dim``."""
    nodes: np.ndarray
    """The touched inner nodes (rows of ``weights``), int64, sorted, unique."""
    rows: np.ndarray
    """``dL/dweights[nodes]``, float32 ``len(nodes) x dim``; every other row's gradient is 0."""
    intercept: np.ndarray | None = None
    """``dL/dintercept[nodes]``, float32 ``len(nodes)``, for a layer with a per-node
    intercept (None without one)."""
    root: np.ndarray | None = None
    """``dL/droot_weights``, float32 ``K x dim`` (dense: every child of a wide root gets a
    gradient), for a layer with ``root_width`` (None without)."""
    root_intercept: np.ndarray | None = None
    """``dL/droot_intercept``, float32 ``K``, for a wide root with an intercept."""

    def dense_weights(self, n_inner: int) -> np.ndarray:
        """The full ``n_inner x dim`` gradient of ``weights`` (zeros off the touched rows)."""
        full = np.zeros((n_inner, self.rows.shape[1]), dtype=np.float32)
        full[self.nodes] = self.rows
        return full

    def sparse_weights(self, n_inner: int):
        """The same as a ``scipy.sparse.csr_array`` of shape ``n_inner x dim`` (only the
        touched rows stored)."""
        import scipy.sparse as sp

        dim = self.rows.shape[1]
        indptr = np.zeros(n_inner + 1, dtype=np.int64)
        np.add.at(indptr, self.nodes + 1, dim)
        np.cumsum(indptr, out=indptr)
        indices = np.tile(np.arange(dim, dtype=np.int64), len(self.nodes))
        return sp.csr_array((self.rows.ravel(), indices, indptr), shape=(n_inner, dim))


def _own_tree_arrays(tree) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of a tree's ``codes``, ``points`` and ``lengths`` that the layer owns (C order,
    the kernels' dtypes): a caller's array, or a view of a buffer the caller still writes,
    is never kept, nor its flags changed. The tree is small (classes x path length)."""
    return (
        np.array(tree.codes, dtype=np.uint8, order="C", copy=True),
        np.array(tree.points, dtype=np.int32, order="C", copy=True),
        np.array(tree.lengths, dtype=np.int32, order="C", copy=True),
    )


class HierarchicalSoftmax(LayerFitting, LayerFiles):
    """An output layer of ``n_classes`` classes over ``dim``-dimensional hidden vectors.

    Build it with :meth:`from_counts` (Huffman tree: frequent classes get short paths),
    :meth:`balanced` or :meth:`from_paths` (your own tree). ``weights`` is the
    ``(n_classes - 1) x dim`` float32 matrix of inner-node vectors, zero at the start as in
    word2vec and fastText; ``input_weights`` is the ``m x dim`` input matrix once :meth:`fit`
    has run (None before). With ``intercept=True`` each inner node also has a bias,
    ``intercept`` (float32, ``n_classes - 1``, zero at the start; None without), so that
    node ``n`` scores ``h . weights[n] + intercept[n]``: trained by :meth:`fit` and
    :meth:`update`, used by every scoring method, saved with the layer.

    With ``root_width=K`` the tree's top levels become one softmax over ``K`` children
    (:mod:`hsw2v.layer._root`: the first ``K - 1`` inner nodes, breadth first, are replaced
    by ``root_weights``, K x dim, and with an intercept ``root_intercept``; on a Huffman or
    k-means tree the most frequent classes become children of the root): more accurate than
    the binary root, at ``K`` more dot products per training example. ``root_children``,
    ``root_slot``: the frontier and each class's child of the root. ``K`` is capped at
    ``n_classes``, where the layer is a flat softmax.

    Examples
    --------
    >>> import numpy as np
    >>> layer = HierarchicalSoftmax.from_counts([50, 20, 20, 10], dim=3)
    >>> layer.n_classes, layer.dim, layer.weights.shape
    (4, 3, (3, 3))
    >>> layer.proba(np.ones((1, 3))).round(3).tolist()  # zero weights: 2^-path length
    [[0.5, 0.25, 0.125, 0.125]]

    Methods on hidden vectors ``H`` (``B x dim``): :meth:`log_prob`, :meth:`log_proba`,
    :meth:`proba`, :meth:`topk`, :meth:`backward`, :meth:`update`. Methods on features ``X``
    (``n x m``): :meth:`fit`, :meth:`transform`. For scikit-learn's ``predict(X)``,
    ``predict_proba(X)`` and labels of any kind, use
    :class:`hsw2v.classifier.HierarchicalSoftmaxClassifier`.
    """

    def __init__(
        self,
        tree: HuffmanTree,
        dim: int,
        seed: int = 1,
        *,
        intercept: bool = False,
        root_width: int | None = None,
        _trusted: bool = False,
    ):
        if not all(hasattr(tree, a) for a in ("codes", "points", "lengths")):
            raise TypeError(
                f"HierarchicalSoftmax(tree, dim) takes a tree (hsw2v.huffman.HuffmanTree), got "
                f"{type(tree).__name__} {tree!r}: to build a layer from numbers use "
                f"{_CONSTRUCTORS}"
            )
        dim = _positive_int(dim, "dim", VECTOR_SIZE_MAX)
        seed = _seed(seed)
        codes, points, lengths = _own_tree_arrays(tree)
        if _trusted:  # built here, correct by construction; the child table still checks it
            self.root = int(points[0, 0])
            self.children = child_table(codes, points, lengths, root=self.root)
            self.order = top_down_order(self.children, self.root)
        else:
            self.children, self.root, self.order = check_tree(codes, points, lengths)
        self.tree = HuffmanTree(codes=codes, points=points, lengths=lengths)
        self.n_classes = len(lengths)
        self.dim = dim
        self.seed = int(seed)
        self.weights = np.zeros((self.n_classes - 1, dim), dtype=np.float32)
        if not isinstance(intercept, (bool, np.bool_)):
            raise ValueError(f"intercept must be True or False, got {intercept!r}")
        self.intercept = np.zeros(self.n_classes - 1, dtype=np.float32) if intercept else None
        self._wide: WideRoot | None = None
        self.root_weights: np.ndarray | None = None
        self.root_intercept: np.ndarray | None = None
        if root_width is not None:
            width = _positive_int(root_width, "root_width")
            if width < 2:
                raise ValueError(f"root_width must be at least 2 (or None), got {root_width}")
            self._wide = WideRoot(self.tree, self.children, self.order, width)
            self.root_weights = np.zeros((self._wide.width, dim), dtype=np.float32)
            if intercept:
                self.root_intercept = np.zeros(self._wide.width, dtype=np.float32)
        self.input_weights: np.ndarray | None = None
        self.history: list[float] = []
        self._structure = self._freeze_structure()
        # row-wise AdaGrad accumulators of `fit(optimizer="adagrad")`: (W_in rows, inner nodes)
        self._adagrad: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_counts(cls, counts, dim: int, seed: int = 1, *, intercept: bool = False,
                    root_width: int | None = None):
        """The Huffman tree of class ``counts`` (word2vec.c's construction,
        :func:`hsw2v.huffman.build_huffman_tree`): expected path length is at most the
        entropy of the class frequencies plus one.

        Examples
        --------
        >>> HierarchicalSoftmax.from_counts([5, 3, 1, 1], dim=2).tree.lengths.tolist()
        [1, 2, 3, 3]
        """
        counts = np.asarray(counts)
        if counts.ndim != 1 or len(counts) < 2:
            raise ValueError(f"counts must be a 1-D sequence of at least 2 classes, got {counts!r}")
        if not np.issubdtype(counts.dtype, np.number) or (counts < 0).any():
            raise ValueError("counts must be non-negative numbers")
        return cls(build_huffman_tree(counts), dim, seed, intercept=intercept,
                   root_width=root_width, _trusted=True)

    @classmethod
    def balanced(cls, n_classes: int, dim: int, seed: int = 1, *, intercept: bool = False,
                 root_width: int | None = None):
        """A balanced tree: every path has ``floor`` or ``ceil`` of ``log2(n_classes)`` nodes.

        Examples
        --------
        >>> HierarchicalSoftmax.balanced(6, dim=2).tree.lengths.tolist()
        [2, 3, 3, 2, 3, 3]
        """
        n_classes = _positive_int(n_classes, "n_classes")
        if n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes}")
        return cls(balanced_tree(n_classes), dim, seed, intercept=intercept,
                   root_width=root_width, _trusted=True)

    @classmethod
    def from_paths(cls, codes, points, dim: int, lengths=None, seed: int = 1, *,
                   intercept: bool = False, root_width: int | None = None):
        """Your own tree: for each class, its code bits and inner-node ids from the root down,
        as ragged sequences, or as padded ``V x L`` arrays with ``lengths``. Inner nodes are
        ids in ``[0, V-2]`` (row of ``weights``); the paths must form a full binary tree
        (prefix-free codes, two children per inner node), else ValueError says what is wrong.

        Examples
        --------
        >>> layer = HierarchicalSoftmax.from_paths([[0], [1, 0], [1, 1]], [[0], [0, 1], [0, 1]],
        ...                                        dim=2)
        >>> layer.root, layer.tree.lengths.tolist()
        (0, [1, 2, 2])
        >>> HierarchicalSoftmax.from_paths([[0], [0, 1]], [[0], [0, 0]], dim=2)
        Traceback (most recent call last):
            ...
        ValueError: the paths do not describe a full binary tree over 2 classes ...
        """
        if lengths is None:
            if len(codes) != len(points):
                raise ValueError(f"{len(codes)} codes but {len(points)} point lists")
            lengths = np.array([len(c) for c in codes], dtype=np.int64)
            if any(len(p) != n for p, n in zip(points, lengths, strict=True)):
                raise ValueError("each class's code and point lists must have the same length")
            if len(lengths) and lengths.min() < 1:
                raise ValueError("every class needs a path of at least one node")
            width = int(lengths.max()) if len(lengths) else 1
            padded_c = np.zeros((len(lengths), width), dtype=np.int64)
            padded_p = np.zeros((len(lengths), width), dtype=np.int64)
            for w, (c, p) in enumerate(zip(codes, points, strict=True)):
                padded_c[w, : len(c)] = c
                padded_p[w, : len(p)] = p
            codes, points = padded_c, padded_p
        codes, points = np.asarray(codes), np.asarray(points)
        lengths = np.asarray(lengths)
        children, root, order = check_tree(codes, points, lengths)
        tree = HuffmanTree(
            codes=codes.astype(np.uint8), points=points.astype(np.int32), lengths=lengths
        )
        return cls(tree, dim, seed, intercept=intercept, root_width=root_width)

    def to_torch(self, *, sparse: bool = False, device=None):
        """This layer as a PyTorch module, :class:`hsw2v.layer.torch.HierarchicalSoftmaxLoss`, with
        the same tree and a copy of the weights (needs ``pip install torch``): train
        here with the Cython kernels, fine-tune inside a network (``docs/torch.md``)."""
        from hsw2v.layer.torch import HierarchicalSoftmaxLoss

        return HierarchicalSoftmaxLoss.from_layer(self, sparse=sparse, device=device)

    @classmethod
    def from_torch(cls, module):
        """The layer of a :class:`hsw2v.layer.torch.HierarchicalSoftmaxLoss`: its tree and a float32
        copy of its weights, on the CPU (the inverse of :meth:`to_torch`)."""
        if not all(hasattr(module, a) for a in ("tree", "weight", "in_features", "root_weight")):
            raise TypeError(
                f"from_torch takes an hsw2v.layer.torch.HierarchicalSoftmaxLoss, got "
                f"{type(module).__name__}"
            )
        layer = cls(module.tree, module.in_features, intercept=module.bias is not None,
                    root_width=module.root_width, _trusted=True)

        def host(param):
            return np.ascontiguousarray(param.detach().cpu().float().numpy(), dtype=np.float32)

        layer.weights = host(module.weight).copy()
        if module.bias is not None:
            layer.intercept = host(module.bias).copy()
        if module.root_weight is not None:
            layer.root_weights = host(module.root_weight).copy()
        if module.root_bias is not None:
            layer.root_intercept = host(module.root_bias).copy()
        return layer

    @property
    def root_width(self) -> int | None:
        """K, the number of children of the wide root (None for the binary root)."""
        return None if self._wide is None else self._wide.width

    @property
    def root_children(self) -> np.ndarray | None:
        """The wide root's children as child-table entries (inner node ``n``, or class ``w``
        as ``-1 - w``), int32 K, in the order of ``root_weights`` (None without)."""
        return None if self._wide is None else self._wide.children

    @property
    def root_slot(self) -> np.ndarray | None:
        """The child of the wide root above each class, int32 n_classes (None without)."""
        return None if self._wide is None else self._wide.slot

    # ------------------------------------------------------------------ scoring
    def log_prob(self, H, y) -> np.ndarray:
        """``log P(y_i | h_i)`` for each row ``h_i`` of ``H`` (B x dim): float64, B entries.
        Costs one dot product per node on each path.

        Examples
        --------
        >>> layer = HierarchicalSoftmax.balanced(4, dim=2)
        >>> layer.log_prob(np.zeros((2, 2)), [0, 3]).round(4).tolist()  # log(1/4)
        [-1.3863, -1.3863]
        """
        self._check_state()
        H = self._hidden(H, "log_prob")
        y = self._labels(y, len(H))
        loss, _ = path_batch(H, self.weights, *self._tree_arrays(), y, False, 0.0, self.intercept)
        bad = ~np.isfinite(loss)
        if bad.any():  # a float32 dot product overflowed on weights near the float32 limit
            loss[bad] = self._path_loss_float64(H[bad], y[bad])
        if self._wide is not None:
            root_lp = root_log_softmax(H, self.root_weights, self.root_intercept)
            loss -= root_lp[np.arange(len(H)), self._wide.slot[y]]
        return -loss

    def log_proba(self, H, out=None) -> np.ndarray:
        """``log P(c | h_i)`` of every class ``c`` for each row of ``H``: float64 B x
        n_classes (or written into ``out``). Node scores come from one matrix product per
        chunk of rows (at most 16 MB of scores at a time), their log-sigmoids from vectorised
        NumPy, then one top-down pass per row adds them along the paths.

        Examples
        --------
        >>> layer = HierarchicalSoftmax.from_counts([5, 3, 1, 1], dim=2)
        >>> float(np.exp(layer.log_proba(np.ones((1, 2)))).sum().round(6))
        1.0
        """
        return self._distribution(self._hidden(H, "log_proba"), out, exp=False)

    def proba(self, H, out=None) -> np.ndarray:
        """``P(c | h_i)`` of every class for each row of hidden vectors ``H``: float64 B x
        n_classes (or written into ``out``), rows summing to 1. Streams like
        :meth:`log_proba`, each chunk exponentiated in place, so the peak memory is the output
        plus a bounded scratch (about 32 MB, whatever ``B``).

        Examples
        --------
        >>> HierarchicalSoftmax.balanced(3, dim=2).proba(np.zeros((1, 2))).round(6).tolist()
        [[0.5, 0.25, 0.25]]
        """
        return self._distribution(self._hidden(H, "proba"), out, exp=True)

    def _distribution(self, H, out, exp: bool) -> np.ndarray:
        self._check_state()
        V = self.n_classes
        if out is None:
            out = np.empty((len(H), V), dtype=np.float64)
        elif (
            not isinstance(out, np.ndarray)
            or out.shape != (len(H), V)
            or out.dtype != np.float64
            or not out.flags.c_contiguous
        ):
            raise ValueError(f"out must be a C-contiguous float64 array of shape {(len(H), V)}")
        rows = max(1, min(len(H), _SCORE_BUDGET // (V - 1)))
        scores = np.empty((rows, V - 1), dtype=np.float32)
        logsig = np.empty((rows, V - 1), dtype=np.float32)
        node_lp = np.empty(V - 1, dtype=np.float64)
        wt = self.weights.T
        for start in range(0, len(H), rows):
            chunk = H[start : start + rows]
            s, ls = scores[: len(chunk)], logsig[: len(chunk)]
            with np.errstate(over="ignore", invalid="ignore"):
                np.matmul(chunk, wt, out=s)
                if self.intercept is not None:
                    s += self.intercept
            if not np.isfinite(s).all():  # overflowed: saturate, as the kernels do
                self._scores_float64(chunk, out=s)
            _log_sigmoid(s, ls)
            if self._wide is not None:  # the nodes above the root's children add nothing...
                s[:, self._wide.expanded] = 0.0
                ls[:, self._wide.expanded] = 0.0
            block = out[start : start + len(chunk)]
            fill_log_proba(s, ls, self.children, self.order, block, node_lp)
            if self._wide is not None:  # ...and the root's softmax adds its child's log-prob
                root_lp = root_log_softmax(chunk, self.root_weights, self.root_intercept)
                block += root_lp[:, self._wide.slot]
            if exp:
                np.exp(block, out=block)
        return out

    def _scores_float64(self, H, out) -> np.ndarray:
        """Node scores ``H @ weights.T (+ intercept)`` summed in float64, where no product of
        finite float32 values overflows, then clipped to ``[-1e4, 1e4]`` into ``out``.

        Design note. Float32 sums of weights near the float32 limit overflow to inf, and the
        top-down pass then meets inf - inf = NaN. Beyond ``|f| = 1e4`` a sigmoid is exactly 0
        or 1 in float64 (``exp(-745)`` already underflows), so the clip changes no
        probability; a wider clip (the float32 limit) would not do: the pass adds
        ``log sigmoid(-f) = log sigmoid(f) - f``, and ``lp - 3e38 + 3e38`` loses ``lp``
        (float64 keeps 1e-12 of it at 1e4). Only a chunk whose float32 scores overflowed
        takes this path, so every other answer is bit for bit as before."""
        scores = np.asarray(H, dtype=np.float64) @ self.weights.T.astype(np.float64)
        if self.intercept is not None:
            scores += self.intercept
        return np.clip(scores, -_SCORE_LIMIT, _SCORE_LIMIT, out=out, casting="unsafe")

    def _path_loss_float64(self, H, y) -> np.ndarray:
        """``-log P(y_i | h_i)`` below the root's children, in float64 (the rows whose float32
        kernel sum overflowed): finite for finite weights and hidden vectors."""
        codes, points, lengths = self._tree_arrays()
        loss = np.empty(len(y), dtype=np.float64)
        weights = self.weights
        for i, (h, c) in enumerate(zip(np.asarray(H, dtype=np.float64), y, strict=True)):
            nodes = points[c, : lengths[c]]
            f = weights[nodes].astype(np.float64) @ h
            if self.intercept is not None:
                f += self.intercept[nodes]
            f = np.where(codes[c, : lengths[c]] == 0, f, -f)  # bit 0 takes sigmoid(f)
            loss[i] = float(np.sum(np.maximum(-f, 0.0) + np.log1p(np.exp(-np.abs(f)))))
        return loss

    def predict_proba(self, H) -> np.ndarray:
        """Deprecated alias of :meth:`proba` (hidden vectors in), kept for one release: the
        name ``predict_proba`` takes features in scikit-learn and in
        :class:`hsw2v.classifier.HierarchicalSoftmaxClassifier`."""
        _deprecated(
            "HierarchicalSoftmax.predict_proba(H)",
            "layer.proba(H) for hidden vectors, or HierarchicalSoftmaxClassifier"
            "(...).predict_proba(X) for features",
        )
        return self.proba(H)

    def topk(self, H, k: int = 1):
        """The ``k`` most probable classes of each row, exactly, by best-first search of the
        tree (a path's probability only falls going down, so search stops once ``k`` leaves
        are out): ``(indices int64 B x k, probabilities float64 B x k)``, most probable first.

        Examples
        --------
        >>> layer = HierarchicalSoftmax.balanced(4, dim=1)
        >>> layer.weights[:] = [[1.0], [-1.0], [2.0]]  # root is node 2
        >>> idx, p = layer.topk(np.ones((1, 1)), k=2)
        >>> idx.tolist(), p.round(3).tolist()
        ([[1, 0]], [[0.644, 0.237]])
        """
        self._check_state()
        H = self._hidden(H, "topk")
        k = _positive_int(k, "k")
        if k > self.n_classes:
            raise ValueError(f"k must be at most n_classes={self.n_classes}, got {k}")
        wide = {} if self._wide is None else {
            "wide_children": self._wide.children, "root_weights": self.root_weights,
            "root_intercept": self.root_intercept}
        words, logp = best_first_topk(H, self.weights, self.intercept, self.children,
                                      self.root, k, **wide)
        return words, np.exp(logp)

    # ------------------------------------------------------------------ training
    def backward(self, H, y, *, nodes: bool = False):
        """The gradient of ``L = -sum_i log P(y_i | h_i)``, leaving the weights alone.

        Without ``nodes``: ``dL/dH``, float32 B x dim (as before). With ``nodes=True``: a
        :class:`Gradient` ``(hidden, nodes, rows)``: ``dL/dH`` and the gradient of the
        inner-node rows the batch touched, ``dL/dweights[nodes] = rows``, sparse (only the
        rows on the batch's paths; :meth:`Gradient.sparse_weights` and
        :meth:`Gradient.dense_weights` give the whole matrix), so that any optimiser (Adam,
        weight decay, clipping) can drive ``weights``. ``dL/dweights[n] = sum g h`` over the
        steps through node ``n`` (design note E of :mod:`hsw2v._kernels._layer`).

        Examples
        --------
        >>> layer = HierarchicalSoftmax.balanced(2, dim=2)
        >>> layer.weights[:] = [[1.0, 0.0]]
        >>> layer.backward(np.zeros((1, 2)), [0]).tolist()  # (sigmoid(0) - 1) * w
        [[-0.5, 0.0]]
        >>> g = layer.backward(np.ones((1, 2)), [0], nodes=True)
        >>> g.nodes.tolist(), g.rows.astype(float).round(4).tolist()  # (sigmoid(1) - 1) * h
        ([0], [[-0.2689, -0.2689]])
        """
        self._check_state()
        H = self._hidden(H, "backward")
        y = self._labels(y, len(H))
        tree = self._tree_arrays()
        bias = self.intercept
        with_bias = {} if bias is None else {"bias": bias}
        root = self._root_step(H, y, 0.0)
        kept = self._keep_rows_if_overflow(H, y)
        try:
            if not nodes:
                grad = path_batch(H, self.weights, *tree, y, True, 0.0, **with_bias)[1]
                return grad if root is None else grad + root[0]
            G = np.empty((len(H), max(tree[0].shape[1], 1)), dtype=np.float32)
            _, grad = path_batch(H, self.weights, *tree, y, True, 0.0, g_out=G, **with_bias)
        finally:
            if kept is not None:  # the gradient leaves the weights alone, even on overflow
                self.weights[kept[0]] = kept[1]
                if kept[2] is not None:
                    self.intercept[kept[0]] = kept[2]
        if root is not None:
            grad += root[0]
        lengths = tree[2][y]
        on_path = np.arange(G.shape[1]) < lengths[:, None]
        node_ids = tree[1][y][on_path].astype(np.int64)
        touched, slot = np.unique(node_ids, return_inverse=True)
        import scipy.sparse as sp

        rows_of = np.repeat(np.arange(len(H)), lengths)  # row b of each (b, j) step, in order
        steps = sp.csr_array((G[on_path], (slot, rows_of)), shape=(len(touched), len(H)))
        rows = np.asarray(steps @ H, dtype=np.float32).reshape(len(touched), self.dim)
        node_bias = None
        if bias is not None:
            node_bias = np.bincount(slot, weights=G[on_path], minlength=len(touched))
            node_bias = node_bias.astype(np.float32)
        if root is None:
            return Gradient(grad, touched, rows, node_bias)
        return Gradient(grad, touched, rows, node_bias, *root[1:])

    def _keep_rows_if_overflow(self, H, y):
        """``(nodes, their rows, their intercepts or None)`` when a float32 dot product on the paths of ``y`` could
        overflow (``max|h| * max|w| * dim`` beyond 1e38, weights near the float32 limit),
        else None. The kernels' node step writes a row whose gradient is NaN even at step
        size 0, and an overflowed dot product gives NaN: :meth:`backward` puts the rows back.
        Costs one pass over the rows on the batch's paths (at most the backward's own)."""
        if not len(H):
            return None
        try:
            nodes = self._nodes_on_paths(y)
        except IndexError:  # paths edited out of bounds: the kernel refuses them (ValueError)
            return None
        if not len(nodes) or nodes[0] < 0 or nodes[-1] >= len(self.weights):
            return None
        rows = self.weights[nodes]
        bound = float(np.abs(H).max()) * float(np.abs(rows).max()) * self.dim
        if bound <= 1e38:
            return None
        return nodes, rows, None if self.intercept is None else self.intercept[nodes]

    def _root_step(self, H, y, lr: float):
        """The wide root's part of the gradient at the weights on entry, ``(dL/dH,
        dL/droot_weights, dL/droot_intercept or None)`` as float32, then with ``lr`` its
        batch step; None for a binary root."""
        if self._wide is None:
            return None
        _, dZ = root_gradient(H, self.root_weights, self.root_intercept, self._wide.slot[y])
        grad_h = (dZ @ self.root_weights).astype(np.float32)
        grad_r = (dZ.T @ H).astype(np.float32)
        grad_b = None if self.root_intercept is None else dZ.sum(axis=0).astype(np.float32)
        if lr:
            self.root_weights -= np.float32(lr) * grad_r
            if grad_b is not None:
                self.root_intercept -= np.float32(lr) * grad_b
        return grad_h, grad_r, grad_b

    def update(self, H, y, lr: float) -> np.ndarray:
        """One gradient step ``weights -= lr * dL/dweights`` on the batch (every row's
        gradient taken at the weights on entry), returning ``dL/dH`` at those weights, so the
        layer can sit on any feature extractor that back-propagates it.

        Examples
        --------
        >>> layer = HierarchicalSoftmax.balanced(2, dim=2)
        >>> grad = layer.update(np.array([[1.0, 0.0]]), [1], lr=1.0)
        >>> layer.weights.tolist(), grad.tolist()  # g = sigmoid(0) - 0 = 0.5
        ([[-0.5, 0.0]], [[0.0, 0.0]])
        """
        lr = float(lr)
        if not np.isfinite(lr) or lr <= 0:
            raise ValueError(f"lr must be a positive finite number, got {lr}")
        self._check_state()
        H = self._hidden(H, "update")
        y = self._labels(y, len(H))
        # Divergence check (design note in _refuse_divergence): a step of at most
        # lr * B * max|h| <= 1e30 per weight cannot turn finite weights infinite, so only
        # a larger step copies the rows it may change first.
        careful = not lr * len(H) * float(np.abs(H).max(initial=0.0)) <= _SAFE_STEP
        saved = self._rows_on_paths(y, nodes=careful)
        root = self._root_step(H, y, lr)
        loss, grad = path_batch(
            H, self.weights, *self._tree_arrays(), y, True, lr, self.intercept
        )
        if careful or not (np.isfinite(loss).all() and np.isfinite(grad).all()):
            self._refuse_divergence(y, saved, lr)
        elif root is not None and not all(
            np.isfinite(a).all() for a in (self.root_weights, self.root_intercept) if a is not None
        ):
            self._refuse_divergence(y, saved, lr)
        return grad if root is None else grad + root[0]

    def _nodes_on_paths(self, y) -> np.ndarray:
        """The inner nodes (rows of ``weights``) the paths of classes ``y`` visit."""
        codes, points, lengths = self._tree_arrays()
        width = points.shape[1] if points.ndim == 2 else 0
        on_path = np.arange(width) < lengths[y][:, None]
        return np.unique(points[y][on_path])

    def _rows_on_paths(self, y, nodes: bool = True) -> dict:
        """A copy of every parameter :meth:`update` may change (the rows on the batch's
        paths only when ``nodes``; the wide root's always, K rows), put back if the step
        diverges."""
        copies = {}
        if nodes:
            rows = self._nodes_on_paths(y)
            copies["weights"] = (rows, self.weights[rows])
            if self.intercept is not None:
                copies["intercept"] = (rows, self.intercept[rows])
        for name in ("root_weights", "root_intercept"):
            if getattr(self, name) is not None:
                copies[name] = (slice(None), getattr(self, name).copy())
        return copies

    def _refuse_divergence(self, y, saved: dict, lr: float) -> None:
        """After a step: if a parameter it changed is no longer finite, put back what was
        copied and raise :class:`~hsw2v.divergence.TrainingDivergedError` (as ``fit`` does).

        Design note. The copy is taken only for steps that could overflow: a weight changes
        by at most ``lr * |g| * |h| <= lr * max|h|`` per example (``|g| <= 1``), so by at most
        ``lr * B * max|h|`` per batch; at or below 1e30, less than half a float32 unit in the
        last place at the largest finite value (2**104), a finite weight stays finite. A NaN
        can then only come from a dot product that overflowed on weights already near the
        float32 limit, which the step's loss or gradient shows (non-finite); those rows are
        then found but cannot be put back, and the error says so."""
        from hsw2v.divergence import TrainingDivergedError

        rows = saved["weights"][0] if "weights" in saved else self._nodes_on_paths(y)
        bad = {"weights": int((~np.isfinite(self.weights[rows])).any(axis=1).sum())}
        if self.intercept is not None:
            bad["intercept"] = int((~np.isfinite(self.intercept[rows])).sum())
        for name in ("root_weights", "root_intercept"):
            arr = getattr(self, name)
            if arr is not None:
                bad[name] = int((~np.isfinite(arr.reshape(len(arr), -1))).any(axis=1).sum())
        bad = {k: v for k, v in bad.items() if v}
        if not bad:
            return
        for name, (where, before) in saved.items():
            getattr(self, name)[where] = before
        restored = all(name in saved for name in bad)
        raise TrainingDivergedError(
            f"update diverged at lr={lr:g}: the step made weights NaN or infinite "
            f"({', '.join(f'{k}: {v} rows' for k, v in bad.items())}); "
            + (
                "they were put back as they were before the step. Lower lr or scale H"
                if restored
                else "the weights on those paths were already near the float32 limit before "
                "the step, and are left as they are: reset them (e.g. layer.weights[:] = 0) "
                "and lower lr"
            ),
            nonfinite_rows=bad,
        )

    def transform(self, X) -> np.ndarray:
        """The hidden vectors ``h = x W_in`` of the fitted classifier (float32 n x dim) from
        features ``X`` (dense or CSR, n x m): what :meth:`log_proba`, :meth:`proba` and
        :meth:`topk` take."""
        if self.input_weights is None:
            raise RuntimeError(
                "transform(X) needs the input matrix that fit(X, y) learns: fit first (a layer "
                "driven by your own model takes hidden vectors: log_proba(H), proba(H), "
                "topk(H, k))"
            )
        self._check_state()
        X = self._features(X, "transform")
        return np.ascontiguousarray(X @ self.input_weights, dtype=np.float32)

    def predict(self, X) -> np.ndarray:
        """Deprecated (features in, one release): the most probable class of each row of
        ``X`` (int64), which is ``layer.topk(layer.transform(X), 1)[0][:, 0]``."""
        _deprecated(
            "HierarchicalSoftmax.predict(X)",
            "HierarchicalSoftmaxClassifier(...).predict(X), or layer.topk(layer.transform(X), "
            "1)[0][:, 0] on the layer",
        )
        return self.topk(self.transform(X), 1)[0][:, 0]

    # ------------------------------------------------------------------ helpers
    def _structure_arrays(self) -> list:
        """Every array the kernels follow as indices (the tree, its child table and order,
        the wide root's frontier), as the layer holds them now."""
        arrays = [self.tree, self.tree.codes, self.tree.points, self.tree.lengths,
                  self.children, self.order]
        if self._wide is not None:
            below = self._wide.below
            arrays += [self._wide, self._wide.children, self._wide.slot, self._wide.expanded,
                       below, below.codes, below.points, below.lengths]
        return arrays

    def _freeze_structure(self) -> tuple:
        """Make the checked index arrays read-only (an in-place edit then raises numpy's
        "assignment destination is read-only") and remember them (:meth:`_check_state`)."""
        arrays = self._structure_arrays()
        for arr in arrays:
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
        return (tuple(arrays), self.n_classes, self.root)

    def _check_state(self) -> None:
        """Before each kernel call, in O(1): the index arrays are those checked when the
        layer was built and still read-only, and every weight array has the shape and dtype
        the kernels index (a ValueError naming the attribute otherwise). An index array
        replaced, or made writeable again, is checked in full. The layer owns copies of its
        tree, so no caller's buffer can change under it; an array made writeable, edited and
        made read-only again passes this test, and the kernels' own bounds check on the
        paths they follow (one compare per step, every call) refuses it."""
        structure = getattr(self, "_structure", None)
        now = self._structure_arrays()
        if (
            structure is None
            or len(now) != len(structure[0])
            or any(a is not b for a, b in zip(now, structure[0], strict=False))
            or (self.n_classes, self.root) != structure[1:]
            or any(isinstance(a, np.ndarray) and a.flags.writeable for a in now)
        ):  # replaced, or made writeable again (and maybe edited): check it all again
            self._recheck_tree()
        if self._wide is not None:
            self._check_wide_root()
        n_classes = self.n_classes
        inner = n_classes - 1
        expect = {"weights": ((inner, self.dim), np.float32)}
        if self.intercept is not None:
            expect["intercept"] = ((inner,), np.float32)
        if self._wide is not None:
            expect["root_weights"] = ((self._wide.width, self.dim), np.float32)
            if self.root_intercept is not None:
                expect["root_intercept"] = ((self._wide.width,), np.float32)
        if self.input_weights is not None:
            m = getattr(self.input_weights, "shape", (0,))[0]
            expect["input_weights"] = ((m, self.dim), np.float32)
        for name, (shape, dtype) in expect.items():
            arr = getattr(self, name)
            if (
                not isinstance(arr, np.ndarray)
                or arr.shape != shape
                or arr.dtype != dtype
                or not arr.flags.c_contiguous
            ):
                got = (
                    f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray)
                    else type(arr).__name__
                )
                raise ValueError(
                    f"layer.{name} must be a C-contiguous {np.dtype(dtype)} array of "
                    f"shape {shape}, got {got}: assign e.g. "
                    f"np.ascontiguousarray(values, dtype=np.float32) of that shape"
                )

    def _check_wide_root(self) -> None:
        """The wide root's index arrays, which NumPy indexes with, still lie in range (a few
        vectorised passes over ``V`` ids): an edit behind their read-only flag is a
        ValueError, not an IndexError from deep inside a query."""
        wide, n_inner = self._wide, self.n_classes - 1
        K = len(wide.children)
        bad = [
            name
            for name, arr, low, high in (
                ("slot", wide.slot, 0, K),
                ("expanded", wide.expanded, 0, n_inner),
                ("children", wide.children, -self.n_classes, n_inner),
            )
            if len(arr) and (int(arr.min()) < low or int(arr.max()) >= high)
        ]
        if bad or len(wide.slot) != self.n_classes or len(wide.expanded) != K - 1:
            raise ValueError(
                f"the layer's wide root arrays ({', '.join(bad) or 'their sizes'}) were "
                "changed after the layer checked them: do not edit a layer's tree, build a "
                "new layer (HierarchicalSoftmax.from_paths(..., root_width=K)) instead"
            )

    def _recheck_tree(self) -> None:
        """The tree was replaced (or the layer unpickled): check it in full, as the
        constructor does, and derive the child table, order and wide root again from it."""
        codes, points, lengths = _own_tree_arrays(self.tree)
        try:
            children, root, order = check_tree(codes, points, lengths)
        except ValueError as exc:
            raise ValueError(f"layer.tree was replaced by an invalid tree: {exc}") from None
        if len(lengths) != self.n_classes:
            raise ValueError(
                f"layer.tree was replaced by a tree of {len(lengths)} classes, but the layer "
                f"has {self.n_classes}: build a new layer for another number of classes"
            )
        self.tree = HuffmanTree(codes=codes, points=points, lengths=lengths)
        self.children, self.root, self.order = children, root, order
        if self._wide is not None:
            self._wide = WideRoot(self.tree, children, order, self._wide.width)
        self._structure = self._freeze_structure()

    def _tree_arrays(self):
        """The paths the kernels walk: the whole tree's, or below a wide root's children."""
        tree = self.tree if self._wide is None else self._wide.below
        return tree.codes, tree.points, tree.lengths

    def _root_arrays(self) -> dict:
        """The wide root's arrays as ``FitTrainer`` takes them (none for a binary root)."""
        if self._wide is None:
            return {}
        return {"root_w": self.root_weights, "root_b": self.root_intercept,
                "slot": self._wide.slot}

    def _intercept_copy(self):
        return None if self.intercept is None else self.intercept.copy()

    def _hidden(self, H, method: str = "this method") -> np.ndarray:
        """Hidden vectors, dense float32 B x dim, or a TypeError / ValueError that says what
        ``method`` expected and what it got instead."""
        want = f"{method}(H) takes hidden vectors, a dense 2-D array of shape (batch, {self.dim})"
        if _is_sparse(H):
            raise TypeError(
                f"{want}, got a sparse {type(H).__name__} of shape {H.shape}: sparse input "
                "is features; map features to hidden vectors with layer.transform(X) (after "
                "fit), or use HierarchicalSoftmaxClassifier, whose predict/predict_proba take X"
            )
        H = np.asarray(H)
        if not np.issubdtype(H.dtype, np.number) or H.dtype.kind == "c":
            raise TypeError(f"{want} of real numbers, got dtype {H.dtype}")
        if H.ndim != 2 or H.shape[1] != self.dim:
            got = f"shape {H.shape}"
            if H.ndim == 1 and len(H) == self.dim:
                got += " (one vector: give H[None, :])"
            elif (
                H.ndim == 2
                and self.input_weights is not None
                and H.shape[1] == self.input_weights.shape[0]
            ):
                got += (
                    f" ({H.shape[1]} columns = the fitted number of features: for features "
                    "call layer.transform(X) first)"
                )
            raise ValueError(f"{want}, got {got}")
        H = np.ascontiguousarray(H, dtype=np.float32)
        if not np.isfinite(H).all():
            raise ValueError("H holds NaN or infinite values")
        return H

    def _features(self, X, method: str):
        """Features, dense C-contiguous float32 or CSR with float32 data, checked finite, with
        the fitted number of columns (once fitted), or an error that says what was expected."""

        m = None if self.input_weights is None else self.input_weights.shape[0]
        want = f"{method}(X) takes features, a 2-D numeric array or SciPy CSR matrix (n, " + (
            f"{m})" if m is not None else "m)"
        )
        if _is_sparse(X):
            X = checked_features(X)  # every id checked before any product reads with it
            values = X.data
        else:
            X = np.asarray(X)
            if X.ndim != 2 or not np.issubdtype(X.dtype, np.number) or X.dtype.kind == "c":
                raise ValueError(f"{want}, got shape {X.shape} dtype {X.dtype}")
            X = np.ascontiguousarray(X, dtype=np.float32)
            values = X
        if m is not None and X.shape[1] != m:
            hint = (
                f": {self.dim} columns are hidden vectors, which log_proba(H), proba(H) and "
                "topk(H, k) take"
                if X.shape[1] == self.dim
                else ": give the same features as in fit"
            )
            raise ValueError(
                f"{want}: X has {X.shape[1]} features but the layer was fitted with {m}{hint}"
            )
        if not np.isfinite(values).all():
            raise ValueError("X holds NaN or infinite values")
        return X

    def _labels(self, y, n: int) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must hold one class id per row ({n}), got shape {y.shape}")
        if n and not np.issubdtype(y.dtype, np.integer):
            raise ValueError(
                f"class ids must be integers in [0, {self.n_classes}), got dtype {y.dtype}: "
                "for labels of any kind (strings, ...) use HierarchicalSoftmaxClassifier"
            )
        if n and (y.min() < 0 or y.max() >= self.n_classes):
            raise ValueError(
                f"class ids must be in [0, {self.n_classes}), got {y.min()}..{y.max()}: for "
                "labels of any kind use HierarchicalSoftmaxClassifier"
            )
        return np.ascontiguousarray(y, dtype=np.int32)

    def __repr__(self) -> str:
        wide = "" if self._wide is None else f", root_width={self._wide.width}"
        return f"HierarchicalSoftmax(n_classes={self.n_classes}, dim={self.dim}{wide})"


_SAFE_STEP = 1e30  # see HierarchicalSoftmax._refuse_divergence


def _is_sparse(a) -> bool:
    """A SciPy sparse matrix or array, without importing SciPy for dense input."""
    return type(a).__module__.startswith("scipy.sparse")


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: use {new}",
        DeprecationWarning,
        stacklevel=3,
    )


def _log_sigmoid(f: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out = log sigmoid(f) = min(f, 0) - log1p(exp(-|f|))``, stable, written into
    ``out`` with NumPy's vectorised exp and log1p (one boolean mask as temporary).

    Examples
    --------
    >>> _log_sigmoid(np.array([-100.0, 0.0, 100.0]), np.empty(3)).round(4).tolist()
    [-100.0, -0.6931, -0.0]
    """
    tmp = np.abs(f, out=out)
    np.negative(tmp, out=tmp)
    np.exp(tmp, out=tmp)
    np.log1p(tmp, out=tmp)
    np.negative(tmp, out=tmp)
    np.add(tmp, f, out=tmp, where=f < 0)
    return out
