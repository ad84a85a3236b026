"""What :meth:`hsw2v.layer.HierarchicalSoftmax.backward` returns with ``nodes=True``: the
:class:`Gradient` of the hidden vectors and of the inner-node rows a batch touched, and its
assembly from the kernel's coefficient at every step of every path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


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


def node_gradient(H, G, points, lengths, hidden, root, with_intercept: bool) -> Gradient:
    """The :class:`Gradient` of a batch from ``G`` (float32 B x L: the kernel's ``g_j =
    dL/df_j`` at every step of every row's path, ``points`` / ``lengths`` those paths, one row
    per example), ``hidden`` (``dL/dH``) and ``root`` (the wide root's ``(dL/dH part,
    dL/droot_weights, dL/droot_intercept)``, or None): ``dL/dweights[n] = sum g h`` over the
    steps through node ``n``, and ``dL/dintercept[n] = sum g`` with ``with_intercept``."""
    import scipy.sparse as sp

    on_path = np.arange(G.shape[1]) < lengths[:, None]
    node_ids = points[on_path].astype(np.int64)
    touched, slot = np.unique(node_ids, return_inverse=True)
    rows_of = np.repeat(np.arange(len(H)), lengths)  # row b of each (b, j) step, in order
    steps = sp.csr_array((G[on_path], (slot, rows_of)), shape=(len(touched), len(H)))
    rows = np.asarray(steps @ H, dtype=np.float32).reshape(len(touched), H.shape[1])
    node_bias = None
    if with_intercept:
        node_bias = np.bincount(slot, weights=G[on_path], minlength=len(touched))
        node_bias = node_bias.astype(np.float32)
    if root is None:
        return Gradient(hidden, touched, rows, node_bias)
    return Gradient(hidden, touched, rows, node_bias, *root[1:])
