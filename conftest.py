"""Collection of the package's own doctests (``--doctest-modules`` over ``hsw2v/``) leaves out
what cannot be imported here:

* the compiled CPU levels this machine cannot run: importing their packages is refused with
  an ImportError (``hsw2v._cpu.require``) rather than crashing with an illegal instruction;
* ``hsw2v/torch.py`` where PyTorch, an optional extra (``pip install "hsw2v[torch]"``), is not
  installed (tests/test_torch.py skips likewise).
"""

import importlib.util
from pathlib import Path

PACKAGE = Path(__file__).parent / "hsw2v"


def _levels_this_cpu_cannot_run() -> list[str]:
    try:
        from hsw2v import _cpu
    except ImportError:  # no compiled level at all: the tests say so themselves
        return []
    features = _cpu.cpu_features()
    return [name for name in _cpu.REQUIRES if _cpu.missing_features(name, features)]


collect_ignore = [str(PACKAGE / "_cpu" / name) for name in _levels_this_cpu_cannot_run()]
if importlib.util.find_spec("torch") is None:
    collect_ignore.append(str(PACKAGE / "torch.py"))
