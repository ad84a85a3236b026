"""Hostile input, round three: errors that say what was wrong and what to do (class 6)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from hsw2v import KeyedVectors


def _kv(rows):
    kv = KeyedVectors(3)
    kv.add_vectors(["zero", "b", "c"], np.array(rows, dtype=np.float32))
    return kv


def test_wmdistance_names_a_zero_vector_and_what_to_do():
    kv = _kv([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError) as caught:
        kv.wmdistance(["zero", "b"], ["c"])
    message = str(caught.value)
    assert "'zero'" in message and "all zeros" in message and "norm=False" in message
    assert "diverged" not in message
    assert np.isfinite(kv.wmdistance(["zero", "b"], ["c"], norm=False))


def test_wmdistance_names_a_non_finite_vector():
    kv = _kv([[np.nan, 0, 0], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(ValueError, match=r"vectors of 'zero' hold NaN or infinite values"):
        kv.wmdistance(["zero", "b"], ["c"], norm=False)


@pytest.mark.parametrize("flag", ["--analogies", "--pairs"])
def test_eval_on_a_file_that_is_not_utf8_names_the_file_and_line(flag, tmp_path):
    kv = _kv([[1, 0, 0], [1, 1, 0], [0, 1, 1]])
    kv.save_word2vec_format(tmp_path / "v.txt")
    body = (
        b": s\nzero b c zero\n\xff\xfe bad\n"
        if flag == "--analogies"
        else b"zero\tb\t9\n\xff\tc\t1\n"
    )
    (tmp_path / "q.txt").write_bytes(body)
    result = run_cli("eval", "v.txt", flag, "q.txt", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = "3" if flag == "--analogies" else "2"
    assert "'q.txt'" in lines[0] and f"line {line} is not utf8" in lines[0], lines[0]
    assert "convert the file" in lines[0]


def test_torch_loss_says_which_target_type_it_needs_and_how_to_convert():
    torch = pytest.importorskip("torch")
    from hsw2v.torch import HierarchicalSoftmaxLoss

    loss = HierarchicalSoftmaxLoss(4, 5)
    x = torch.zeros(3, 4)
    with pytest.raises(TypeError, match=r"torch\.Tensor of integer .*torch\.from_numpy"):
        loss(x, np.array([0, 1, 2]))
    with pytest.raises(TypeError, match=r"got a list: convert it with torch\.as_tensor"):
        loss(x, [0, 1, 2])
    with pytest.raises(TypeError, match=r"torch\.float32: convert it with target\.long\(\)"):
        loss(x, torch.zeros(3))
    assert torch.isfinite(loss(x, torch.tensor([0, 1, 2])).loss)
