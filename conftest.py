"""Collection of the package's own doctests: ``hsw2v/torch.py`` needs PyTorch, an optional
extra (``pip install "hsw2v[torch]"``), so its examples are not collected where it is not
installed (tests/test_torch.py skips likewise)."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("torch") else ["hsw2v/torch.py"]
