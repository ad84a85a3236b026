"""Hostile input, round three, on the layer: it owns its tree (class 2) and no query answers
NaN from finite weights (class 5). The tree routes run in child processes, where a
segmentation fault fails the test instead of killing the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from hsw2v.huffman import build_huffman_tree
from hsw2v.layer import HierarchicalSoftmax

_PRELUDE = textwrap.dedent(
    """
    import numpy as np
    from hsw2v.huffman import build_huffman_tree
    from hsw2v.layer import HierarchicalSoftmax

    def tree_of(counts):
        return build_huffman_tree(np.asarray(counts, dtype=np.int64))

    def refused(call):
        try:
            call()
        except ValueError as exc:
            return str(exc)
        return None

    rng = np.random.default_rng(0)
    H = rng.standard_normal((4, 3)).astype(np.float32)
    y = np.array([0, 1, 2, 5])
    """
)

# Each route ends by printing one line the test checks; a crash prints nothing.
ROUTES = {
    # the caller keeps writing a buffer the tree's arrays are views of
    "view_of_a_written_buffer": """
        t = tree_of([9, 7, 5, 3, 2, 1])
        buf = np.zeros(t.points.size + 16, dtype=np.int32)
        view = buf[8 : 8 + t.points.size].reshape(t.points.shape)
        view[...] = t.points
        t2 = type(t)(codes=t.codes, points=view, lengths=t.lengths)
        layer = HierarchicalSoftmax(t2, 3)
        layer.weights[:] = rng.standard_normal(layer.weights.shape)
        before = layer.log_prob(H, y)
        buf[:] = 2**30  # the caller's own buffer: not the layer's
        after = layer.log_prob(H, y)
        print("same" if np.array_equal(before, after) else "changed")
    """,
    "caller_array_edited": """
        t = tree_of([9, 7, 5, 3, 2, 1])
        layer = HierarchicalSoftmax(t, 3)
        before = layer.log_prob(H, y)
        t.points[...] = 2**30
        t.lengths[...] = 10**6
        print("same" if np.array_equal(before, layer.log_prob(H, y)) else "changed")
    """,
    "caller_flags_kept": """
        t = tree_of([9, 7, 5, 3, 2, 1])
        HierarchicalSoftmax(t, 3)
        flags = [a.flags.writeable for a in (t.codes, t.points, t.lengths)]
        print("same" if all(flags) else f"changed {flags}")
    """,
    "own_array_made_writeable_and_edited": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3)
        layer.tree.points.flags.writeable = True
        layer.tree.points[...] = 2**30
        print("refused" if refused(lambda: layer.log_prob(H, y)) else "ran")
    """,
    "own_array_edited_behind_the_flag": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3)
        for name in ("points", "lengths"):
            arr = getattr(layer.tree, name)
            arr.flags.writeable = True
            arr[...] = 2**30 if name == "points" else 10**6
            arr.flags.writeable = False
            print("refused" if refused(lambda: layer.log_prob(H, y)) else "ran")
            break
    """,
    "own_lengths_edited_behind_the_flag": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3)
        arr = layer.tree.lengths
        arr.flags.writeable = True
        arr[...] = 10**6
        arr.flags.writeable = False
        print("refused" if refused(lambda: layer.log_prob(H, y)) else "ran")
    """,
    "child_table_edited_behind_the_flag": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3)
        for arr, value in ((layer.children, -(10**6)), (layer.order, 10**6)):
            arr.flags.writeable = True
            arr[...] = value
            arr.flags.writeable = False
        print("refused" if refused(lambda: layer.proba(H)) else "ran")
    """,
    "wide_root_slot_edited_behind_the_flag": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3, root_width=3)
        for arr in (layer._wide.slot, layer._wide.expanded):
            arr.flags.writeable = True
            arr[...] = 10**6
            arr.flags.writeable = False
        print("refused" if refused(lambda: layer.proba(H)) else "ran")
    """,
    "padding_past_a_path_edited_then_rechecked": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3, root_width=3)
        points = layer.tree.points
        points.flags.writeable = True  # left writeable: the layer checks its tree again
        L = points.shape[1]
        for c, n in enumerate(layer.tree.lengths):
            points[c, n:] = -(2**31)  # entries past the path's end: never followed
        out = layer.log_prob(H, y)
        print("same" if np.isfinite(out).all() else "changed")
    """,
    "fit_after_an_edit_behind_the_flag": """
        layer = HierarchicalSoftmax(tree_of([9, 7, 5, 3, 2, 1]), 3)
        arr = layer.tree.points
        arr.flags.writeable = True
        arr[...] = -(2**30)
        arr.flags.writeable = False
        X = rng.standard_normal((30, 5)).astype(np.float32)
        yy = rng.integers(0, 6, 30)
        print("refused" if refused(lambda: layer.fit(X, yy, epochs=1, workers=1)) else "ran")
    """,
}

EXPECTED = {
    "view_of_a_written_buffer": "same",
    "caller_array_edited": "same",
    "caller_flags_kept": "same",
    "padding_past_a_path_edited_then_rechecked": "same",
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_layer_owns_its_tree(route):
    code = _PRELUDE + textwrap.dedent(ROUTES[route])
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, (route, result.returncode, result.stderr[-2000:])
    assert result.stdout.split() == [EXPECTED.get(route, "refused")], result.stdout


def test_the_bounds_check_names_the_class_and_what_to_do():
    layer = HierarchicalSoftmax(build_huffman_tree(np.array([5, 4, 3, 2])), 2)
    arr = layer.tree.points
    arr.flags.writeable = True
    arr[2, 0] = 99
    arr.flags.writeable = False
    with pytest.raises(ValueError, match=r"path of class 2 leaves the tree.*build a new layer"):
        layer.log_prob(np.zeros((1, 2), np.float32), [2])
    assert np.isfinite(layer.log_prob(np.zeros((1, 2), np.float32), [0])).all()


# ------------------------------------------------------------------ class 5: NaN answers


def _huge_layer(intercept: bool, root_width=None):
    tree = build_huffman_tree(np.array([9, 7, 5, 3, 2, 1], dtype=np.int64))
    layer = HierarchicalSoftmax(tree, 4, intercept=intercept, root_width=root_width)
    rng = np.random.default_rng(3)
    layer.weights[:] = rng.choice([-3e38, 3e38], size=layer.weights.shape)
    if layer.intercept is not None:
        layer.intercept[:] = rng.choice([-3e38, 3e38], size=layer.intercept.shape)
    if layer.root_weights is not None:
        layer.root_weights[:] = rng.choice([-3e38, 3e38], size=layer.root_weights.shape)
    return layer


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("root_width", [None, 3])
def test_queries_on_finite_weights_near_the_float32_limit_answer_no_nan(intercept, root_width):
    layer = _huge_layer(intercept, root_width)
    H = np.random.default_rng(4).choice([-3e38, 3e38, 1.0], size=(8, 4)).astype(np.float32)
    y = np.arange(8) % 6
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow warning either
        answers = {
            "log_prob": layer.log_prob(H, y),
            "log_proba": layer.log_proba(H),
            "proba": layer.proba(H),
            "topk": layer.topk(H, 3)[1],
        }
    weights = layer.weights.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        answers["log_prob again"] = layer.log_prob(H, y)
    assert np.array_equal(layer.weights, weights)  # a query never writes the weights
    for name, value in answers.items():
        assert not np.isnan(value).any(), (name, value)
    proba = answers["proba"]
    assert np.allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    assert (answers["log_proba"] <= 0).all()


@pytest.mark.parametrize("lr", [1e36, 1e37])
def test_after_a_huge_update_the_queries_answer_no_nan(lr):
    """The reported route: ``update()`` at an enormous rate leaves finite weights near the
    float32 limit (no divergence to refuse), and the queries must still answer."""
    layer = HierarchicalSoftmax(build_huffman_tree(np.array([9, 7, 5, 3, 2, 1])), 4)
    H = (10 * np.random.default_rng(5).standard_normal((16, 4))).astype(np.float32)
    y = np.arange(16) % 6
    layer.update(H, y, lr=lr)
    assert np.isfinite(layer.weights).all() and np.abs(layer.weights).max() > 1e37
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        proba = layer.proba(H)
        log_prob = layer.log_prob(H, y)
        top = layer.topk(H, 2)[1]
    assert not np.isnan(proba).any() and not np.isnan(log_prob).any()
    assert not np.isnan(top).any()
    assert np.allclose(proba.sum(axis=1), 1.0)
    # the answers agree with each other: log_prob is the log of proba's entry
    assert np.allclose(np.exp(log_prob), proba[np.arange(16), y], atol=1e-9)


@pytest.mark.parametrize("nodes", [False, True])
@pytest.mark.parametrize("intercept", [False, True])
def test_backward_near_the_float32_limit_leaves_the_weights_alone(nodes, intercept):
    layer = _huge_layer(intercept)
    H = np.random.default_rng(4).choice([-3e38, 3e38, 1.0], size=(3, 4)).astype(np.float32)
    weights = layer.weights.copy()
    bias = None if layer.intercept is None else layer.intercept.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        layer.backward(H, [0, 1, 2], nodes=nodes)
    assert np.array_equal(layer.weights, weights)
    if bias is not None:
        assert np.array_equal(layer.intercept, bias)
