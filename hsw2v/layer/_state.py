"""The layer's arrays checked before each kernel call: the index arrays (tree, child table,
order, wide root) frozen read-only once checked, and every weight array's shape and dtype.

Functions over a :class:`hsw2v.layer.HierarchicalSoftmax` that read it and write nothing on
it; the layer itself re-derives its tree when one was replaced (``_recheck_tree``).
"""

from __future__ import annotations

import numpy as np


def structure_arrays(layer) -> list:
    """Every array the kernels follow as indices (the tree, its child table and order, the
    wide root's frontier), as the layer holds them now."""
    arrays = [
        layer.tree,
        layer.tree.codes,
        layer.tree.points,
        layer.tree.lengths,
        layer.children,
        layer.order,
    ]
    if layer._wide is not None:
        wide = layer._wide
        below = wide.below
        arrays += [
            wide,
            wide.children,
            wide.slot,
            wide.expanded,
            below,
            below.codes,
            below.points,
            below.lengths,
        ]
    return arrays


def freeze_structure(layer) -> tuple:
    """Make the checked index arrays read-only (an in-place edit then raises numpy's
    "assignment destination is read-only") and return what :func:`structure_changed`
    compares with later."""
    arrays = structure_arrays(layer)
    for arr in arrays:
        if isinstance(arr, np.ndarray):
            arr.flags.writeable = False
    return (tuple(arrays), layer.n_classes, layer.root)


def structure_changed(layer) -> bool:
    """In O(1): whether an index array is no longer the one checked when the layer was built
    (replaced), or was made writeable again (and maybe edited); then it is checked in full.
    The layer owns copies of its tree, so no caller's buffer can change under it; an array
    made writeable, edited and made read-only again passes this test, and the kernels' own
    bounds check on the paths they follow (one compare per step, every call) refuses it."""
    structure = getattr(layer, "_structure", None)
    now = structure_arrays(layer)
    return (
        structure is None
        or len(now) != len(structure[0])
        or any(a is not b for a, b in zip(now, structure[0], strict=False))
        or (layer.n_classes, layer.root) != structure[1:]
        or any(isinstance(a, np.ndarray) and a.flags.writeable for a in now)
    )


def check_arrays(layer) -> None:
    """The wide root's index arrays in range (:func:`check_wide_root`), and every weight
    array of the shape and dtype the kernels index (a ValueError naming the attribute)."""
    if layer._wide is not None:
        check_wide_root(layer)
    inner = layer.n_classes - 1
    expect = {"weights": ((inner, layer.dim), np.float32)}
    if layer.intercept is not None:
        expect["intercept"] = ((inner,), np.float32)
    if layer._wide is not None:
        expect["root_weights"] = ((layer._wide.width, layer.dim), np.float32)
        if layer.root_intercept is not None:
            expect["root_intercept"] = ((layer._wide.width,), np.float32)
    if layer.input_weights is not None:
        m = getattr(layer.input_weights, "shape", (0,))[0]
        expect["input_weights"] = ((m, layer.dim), np.float32)
    for name, (shape, dtype) in expect.items():
        arr = getattr(layer, name)
        if (
            not isinstance(arr, np.ndarray)
            or arr.shape != shape
            or arr.dtype != dtype
            or not arr.flags.c_contiguous
        ):
            got = f"{arr.dtype} {arr.shape}" if isinstance(arr, np.ndarray) else type(arr).__name__
            raise ValueError(
                f"layer.{name} must be a C-contiguous {np.dtype(dtype)} array of "
                f"shape {shape}, got {got}: assign e.g. "
                f"np.ascontiguousarray(values, dtype=np.float32) of that shape"
            )


def check_wide_root(layer) -> None:
    """The wide root's index arrays, which NumPy indexes with, still lie in range (a few
    vectorised passes over ``V`` ids): an edit behind their read-only flag is a
    ValueError, not an IndexError from deep inside a query."""
    wide, n_inner = layer._wide, layer.n_classes - 1
    K = len(wide.children)
    bad = [
        name
        for name, arr, low, high in (
            ("slot", wide.slot, 0, K),
            ("expanded", wide.expanded, 0, n_inner),
            ("children", wide.children, -layer.n_classes, n_inner),
        )
        if len(arr) and (int(arr.min()) < low or int(arr.max()) >= high)
    ]
    if bad or len(wide.slot) != layer.n_classes or len(wide.expanded) != K - 1:
        raise ValueError(
            f"the layer's wide root arrays ({', '.join(bad) or 'their sizes'}) were "
            "changed after the layer checked them: do not edit a layer's tree, build a "
            "new layer (HierarchicalSoftmax.from_paths(..., root_width=K)) instead"
        )
