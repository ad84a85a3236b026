"""hsw2v.torch.HierarchicalSoftmaxLoss against the NumPy layer, brute force, finite
differences (gradcheck), AMP and torch.compile; and `import hsw2v` without torch."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from hsw2v import HierarchicalSoftmax
from hsw2v.label_trees import label_tree


def test_import_hsw2v_does_not_import_torch():
    code = ("import sys, hsw2v; from hsw2v import HierarchicalSoftmax, Word2Vec; "
            "HierarchicalSoftmax.balanced(4, 2); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


torch = pytest.importorskip("torch")
from hsw2v.torch import HierarchicalSoftmaxLoss, from_word2vec  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
RNG = np.random.default_rng(7)
COUNTS = RNG.integers(1, 200, 40)


def _trees():
    """Every kind of tree the module takes: Huffman, balanced, k-means label tree."""
    y = RNG.integers(0, 40, 400)
    X = RNG.normal(size=(400, 6)).astype(np.float32)
    return {"huffman": {"counts": COUNTS}, "balanced": {"tree": "balanced"},
            "kmeans": {"tree": label_tree("kmeans", y, 40, X)}}


TREES = _trees()
VARIANTS = [(t, bias, width) for t in TREES for bias in (False, True) for width in (None, 7)]


def _module(tree: str, bias: bool, width, dtype=torch.float32, dim: int = 6, **kw):
    torch.manual_seed(3)
    m = HierarchicalSoftmaxLoss(dim, 40, **TREES[tree], bias=bias, root_width=width,
                                dtype=dtype, **kw)
    with torch.no_grad():  # random weights: zeros would hide mistakes in the signs
        for p in m.parameters():
            p.normal_(0, 0.7)
    return m


@pytest.mark.parametrize("tree,bias,width", VARIANTS)
def test_forward_and_log_prob_equal_the_numpy_layer(tree, bias, width):
    m = _module(tree, bias, width)
    layer = HierarchicalSoftmax.from_torch(m)
    H = RNG.normal(size=(9, 6)).astype(np.float32)
    y = RNG.integers(0, 40, 9)
    out = m(torch.from_numpy(H), torch.from_numpy(y))
    want = layer.log_prob(H, y)
    np.testing.assert_allclose(out.output.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    assert abs(out.loss.item() + want.mean()) < 1e-5
    full = m.log_prob(torch.from_numpy(H)).detach().numpy()
    np.testing.assert_allclose(full, layer.log_proba(H), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.exp(full).sum(axis=1), 1.0, atol=1e-5)  # a distribution
    np.testing.assert_allclose(full[np.arange(9), y], want, rtol=1e-5, atol=1e-5)


def test_probabilities_sum_to_one_at_zero_weights_and_follow_the_tree():
    m = HierarchicalSoftmaxLoss(4, 40, counts=COUNTS)
    p = m.log_prob(torch.randn(3, 4)).exp()
    torch.testing.assert_close(p.sum(1), torch.ones(3))
    depth = torch.from_numpy(m.tree.lengths.astype(np.float32))
    torch.testing.assert_close(p[0], 0.5**depth)  # zero weights: 2^-path length


@pytest.mark.parametrize("tree,bias,width", [("huffman", True, None), ("kmeans", True, 7),
                                             ("balanced", False, 7)])
def test_gradcheck_float64(tree, bias, width):
    m = _module(tree, bias, width, dtype=torch.float64, dim=3)
    H = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    y = torch.from_numpy(RNG.integers(0, 40, 5))
    names = [name for name, _ in m.named_parameters()]
    assert len(names) == 1 + bias + (width is not None) * (1 + bias)

    def loss(h, *ps):
        return torch.func.functional_call(m, dict(zip(names, ps, strict=True)), (h, y)).output

    assert torch.autograd.gradcheck(loss, (H, *[p.detach().clone().requires_grad_()
                                                for p in m.parameters()]))
    # log_prob: every class's log-probability (5 x 40 outputs), checked through random
    # projections of its Jacobian (torch's fast mode; the full Jacobian took 14 s of the 22)
    assert torch.autograd.gradcheck(lambda h: m.log_prob(h), (H,), fast_mode=True)


def test_gradient_reaches_only_the_path_rows():
    m = _module("huffman", True, None)
    y = torch.tensor([5, 5, 12])
    m(torch.randn(3, 6), y).loss.backward()
    touched = set(m.tree.points[5, : m.tree.lengths[5]]) | set(
        m.tree.points[12, : m.tree.lengths[12]])
    rows = set(torch.nonzero(m.weight.grad.abs().sum(1)).ravel().tolist())
    assert rows == touched
    assert set(torch.nonzero(m.bias.grad).ravel().tolist()) == touched


def test_sparse_gradients_equal_the_dense_ones_and_train_with_sparse_adam():
    dense, sparse = _module("huffman", True, 7), _module("huffman", True, 7, sparse=True)
    H, y = torch.randn(8, 6), torch.from_numpy(RNG.integers(0, 40, 8))
    dense(H, y).loss.backward()
    sparse(H, y).loss.backward()
    assert sparse.weight.grad.is_sparse and sparse.bias.grad.is_sparse
    torch.testing.assert_close(sparse.weight.grad.to_dense(), dense.weight.grad)
    torch.testing.assert_close(sparse.bias.grad.to_dense(), dense.bias.grad)
    torch.testing.assert_close(sparse.root_weight.grad, dense.root_weight.grad)
    assert len(sparse.sparse_parameters()) == 2 and len(sparse.dense_parameters()) == 2
    opts = [torch.optim.SparseAdam(sparse.sparse_parameters(), lr=0.05),
            torch.optim.Adam(sparse.dense_parameters(), lr=0.05)]
    before = sparse(H, y).loss.item()
    for _ in range(20):
        for o in opts:
            o.zero_grad()
        sparse(H, y).loss.backward()
        for o in opts:
            o.step()
    assert sparse(H, y).loss.item() < before - 0.5


@pytest.mark.parametrize("tree,bias,width", [("huffman", False, None), ("kmeans", True, 7),
                                             ("balanced", True, None)])
@pytest.mark.parametrize("method", ["search", "scan"])
def test_topk_equals_brute_force(tree, bias, width, method):
    m = _module(tree, bias, width)
    H = torch.randn(11, 6)
    lp = m.log_prob(H)
    top = m.topk(H, 5, method=method)
    want = torch.topk(lp, 5, dim=1)
    assert torch.equal(top.indices, want.indices)
    torch.testing.assert_close(top.values, want.values, rtol=1e-5, atol=1e-5)
    assert torch.equal(m.predict(H), lp.argmax(1))
    assert m.topk(H[0], 2).indices.shape == (2,)  # one vector in, one row out


@pytest.mark.parametrize("tree,bias,width", VARIANTS[::3])
def test_round_trip_with_the_numpy_layer(tree, bias, width):
    m = _module(tree, bias, width)
    layer = HierarchicalSoftmax.from_torch(m)
    back = layer.to_torch()
    for (name, a), (_, b) in zip(m.named_parameters(), back.named_parameters(), strict=True):
        assert torch.equal(a, b), name
    assert back.root_width == m.root_width and np.array_equal(back.tree.codes, m.tree.codes)
    # the copy is a copy: training the layer leaves the module alone
    layer.update(RNG.normal(size=(4, 6)).astype(np.float32), [1, 2, 3, 4], lr=0.5)
    assert not torch.equal(back.weight, torch.from_numpy(layer.weights))


def test_a_layer_trained_with_the_kernels_scores_the_same_in_torch():
    centres = RNG.normal(size=(6, 10))
    labels = RNG.integers(0, 6, 300)
    X = (centres[labels] + 0.3 * RNG.normal(size=(300, 10))).astype(np.float32)
    layer = HierarchicalSoftmax.balanced(6, dim=8, intercept=True).fit(X, labels, epochs=3)
    H = layer.transform(X[:20])
    m = layer.to_torch()
    np.testing.assert_allclose(m(torch.from_numpy(H), torch.from_numpy(labels[:20])).output
                               .detach().numpy(), layer.log_prob(H, labels[:20]), rtol=1e-5,
                               atol=1e-5)


def test_word2vec_output_layer():
    from hsw2v import Word2Vec

    sentences = [["a", "b", "c", "d", "e", "a", "b"]] * 30
    model = Word2Vec(sentences, vector_size=8, min_count=1, workers=1, sg=1, seed=1)
    hs = from_word2vec(model)
    layer = HierarchicalSoftmax(model.tree, 8)
    layer.weights[:] = model.syn1[: len(model.wv) - 1]
    h = model.wv.vectors[:3]
    np.testing.assert_allclose(hs.log_prob(torch.from_numpy(h)).detach().numpy(),
                               layer.log_proba(h), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="hs=1"):
        from_word2vec(Word2Vec(sentences, vector_size=8, min_count=1, hs=0, negative=2))


def _planted(n, n_classes, dim, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, dim)) * 3
    y = rng.integers(0, n_classes, n)
    X = centres[y] + rng.normal(size=(n, dim))
    return torch.tensor(X, dtype=torch.float32), torch.from_numpy(y)


def _train_accuracy(X, y, Xt, yt, n_classes):
    """Held-out accuracy of a linear encoder + the layer over a k-means label tree."""
    torch.manual_seed(0)
    encoder = torch.nn.Linear(X.shape[1], 16)
    tree = label_tree("kmeans", y.numpy(), n_classes, X.numpy())
    head = HierarchicalSoftmaxLoss(16, n_classes, tree=tree, bias=True)
    opt = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=0.03)
    for _ in range(6):
        for i in range(0, len(X), 64):
            opt.zero_grad()
            head(encoder(X[i : i + 64]), y[i : i + 64]).loss.backward()
            opt.step()
    with torch.no_grad():
        return (head.predict(encoder(Xt)) == yt).float().mean().item()


def test_training_on_planted_clusters_beats_a_control():
    X, y = _planted(1500, 20, 10, seed=1)
    acc = _train_accuracy(X[:1200], y[:1200], X[1200:], y[1200:], 20)
    shuffled = y[torch.randperm(len(y), generator=torch.Generator().manual_seed(0))]
    control = _train_accuracy(X[:1200], shuffled[:1200], X[1200:], shuffled[1200:], 20)
    assert acc > 0.8, acc  # well separated clusters: the layer learns them
    assert control < 0.15, control  # labels unrelated to the features: chance is 0.05
    assert acc > control + 0.6


def _amp_pair(device):
    m = _module("huffman", True, 7).to(device)
    H = torch.randn(16, 6, device=device, requires_grad=True)
    y = torch.from_numpy(RNG.integers(0, 40, 16)).to(device)
    return m, H, y


def _grads(m, H, y, context):
    m.zero_grad()
    H.grad = None
    with context:
        out = m(H, y)
    out.loss.backward()
    return out, H.grad.clone(), m.weight.grad.clone()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=cuda)])
def test_amp_agrees_with_float32(device):
    import contextlib

    m, H, y = _amp_pair(device)
    ref, gh, gw = _grads(m, H, y, contextlib.nullcontext())
    dtype = torch.bfloat16 if device == "cpu" else torch.float16
    amp, ah, aw = _grads(m, H, y, torch.autocast(device, dtype=dtype))
    assert amp.output.dtype == torch.float32  # path sums accumulated in float32
    torch.testing.assert_close(amp.output, ref.output, rtol=0.03, atol=0.05)
    torch.testing.assert_close(ah, gh, rtol=0.05, atol=0.02)
    torch.testing.assert_close(aw, gw, rtol=0.05, atol=0.02)
    with torch.autocast(device, dtype=dtype):
        lp = m.log_prob(H.detach())
    assert lp.dtype == torch.float32
    torch.testing.assert_close(lp.exp().sum(1), torch.ones(16, device=device), atol=1e-4,
                               rtol=0)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=cuda)])
def test_compile_agrees_with_eager(device):
    import contextlib

    m, H, y = _amp_pair(device)
    ref, gh, gw = _grads(m, H, y, contextlib.nullcontext())
    backend = "aot_eager" if device == "cpu" else "inductor"  # no C++ toolchain needed here
    compiled = torch.compile(m, backend=backend)
    m.zero_grad()
    H.grad = None
    out = compiled(H, y)
    out.loss.backward()
    torch.testing.assert_close(out.output, ref.output, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(H.grad, gh, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m.weight.grad, gw, rtol=1e-5, atol=1e-5)


@cuda
def test_cuda_equals_cpu():
    m = _module("kmeans", True, 7)
    H, y = torch.randn(10, 6), torch.from_numpy(RNG.integers(0, 40, 10))
    g = HierarchicalSoftmaxLoss.from_layer(HierarchicalSoftmax.from_torch(m), device="cuda")
    torch.testing.assert_close(g(H.cuda(), y.cuda()).output.cpu(), m(H, y).output)
    torch.testing.assert_close(g.log_prob(H.cuda()).cpu(), m.log_prob(H), rtol=1e-4, atol=1e-5)
    assert torch.equal(g.topk(H.cuda(), 3).indices.cpu(), m.topk(H, 3).indices)


def test_errors_say_what_was_wrong():
    m = HierarchicalSoftmaxLoss(4, 10)
    with pytest.raises(IndexError, match=r"\[0, 9\].*\[0, 10\]"):
        m(torch.randn(2, 4), torch.tensor([0, 10]))
    with pytest.raises(ValueError, match=r"\(batch, 4\)"):
        m(torch.randn(2, 5), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="one class id per row"):
        m(torch.randn(2, 4), torch.tensor([0, 1, 2]))
    with pytest.raises(TypeError, match="integer class ids"):
        m(torch.randn(2, 4), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="needs counts"):
        HierarchicalSoftmaxLoss(4, 10, tree="huffman")
    with pytest.raises(ValueError, match="one number per class"):
        HierarchicalSoftmaxLoss(4, 10, counts=[1, 2, 3])
    with pytest.raises(ValueError, match="the tree has 4 classes"):
        HierarchicalSoftmaxLoss(4, 10, tree=HierarchicalSoftmax.balanced(4, 2).tree)
    with pytest.raises(ValueError, match="prefix-free|binary tree"):
        good = HierarchicalSoftmax.balanced(4, 2).tree
        codes = good.codes.copy()  # a layer's tree arrays are read-only: edit a copy
        codes[1] = codes[0]
        bad = dataclasses.replace(good, codes=codes)
        HierarchicalSoftmaxLoss(4, 4, tree=bad)
    with pytest.raises(ValueError, match="k must be at most"):
        m.topk(torch.randn(1, 4), 11)
    with pytest.raises(TypeError, match="HierarchicalSoftmaxLoss"):
        HierarchicalSoftmax.from_torch(torch.nn.Linear(2, 2))


def test_the_example_runs_with_each_output_layer():
    from pathlib import Path

    import hsw2v

    script = Path(hsw2v.__file__).resolve().parents[1] / "examples" / "next_word.py"
    if not script.exists():
        pytest.skip("the examples are not installed with the package")
    # one interpreter runs the script once per output layer, as `python next_word.py --layer
    # L ...` would (torch is imported once, not three times)
    runs = "\n".join(
        f"sys.argv = [{str(script)!r}, '--layer', {layer!r}, '--steps', '2', '--batch', '32', "
        f"'--max-words', '20000']\nprint('== {layer}', flush=True)\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')"
        for layer in LAYERS
    )
    out = subprocess.run([sys.executable, "-c", f"import runpy, sys\n{runs}"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    parts = out.stdout.split("== ")[1:]
    assert [part.split("\n", 1)[0] for part in parts] == list(LAYERS)
    for layer, part in zip(LAYERS, parts, strict=True):
        assert f"{layer}: validation perplexity" in part
        assert part.count(" -> [") == 3


LAYERS = ("full", "adaptive", "hs")
