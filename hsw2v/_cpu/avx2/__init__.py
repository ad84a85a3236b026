"""The vector kernels compiled for the avx2 level (see hsw2v._cpu)."""

from hsw2v._cpu import require

require("avx2")
