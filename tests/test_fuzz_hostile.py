"""A small fixed slice of each family of ``tests/fuzz_hostile.py`` (the model changed while
it trains; hostile inputs to the layer and the classifier; the layer built from buffers the
caller keeps writing; the command line's paths), run as the long runs are: many
cases per subprocess, where a death by a signal, a hang, an undocumented exception or a save
that reports success but does not load fails the test and names the case. The 10,000-case
runs of each family are recorded in ``docs/robustness.md``."""

from __future__ import annotations

import pytest
from fuzz_hostile import fuzz


@pytest.mark.parametrize(
    "family, inputs", [("train", 60), ("layer", 300), ("construct", 300), ("paths", 100)]
)
def test_a_fixed_slice_of_each_hostile_family(family, inputs):
    result = fuzz(family, inputs=inputs, batch=inputs, seed=2026)
    assert result["tried"] == inputs
    assert not result["failures"], result["failures"][:3]
    assert "not run (batch died)" not in result["tally"], result["tally"]
    # the slice reaches both ends: cases that run through and cases that are refused
    refused = ("refused", "status 1", "status 2")
    assert any(key.startswith(refused) for key in result["tally"]), result["tally"]
    ran = ("ok", "trained", "status 0")
    assert any(key in ran for key in result["tally"]), result["tally"]
