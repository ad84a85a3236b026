"""Entry point for ``python -m hsw2v``; see :mod:`hsw2v.cli`."""

from hsw2v.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
