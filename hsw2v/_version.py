"""The version of hsw2v: the one place it is written.

``pyproject.toml`` reads it for the distribution's metadata (``[tool.setuptools.dynamic]``,
read from this file's text, without importing the package), and ``hsw2v.__version__``,
``hsw2v info --build`` and ``hsw2v --version`` show it. This module imports nothing.
"""

__version__ = "0.1.0"
