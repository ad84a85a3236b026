"""Argument checks shared by the layer and its training (:mod:`hsw2v.layer`)."""

from __future__ import annotations

import numpy as np

from hsw2v.params import UINT64_MAX

OPTIMIZERS = ("sgd", "adagrad", "rowwise-adagrad")


def positive_int(value, name: str, high: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 1
        or (high is not None and value > high)
    ):
        limit = f" (at most {high})" if high is not None else ""
        raise ValueError(f"{name} must be a positive integer{limit}, got {value!r}")
    return int(value)


def check_seed(value) -> int:
    """A seed the random streams take (numpy's generators and the kernels' uint64 state)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
        0 <= value <= UINT64_MAX
    ):
        raise ValueError(f"seed must be an integer in [0, {UINT64_MAX}], got {value!r}")
    return int(value)
