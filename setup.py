"""Build the Cython kernels.

Compiler flags: ``-O3`` plus the subset of fast-math that lets GCC vectorise the dot-product
reductions (reassociation) without changing the process's floating-point mode (full
``-ffast-math`` at link time would set flush-to-zero for every program that imports us).
``HSW2V_NATIVE=0`` drops ``-march=native`` for a portable build.
"""

import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

compile_args = []
if sys.platform != "win32":
    compile_args = [
        "-O3",
        "-fno-math-errno",
        "-fno-trapping-math",
        "-fassociative-math",
        "-fno-signed-zeros",
        "-freciprocal-math",
        "-funroll-loops",
    ]
    if os.environ.get("HSW2V_NATIVE", "1") != "0":
        compile_args.append("-march=native")

extensions = [
    Extension(
        "hsw2v._inner",
        ["hsw2v/_inner.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "hsw2v._query",
        ["hsw2v/_query.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    # The corpus_file reader and the learning-rate schedule: no vector math to vectorise, and
    # strict IEEE arithmetic (no reassociation, no fused multiply-add) so that the schedule
    # gives the same bits in every build.
    Extension(
        "hsw2v._corpus_file",
        ["hsw2v/_corpus_file.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O2", "-ffp-contract=off"] if sys.platform != "win32" else [],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "hsw2v._recording",
        ["hsw2v/_recording.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
    Extension(
        "hsw2v._layer",
        ["hsw2v/_layer.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
