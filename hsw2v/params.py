"""``hsw2v.params`` is :mod:`hsw2v.running.params`, the parameter table, under its public name.

Both names are one module object (the import system returns what ``sys.modules`` holds once
a module has run), so ``import hsw2v.params``, ``from hsw2v.params import PARAMS`` and
attributes set on either name keep working since the table moved into the running layer.
"""

import sys

from hsw2v.running import params as _home

sys.modules[__name__] = _home
