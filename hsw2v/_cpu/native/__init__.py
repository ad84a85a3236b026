"""The vector kernels compiled for the native level (see hsw2v._cpu)."""

from hsw2v._cpu import require

require("native")
