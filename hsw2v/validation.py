"""``hsw2v.validation`` is :mod:`hsw2v.running.validation`, the checks of every index the
kernels follow, under its public name.

Both names are one module object (the import system returns what ``sys.modules`` holds once
a module has run), so ``import hsw2v.validation`` and
``from hsw2v.validation import check_model_for_training`` keep working since the checks moved
into the running layer, beside the objectives and the trainer that read them.
"""

import sys

from hsw2v.running import validation as _home

sys.modules[__name__] = _home
