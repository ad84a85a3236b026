"""The vector kernels compiled for the avx2 level (see hsw2v._cpu)."""
