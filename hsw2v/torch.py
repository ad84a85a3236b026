"""``hsw2v.torch`` is :mod:`hsw2v.layer.torch`, the layer as a PyTorch module, under its
public name (needs PyTorch: ``pip install torch``, or from a source checkout ``pip install ".[torch]"``).

Both names are one module object (the import system returns what ``sys.modules`` holds once
a module has run), so ``from hsw2v.torch import HierarchicalSoftmaxLoss`` keeps working since
the PyTorch layer moved beside the layer it mirrors.
"""

import sys

from hsw2v.layer import torch as _home

sys.modules[__name__] = _home
