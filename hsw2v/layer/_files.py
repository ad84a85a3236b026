"""Saving and loading :class:`hsw2v.layer.HierarchicalSoftmax` in hsw2v's pickle-free bundle
format (:mod:`hsw2v.persist`), every array checked before the kernels may index with it.

A mixin: :class:`hsw2v.layer.HierarchicalSoftmax` inherits it.
"""

from __future__ import annotations

import numpy as np

from hsw2v import persist
from hsw2v.huffman import Tree
from hsw2v.layer._args import check_seed as _seed
from hsw2v.running.params import VECTOR_SIZE_MAX

_FORMAT_KIND = "HierarchicalSoftmax"


class LayerFiles:
    """``save`` and ``load``, for :class:`hsw2v.layer.HierarchicalSoftmax`."""

    def save(self, path) -> None:
        """Write the layer (tree, weights, and the fitted input matrix if any) in hsw2v's
        pickle-free bundle format (:mod:`hsw2v.persist`), atomically.

        Examples
        --------
        >>> import os, tempfile
        >>> from hsw2v import HierarchicalSoftmax
        >>> path = os.path.join(tempfile.mkdtemp(), "layer.hsw2v")
        >>> HierarchicalSoftmax.balanced(5, dim=3).save(path)
        >>> HierarchicalSoftmax.load(path).n_classes
        5
        """
        self._check_state()  # a replaced tree or misshapen weights: refused, nothing written
        arrays = {
            "weights": self.weights,
            "codes": self.tree.codes,
            "points": self.tree.points,
            "lengths": self.tree.lengths,
        }
        if self.input_weights is not None:
            arrays["input_weights"] = self.input_weights
        if self.intercept is not None:
            arrays["intercept"] = self.intercept
        if self.root_weights is not None:
            arrays["root_weights"] = self.root_weights
        if self.root_intercept is not None:
            arrays["root_intercept"] = self.root_intercept
        meta = {"dim": self.dim, "n_classes": self.n_classes, "seed": self.seed}
        if self.root_width is not None:
            meta["root_width"] = self.root_width
        meta["history"] = [float(v) for v in self.history]
        persist.save_bundle(path, _FORMAT_KIND, meta, arrays)

    @classmethod
    def load(cls, path) -> LayerFiles:
        """Read a layer written by :meth:`save`; every array is checked (the tree fully, as
        :meth:`from_paths` does) before the kernels may index with it."""
        meta, arrays = persist.load_bundle(path, kind=_FORMAT_KIND)

        def bad(what):
            return ValueError(f"{str(path)!r} holds an inconsistent HierarchicalSoftmax: {what}")

        if not isinstance(meta, dict):
            raise bad("its metadata is not a JSON object")
        dim, n = meta.get("dim"), meta.get("n_classes")
        if not (
            type(dim) is int and type(n) is int and 1 <= dim <= VECTOR_SIZE_MAX and 2 <= n <= 2**31
        ):
            raise bad(f"dim={dim!r}, n_classes={n!r}")
        history = meta.get("history", [])
        if not isinstance(history, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in history
        ):
            raise bad("history must be a list of numbers (the mean loss of each epoch)")
        try:
            seed = _seed(meta.get("seed", 1))
        except ValueError as exc:
            raise bad(str(exc)) from None
        want = {"weights": ("<f4", (n - 1, dim)), "lengths": ("<i4", (n,))}
        for name, (dtype, shape) in want.items():
            arr = arrays.get(name)
            if arr is None or arr.dtype != np.dtype(dtype) or arr.shape != shape:
                raise bad(f"array {name!r} should be {dtype} {shape}")
        for name, dtype in (("codes", np.uint8), ("points", np.int32)):
            arr = arrays.get(name)
            if arr is None or arr.dtype != dtype or arr.ndim != 2 or arr.shape[0] != n:
                raise bad(f"array {name!r} should be {np.dtype(dtype)} with {n} rows")
        tree = Tree(arrays["codes"], arrays["points"], arrays["lengths"])
        width = meta.get("root_width")
        if width is not None and not (type(width) is int and 2 <= width <= n):
            raise bad(f"root_width={width!r} (an integer in [2, n_classes] or absent)")
        if (width is None) != ("root_weights" not in arrays):
            raise bad("root_width and the array 'root_weights' come together")
        if width is not None and ("intercept" in arrays) != ("root_intercept" in arrays):
            raise bad("a wide root has an intercept exactly when the inner nodes have one")
        try:
            layer = cls(tree, dim, seed, intercept="intercept" in arrays, root_width=width)
        except ValueError as exc:
            raise bad(str(exc)) from None
        layer.weights = np.ascontiguousarray(arrays["weights"])
        if "input_weights" in arrays:
            w = arrays["input_weights"]
            if w.dtype != np.float32 or w.ndim != 2 or w.shape[1] != dim or w.shape[0] < 1:
                raise bad(f"array 'input_weights' should be float32 m x {dim}")
            layer.input_weights = np.ascontiguousarray(w)
        if "intercept" in arrays:
            b = arrays["intercept"]
            if b.dtype != np.float32 or b.shape != (n - 1,):
                raise bad(f"array 'intercept' should be float32 ({n - 1},)")
            layer.intercept = np.ascontiguousarray(b)
        for name, shape in (("root_weights", (width, dim)), ("root_intercept", (width,))):
            if name in arrays:
                a = arrays[name]
                if a.dtype != np.float32 or a.shape != shape:
                    raise bad(f"array {name!r} should be float32 {shape}")
                setattr(layer, name, np.ascontiguousarray(a))
        layer.history = [float(v) for v in history]
        return layer
