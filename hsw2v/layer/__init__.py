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

import numpy as np

from hsw2v._kernels._layer import path_batch
from hsw2v.huffman import Tree, child_table
from hsw2v.layer._args import check_seed as _seed
from hsw2v.layer._args import class_ids, features, hidden_vectors
from hsw2v.layer._args import positive_int as _positive_int
from hsw2v.layer._distribution import distribution, path_loss_float64
from hsw2v.layer._divergence import SAFE_STEP, refuse_divergence, rows_if_overflow, rows_on_paths
from hsw2v.layer._files import LayerFiles
from hsw2v.layer._fit import LayerFitting
from hsw2v.layer._gradient import Gradient, node_gradient
from hsw2v.layer._root import WideRoot, root_log_softmax, root_step
from hsw2v.layer._search import best_first_topk
from hsw2v.layer._state import check_arrays, freeze_structure, structure_changed
from hsw2v.running.params import VECTOR_SIZE_MAX
from hsw2v.trees import check_tree, top_down_order

__all__ = ["Gradient", "HierarchicalSoftmax"]

_CONSTRUCTORS = (
    "HierarchicalSoftmax.from_counts(counts, dim), HierarchicalSoftmax.balanced(n_classes, "
    "dim) or HierarchicalSoftmax.from_paths(codes, points, dim)"
)


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
        tree: Tree,
        dim: int,
        seed: int = 1,
        *,
        intercept: bool = False,
        root_width: int | None = None,
        _trusted: bool = False,
    ):
        if not all(hasattr(tree, a) for a in ("codes", "points", "lengths")):
            raise TypeError(
                f"HierarchicalSoftmax(tree, dim) takes a tree (hsw2v.huffman.Tree), got "
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
        self.tree = Tree(codes=codes, points=points, lengths=lengths)
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
        self._structure = freeze_structure(self)
        # row-wise AdaGrad accumulators of `fit(optimizer="adagrad")`: (W_in rows, inner nodes)
        self._adagrad: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_counts(
        cls,
        counts,
        dim: int,
        seed: int = 1,
        *,
        intercept: bool = False,
        root_width: int | None = None,
    ):
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
        tree = Tree.huffman(counts)
        return cls(tree, dim, seed, intercept=intercept, root_width=root_width, _trusted=True)

    @classmethod
    def balanced(
        cls,
        n_classes: int,
        dim: int,
        seed: int = 1,
        *,
        intercept: bool = False,
        root_width: int | None = None,
    ):
        """A balanced tree: every path has ``floor`` or ``ceil`` of ``log2(n_classes)`` nodes.

        Examples
        --------
        >>> HierarchicalSoftmax.balanced(6, dim=2).tree.lengths.tolist()
        [2, 3, 3, 2, 3, 3]
        """
        n_classes = _positive_int(n_classes, "n_classes")
        if n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes}")
        tree = Tree.balanced(n_classes)
        return cls(tree, dim, seed, intercept=intercept, root_width=root_width, _trusted=True)

    @classmethod
    def from_paths(
        cls,
        codes,
        points,
        dim: int,
        lengths=None,
        seed: int = 1,
        *,
        intercept: bool = False,
        root_width: int | None = None,
    ):
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
        tree = Tree.explicit(codes, points, lengths)  # checked: ValueError says what is wrong
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
        layer = cls(
            module.tree,
            module.in_features,
            intercept=module.bias is not None,
            root_width=module.root_width,
            _trusted=True,
        )

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
            loss[bad] = path_loss_float64(
                H[bad], y[bad], self.weights, self.intercept, *self._tree_arrays()
            )
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
        H = self._hidden(H, "log_proba")
        self._check_state()
        return distribution(self, H, out, exp=False)

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
        H = self._hidden(H, "proba")
        self._check_state()
        return distribution(self, H, out, exp=True)

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
        wide = (
            {}
            if self._wide is None
            else {
                "wide_children": self._wide.children,
                "root_weights": self.root_weights,
                "root_intercept": self.root_intercept,
            }
        )
        words, logp = best_first_topk(
            H, self.weights, self.intercept, self.children, self.root, k, **wide
        )
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
        kept = rows_if_overflow(self, H, y)
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
        return node_gradient(H, G, tree[1][y], tree[2][y], grad, root, bias is not None)

    def _root_step(self, H, y, lr: float):
        """The wide root's gradient and, with ``lr``, its step (:func:`root_step`); None for
        a binary root."""
        if self._wide is None:
            return None
        return root_step(H, self.root_weights, self.root_intercept, self._wide.slot[y], lr)

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
        # Divergence check (design note of layer._divergence): a step of at most
        # lr * B * max|h| <= 1e30 per weight cannot turn finite weights infinite, so only
        # a larger step copies the rows it may change first.
        careful = not lr * len(H) * float(np.abs(H).max(initial=0.0)) <= SAFE_STEP
        saved = rows_on_paths(self, y, nodes=careful)
        root = self._root_step(H, y, lr)
        loss, grad = path_batch(H, self.weights, *self._tree_arrays(), y, True, lr, self.intercept)
        if careful or not (np.isfinite(loss).all() and np.isfinite(grad).all()):
            refuse_divergence(self, y, saved, lr)
        elif root is not None and not all(
            np.isfinite(a).all() for a in (self.root_weights, self.root_intercept) if a is not None
        ):
            refuse_divergence(self, y, saved, lr)
        return grad if root is None else grad + root[0]

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
    def _check_state(self) -> None:
        """Before each kernel call, in O(1): the index arrays are those checked when the
        layer was built and still read-only (else checked in full again,
        :meth:`_recheck_tree`), and every weight array has the shape and dtype the kernels
        index (a ValueError naming the attribute otherwise; :mod:`hsw2v.layer._state`)."""
        if structure_changed(self):
            self._recheck_tree()
        check_arrays(self)

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
        self.tree = Tree(codes=codes, points=points, lengths=lengths)
        self.children, self.root, self.order = children, root, order
        if self._wide is not None:
            self._wide = WideRoot(self.tree, children, order, self._wide.width)
        self._structure = freeze_structure(self)

    def _tree_arrays(self):
        """The paths the kernels walk: the whole tree's, or below a wide root's children."""
        tree = self.tree if self._wide is None else self._wide.below
        return tree.codes, tree.points, tree.lengths

    def _root_arrays(self) -> dict:
        """The wide root's arrays as ``FitTrainer`` takes them (none for a binary root)."""
        if self._wide is None:
            return {}
        return {"root_w": self.root_weights, "root_b": self.root_intercept, "slot": self._wide.slot}

    def _intercept_copy(self):
        return None if self.intercept is None else self.intercept.copy()

    def _n_features(self) -> int | None:
        return None if self.input_weights is None else self.input_weights.shape[0]

    def _hidden(self, H, method: str = "this method") -> np.ndarray:
        return hidden_vectors(H, self.dim, method, self._n_features())

    def _features(self, X, method: str):
        return features(X, method, self._n_features(), self.dim)

    def _labels(self, y, n: int) -> np.ndarray:
        return class_ids(y, n, self.n_classes)

    def __repr__(self) -> str:
        wide = "" if self._wide is None else f", root_width={self._wide.width}"
        return f"HierarchicalSoftmax(n_classes={self.n_classes}, dim={self.dim}{wide})"


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release: use {new}",
        DeprecationWarning,
        stacklevel=3,
    )
