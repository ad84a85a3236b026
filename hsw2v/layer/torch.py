"""Hierarchical softmax as a PyTorch module: ``HierarchicalSoftmaxLoss``.

Design note
-----------
The output layer of :class:`hsw2v.HierarchicalSoftmax` in pure PyTorch tensors, with the API
of :class:`torch.nn.AdaptiveLogSoftmaxWithLoss` (Grave et al., "Efficient softmax
approximation for GPUs", ICML 2017), so that swapping one for the other is a one-line change:
``forward(input, target) -> (output, loss)``, ``log_prob(input)``, ``predict(input)``.

Model (Morin & Bengio, "Hierarchical Probabilistic Neural Network Language Model", AISTATS
2005; word2vec.c's conventions, shared with gensim and the rest of hsw2v)::

    P(y | h) = P(slot(y) | h) * prod_j sigmoid(s_j (h . w[n_j] + b[n_j]))

over the inner nodes ``n_j`` on the path to ``y``, ``s_j = 1 - 2 c_j`` for code bit ``c_j``
(``sigmoid(h . w[n])`` is the probability of bit 0). ``P(slot(y) | h)`` is the wide root's
softmax over its ``K`` children (:mod:`hsw2v.layer._root`), or 1 for the binary root.

==============  ==========================================================================
``weight``      ``(V - 1) x in_features``, row ``n`` = inner node ``n`` (``syn1`` in word2vec)
``bias``        ``V - 1`` per-node biases (``bias=True``), else None
``root_weight`` ``K x in_features``, the wide root's children (``root_width=K``), else None
``root_bias``   ``K`` (wide root and ``bias=True``), else None
``nodes``       buffer, int64 ``V x L``: each class's path below the root's children
``signs``       buffer, ``V x L``: ``1 - 2 c`` on the path, 0 on the padding
==============  ==========================================================================

What each call costs:

* ``forward``: gathers the ``B x L`` path rows (``F.embedding``, sparse gradients with
  ``sparse=True``), one batched dot product, ``O(B L d)``; a wide root adds ``O(B K d)``.
  Under AMP the dot products run in the autocast dtype; the log-sigmoids and the path sums
  are accumulated in float32 (float64 for a float64 module).
* ``log_prob``: all node scores (one ``B x (V-1)`` matrix product), then one pass per tree
  level adds each level's log-sigmoids to its parents' path log-probabilities
  (:mod:`hsw2v.layer._torch_plan`); memory ``O(B V)``, never ``B x V x L``.
* ``topk``: on the CPU, the exact best-first search of :meth:`hsw2v.HierarchicalSoftmax.topk`
  (a path's probability only falls going down, so most of the tree is never scored); on a
  GPU, ``log_prob`` by chunks of rows and ``torch.topk``, exact too and cheaper there than
  copying the weights to the host. ``method=`` chooses.

``import hsw2v`` never imports torch; this module does (``pip install torch``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from hsw2v.huffman import Tree, build_huffman_tree, child_table
from hsw2v.layer._root import WideRoot
from hsw2v.layer._search import best_first_topk
from hsw2v.layer._torch_plan import level_plan, padded_paths
from hsw2v.trees import balanced_tree, check_tree, top_down_order

__all__ = ["HierarchicalSoftmaxLoss", "from_word2vec"]

_CHUNK_SCORES = 1 << 24  # node scores per chunk of rows in topk(method="scan")



def _target_type_message(target) -> str:
    """What a target that is not a tensor gets told: the type needed and how to convert."""
    kind = type(target).__name__
    dtype = getattr(target, "dtype", None)
    got = f"a {type(target).__module__}.{kind} of {dtype}" if dtype is not None else f"a {kind}"
    how = (
        "torch.from_numpy(target).long()"
        if type(target).__module__ == "numpy"
        else "torch.as_tensor(target, dtype=torch.long)"
    )
    return (
        f"target must be a torch.Tensor of integer class ids (torch.int64), one per row of "
        f"input, got {got}: convert it with {how}, on the input's device "
        "(.to(input.device))"
    )

class ASMOutput(NamedTuple):
    """What ``forward`` returns, as :class:`torch.nn.AdaptiveLogSoftmaxWithLoss` does."""

    output: torch.Tensor
    """``log P(target_i | input_i)``, one per row (float32, or the module's float64)."""
    loss: torch.Tensor
    """The mean negative log-likelihood over the rows."""


class TopK(NamedTuple):
    """What ``topk`` returns, in :func:`torch.topk`'s order."""

    values: torch.Tensor
    """Log-probabilities, ``B x k``, most probable first."""
    indices: torch.Tensor
    """Class ids, int64 ``B x k``."""


class HierarchicalSoftmaxLoss(nn.Module):
    """Hierarchical softmax output layer and loss over ``n_classes`` classes.

    Parameters
    ----------
    in_features : int
        Size of the hidden vectors (``input``'s last dimension).
    n_classes : int
        Number of classes (at least 2).
    tree : "huffman", "balanced", or a tree, optional
        ``"huffman"`` (needs ``counts``): frequent classes on short paths, word2vec's tree;
        ``"balanced"``: classes ``0..V-1`` halved recursively; any hsw2v tree (an object with
        ``codes``, ``points``, ``lengths``: :func:`hsw2v.huffman.build_huffman_tree`,
        :func:`hsw2v.trees.balanced_tree`, :func:`hsw2v.label_trees.label_tree` with
        ``"kmeans"``, a ``Word2Vec``'s ``model.tree``), checked. Default: Huffman's if
        ``counts`` is given, else balanced.
    counts : sequence of numbers, optional
        Class frequencies for the Huffman tree.
    bias : bool
        A bias per inner node (and per child of a wide root).
    root_width : int, optional
        ``K``: the tree's top levels become one softmax over ``K`` children
        (see ``docs/layer.md``, "A wide root").
    sparse : bool
        Sparse gradients for ``weight`` (and ``bias``) from ``forward``, for
        :class:`torch.optim.SparseAdam` or SGD; the wide root's parameters stay dense
        (:meth:`sparse_parameters` / :meth:`dense_parameters` split them).

    Examples
    --------
    >>> import torch
    >>> from hsw2v.layer.torch import HierarchicalSoftmaxLoss
    >>> hs = HierarchicalSoftmaxLoss(8, 5, counts=[50, 30, 10, 5, 5])
    >>> out = hs(torch.randn(3, 8), torch.tensor([0, 4, 2]))
    >>> out.output.shape, out.loss.shape
    (torch.Size([3]), torch.Size([]))
    >>> bool(torch.allclose(hs.log_prob(torch.randn(2, 8)).exp().sum(1), torch.ones(2)))
    True
    """

    def __init__(self, in_features: int, n_classes: int, tree=None, *, counts=None,
                 bias: bool = False, root_width: int | None = None, sparse: bool = False,
                 device=None, dtype=None):
        super().__init__()
        in_features = _positive(in_features, "in_features")
        n_classes = _positive(n_classes, "n_classes")
        if n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes}")
        tree, trusted = _make_tree(tree, counts, n_classes)
        codes = np.ascontiguousarray(tree.codes, dtype=np.uint8)
        points = np.ascontiguousarray(tree.points, dtype=np.int32)
        lengths = np.ascontiguousarray(tree.lengths, dtype=np.int32)
        if trusted:
            root = int(points[0, 0])
            children = child_table(codes, points, lengths, root=root)
            order = top_down_order(children, root)
        else:
            children, root, order = check_tree(codes, points, lengths)
        if len(lengths) != n_classes:
            raise ValueError(f"the tree has {len(lengths)} classes, but n_classes={n_classes}")
        self.in_features, self.n_classes, self.sparse = in_features, n_classes, bool(sparse)
        self.tree = Tree(codes=codes, points=points, lengths=lengths)
        self._children, self._root = children, root
        wide = None
        if root_width is not None:
            width = _positive(root_width, "root_width")
            if width < 2:
                raise ValueError(f"root_width must be at least 2 (or None), got {root_width}")
            wide = WideRoot(self.tree, children, order, width)
        self._wide = wide
        below = self.tree if wide is None else wide.below
        nodes, signs = padded_paths(below.codes, below.points, below.lengths)
        plan = level_plan(children, root, None if wide is None else wide.children)
        self._plan_sizes = [len(level) for level in plan.levels]
        kw = {"device": device, "dtype": dtype}
        self.weight = nn.Parameter(torch.zeros(n_classes - 1, in_features, **kw))
        self.bias = nn.Parameter(torch.zeros(n_classes - 1, **kw)) if bias else None
        self.root_weight = self.root_bias = None
        if wide is not None:
            self.root_weight = nn.Parameter(torch.zeros(wide.width, in_features, **kw))
            if bias:
                self.root_bias = nn.Parameter(torch.zeros(wide.width, **kw))
        buffers = {
            "nodes": nodes,
            "signs": signs,
            "slot": np.zeros(n_classes, np.int64) if wide is None else wide.slot,
            "leaf_columns": plan.leaf_columns,
            "top_inner": plan.top_inner,
        }
        for d, (level, up) in enumerate(zip(plan.levels, plan.parent_edges, strict=True)):
            buffers[f"level{d}"] = level
            buffers[f"parent_edges{d}"] = up
        for name, array in buffers.items():
            tensor = torch.from_numpy(np.ascontiguousarray(array))
            if tensor.dtype != torch.float32:
                tensor = tensor.to(torch.int64)
            elif dtype is not None:
                tensor = tensor.to(dtype)
            self.register_buffer(name, tensor.to(device), persistent=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_layer(cls, layer, *, sparse: bool = False, device=None):
        """A module with the tree and a copy of the weights of a
        :class:`hsw2v.HierarchicalSoftmax` (``layer.to_torch()`` calls this; the way back is
        ``HierarchicalSoftmax.from_torch(module)``)."""
        module = cls(layer.dim, layer.n_classes, layer.tree, bias=layer.intercept is not None,
                     root_width=layer.root_width, sparse=sparse, device=device)
        with torch.no_grad():
            module.weight.copy_(torch.from_numpy(np.asarray(layer.weights, np.float32)))
            if module.bias is not None:
                module.bias.copy_(torch.from_numpy(np.asarray(layer.intercept, np.float32)))
            if module.root_weight is not None:
                module.root_weight.copy_(torch.from_numpy(layer.root_weights))
            if module.root_bias is not None:
                module.root_bias.copy_(torch.from_numpy(layer.root_intercept))
        return module

    @property
    def root_width(self) -> int | None:
        """K, the number of children of the wide root (None for the binary root)."""
        return None if self._wide is None else self._wide.width

    # ------------------------------------------------------------------ parameters
    def sparse_parameters(self) -> list:
        """The parameters that get sparse gradients with ``sparse=True`` (``weight``,
        ``bias``): give them to :class:`torch.optim.SparseAdam`."""
        return [p for p in (self.weight, self.bias) if p is not None] if self.sparse else []

    def dense_parameters(self) -> list:
        """The other parameters (all of them without ``sparse=True``)."""
        sparse = {id(p) for p in self.sparse_parameters()}
        return [p for p in self.parameters() if id(p) not in sparse]

    # ------------------------------------------------------------------ scoring
    def forward(self, input: torch.Tensor, target: torch.Tensor) -> ASMOutput:
        """``(output, loss)``: ``log P(target_i | input_i)`` per row and their mean negative,
        at ``O(path length)`` dot products per row. ``input``: ``B x in_features`` (or one
        vector), ``target``: ``B`` class ids."""
        input, target, unbatched = self._check(input, target)
        lp = self._path_log_prob(input, target)
        if self._wide is not None:
            root = self._root_log_softmax(input)
            lp = lp + root.gather(1, self.slot[target].unsqueeze(1)).squeeze(1)
        output = lp.squeeze(0) if unbatched else lp
        return ASMOutput(output, -lp.mean())

    def _path_log_prob(self, input, target):
        nodes = self.nodes[target]
        signs = self.signs[target]
        rows = F.embedding(nodes, self.weight, sparse=self.sparse)  # B x L x d
        common = torch.promote_types(input.dtype, rows.dtype)
        scores = torch.bmm(rows.to(common), input.to(common).unsqueeze(2)).squeeze(2)
        acc = torch.promote_types(scores.dtype, torch.float32)  # float32 path sums under AMP
        scores = scores.to(acc)
        if self.bias is not None:
            bias = _SparseGather.apply(self.bias, nodes) if self.sparse else self.bias[nodes]
            scores = scores + bias.to(acc)
        signs = signs.to(acc)
        return (F.logsigmoid(scores * signs) * signs.abs()).sum(1)

    def _root_log_softmax(self, input):
        z = F.linear(input.to(torch.promote_types(input.dtype, self.root_weight.dtype)),
                     self.root_weight, self.root_bias)
        return F.log_softmax(z.to(torch.promote_types(z.dtype, torch.float32)), dim=1)

    def log_prob(self, input: torch.Tensor) -> torch.Tensor:
        """``log P(c | input_i)`` of every class: ``B x n_classes``, rows summing to 1 in
        probability. Level by level down the tree, ``O(B V)`` memory."""
        input, _, unbatched = self._check(input, None)
        scores = F.linear(input.to(torch.promote_types(input.dtype, self.weight.dtype)),
                          self.weight, self.bias)
        scores = scores.to(torch.promote_types(scores.dtype, torch.float32))
        if self._wide is None:
            top = scores.new_zeros(len(input), 1)
        else:
            top = self._root_log_softmax(input).to(scores.dtype)
        columns = [top]
        node_lp = top[:, self.top_inner]
        for d in range(len(self._plan_sizes)):
            if d:
                node_lp = columns[-1][:, getattr(self, f"parent_edges{d}")]
            s = scores[:, getattr(self, f"level{d}")]
            edges = torch.stack((F.logsigmoid(s), F.logsigmoid(-s)), dim=2)
            columns.append((node_lp.unsqueeze(2) + edges).flatten(1))
        out = torch.cat(columns, dim=1)[:, self.leaf_columns]
        return out.squeeze(0) if unbatched else out

    @torch.no_grad()
    def topk(self, input: torch.Tensor, k: int, method: str | None = None) -> TopK:
        """The ``k`` most probable classes of each row, exactly: ``(values, indices)`` as
        :func:`torch.topk` returns them, values being log-probabilities, most probable first.
        ``method="search"`` (default on the CPU): best-first search of the tree, as
        :meth:`hsw2v.HierarchicalSoftmax.topk`; ``"scan"`` (default on a GPU): the full
        distribution by chunks of rows, then :func:`torch.topk`."""
        input, _, unbatched = self._check(input, None)
        k = _positive(k, "k")
        if k > self.n_classes:
            raise ValueError(f"k must be at most n_classes={self.n_classes}, got {k}")
        if method is None:
            method = "search" if input.device.type == "cpu" else "scan"
        if method == "search":
            wide = {} if self._wide is None else {
                "wide_children": self._wide.children, "root_weights": _host(self.root_weight),
                "root_intercept": None if self.root_bias is None else _host(self.root_bias)}
            idx, logp = best_first_topk(
                input.detach().to("cpu", torch.float64).numpy(), _host(self.weight),
                None if self.bias is None else _host(self.bias), self._children, self._root,
                k, **wide)
            values = torch.from_numpy(logp).to(input.device, torch.float32)
            result = TopK(values, torch.from_numpy(idx).to(input.device))
        elif method == "scan":
            rows = max(1, _CHUNK_SCORES // self.n_classes)
            parts = [torch.topk(self.log_prob(input[i : i + rows]), k, dim=1)
                     for i in range(0, len(input), rows)]
            result = TopK(torch.cat([p.values for p in parts]),
                          torch.cat([p.indices for p in parts]))
        else:
            raise ValueError(f'method must be "search", "scan" or None, got {method!r}')
        if unbatched:
            return TopK(result.values.squeeze(0), result.indices.squeeze(0))
        return result

    def predict(self, input: torch.Tensor) -> torch.Tensor:
        """The most probable class of each row (int64), as
        :meth:`torch.nn.AdaptiveLogSoftmaxWithLoss.predict` returns it."""
        return self.topk(input, 1).indices[..., 0]

    # ------------------------------------------------------------------ helpers
    def _check(self, input, target):
        if not isinstance(input, torch.Tensor):
            raise TypeError(f"input must be a torch.Tensor, got {type(input).__name__}")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.dim() != 2 or input.shape[1] != self.in_features:
            raise ValueError(
                f"input must be (batch, {self.in_features}) or ({self.in_features},), got "
                f"shape {tuple(input.shape)}")
        if not input.is_floating_point():
            raise TypeError(f"input must hold floating-point numbers, got {input.dtype}")
        if target is None:
            return input, None, unbatched
        if not isinstance(target, torch.Tensor):
            raise TypeError(_target_type_message(target))
        if unbatched:
            target = target.reshape(1)
        if target.shape != (input.shape[0],):
            raise ValueError(
                f"target must hold one class id per row of input ({input.shape[0]}), got "
                f"shape {tuple(target.shape)}")
        if target.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8):
            raise TypeError(
                f"target must hold integer class ids (a torch.int64 tensor), got a tensor of "
                f"{target.dtype}: convert it with target.long() (after rounding, if the ids "
                "came as floats)"
            )
        if not _compiling() and len(target):
            lo, hi = int(target.min()), int(target.max())
            if lo < 0 or hi >= self.n_classes:
                raise IndexError(
                    f"target values must be in [0, {self.n_classes - 1}], but values in "
                    f"[{lo}, {hi}] were found")
        return input, target.long(), unbatched

    def extra_repr(self) -> str:
        wide = "" if self._wide is None else f", root_width={self._wide.width}"
        return (f"in_features={self.in_features}, n_classes={self.n_classes}, "
                f"bias={self.bias is not None}{wide}, sparse={self.sparse}")


class _SparseGather(torch.autograd.Function):
    """``bias[nodes]`` with a sparse (COO) gradient for ``bias``, as ``F.embedding(...,
    sparse=True)`` gives the weights (which it cannot do for a 1-D parameter)."""

    @staticmethod
    def forward(ctx, bias, nodes):
        ctx.save_for_backward(nodes)
        ctx.n = bias.shape[0]
        return bias[nodes]

    @staticmethod
    def backward(ctx, grad):
        (nodes,) = ctx.saved_tensors
        g = torch.sparse_coo_tensor(nodes.reshape(1, -1), grad.reshape(-1), (ctx.n,),
                                    check_invariants=False)
        return g, None


def from_word2vec(model, *, sparse: bool = False, device=None) -> HierarchicalSoftmaxLoss:
    """The output layer of a :class:`hsw2v.Word2Vec` trained with ``hs=1``: its tree and a
    copy of ``syn1`` (classes are the vocabulary's indices, ``model.wv.index_to_key``). The
    hidden vector is what the model scores with: an input vector (skip-gram) or the mean of
    the context's vectors (CBOW, ``cbow_mean=1``).

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "c", "d"]] * 20, vector_size=8, min_count=1, workers=1)
    >>> hs = from_word2vec(model)
    >>> h = torch.from_numpy(model.wv.vectors[:1])
    >>> bool(torch.allclose(hs.log_prob(h).exp().sum(), torch.tensor(1.0)))
    True
    """
    if getattr(model, "tree", None) is None or not getattr(model, "hs", False):
        raise ValueError("from_word2vec needs a Word2Vec model trained with hs=1 (it has no "
                         "hierarchical-softmax tree and syn1)")
    n_classes = len(model.tree.lengths)
    module = HierarchicalSoftmaxLoss(model.vector_size, n_classes, model.tree, sparse=sparse,
                                     device=device)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(np.asarray(model.syn1[: n_classes - 1],
                                                        dtype=np.float32)))
    return module


def _make_tree(tree, counts, n_classes: int):
    """``(tree, trusted)``: the tree asked for, and whether it was built here."""
    if tree is None:
        tree = "huffman" if counts is not None else "balanced"
    if isinstance(tree, str):
        if tree == "huffman":
            if counts is None:
                raise ValueError('tree="huffman" needs counts, one frequency per class')
            counts = np.asarray(counts)
            if counts.shape != (n_classes,) or not np.issubdtype(counts.dtype, np.number):
                raise ValueError(f"counts must hold one number per class ({n_classes}), got "
                                 f"shape {counts.shape} dtype {counts.dtype}")
            if (counts < 0).any() or not np.isfinite(counts).all():
                raise ValueError("counts must be non-negative finite numbers")
            return build_huffman_tree(counts), True
        if tree == "balanced":
            return balanced_tree(n_classes), True
        raise ValueError(f'tree must be "huffman", "balanced" or a tree, got {tree!r}')
    if not all(hasattr(tree, a) for a in ("codes", "points", "lengths")):
        raise TypeError(
            f"tree must be \"huffman\", \"balanced\" or an hsw2v tree (codes, points, lengths),"
            f" got {type(tree).__name__}")
    return tree, False


def _host(param: torch.Tensor) -> np.ndarray:
    """A float32 NumPy view (CPU float32 parameter) or copy of a parameter."""
    return np.ascontiguousarray(param.detach().to("cpu", torch.float32).numpy())


def _positive(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _compiling() -> bool:
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())
