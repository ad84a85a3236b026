"""Live training progress: a tqdm bar, or any callable, fed by ``Word2Vec.train(progress=...)``.

``Word2Vec.train(..., progress=True)`` draws a bar on stderr with the share of all epochs
done, the training speed in words per second, the current learning rate and the time left
(tqdm is an optional extra: ``pip install tqdm``, or from a source checkout ``pip install ".[progress]"``). ``progress`` may also be
any callable; it is then called a few times a second, in the thread that called
``train()``, with a :class:`hsw2v.running.epochs.Progress`.

Examples
--------
>>> from hsw2v import Word2Vec
>>> seen = []
>>> model = Word2Vec(vector_size=8, min_count=1, workers=1)
>>> model.build_vocab([["a", "b", "c"]] * 100)
>>> _ = model.train([["a", "b", "c"]] * 100, total_examples=100, epochs=2,
...                 progress=seen.append)
>>> sorted({p.epoch for p in seen if p.fraction == 1.0})  # each epoch reports its end
[0, 1]
>>> seen[-1].epoch, seen[-1].epochs, seen[-1].raw_words
(1, 2, 300)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["ProgressBar", "resolve"]


class ProgressBar:
    """A tqdm bar over all epochs of one ``train()`` call, in percent of the work.

    The bar's postfix shows the effective words per second of the current epoch and the
    learning rate reached; tqdm's own estimate gives the time left.

    Parameters
    ----------
    file
        Stream the bar is drawn on (default ``sys.stderr``).
    **tqdm_options
        Passed on to ``tqdm.tqdm`` (e.g. ``leave=False``, ``disable=True``).

    Raises
    ------
    ImportError
        If tqdm is not installed.

    Examples
    --------
    >>> import io
    >>> from hsw2v.running.epochs import Progress
    >>> bar = ProgressBar(file=io.StringIO())
    >>> bar(Progress(epoch=0, epochs=2, fraction=0.5, trained_words=900, raw_words=1000,
    ...              seconds=0.5, alpha=0.02))
    >>> bar.percent
    25.0
    >>> bar.close()
    """

    def __init__(self, file: TextIO | None = None, **tqdm_options: Any) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "progress=True needs tqdm: pip install tqdm (or, from a source checkout, pip install '.[progress]')"
            ) from None
        options = {
            "total": 100.0,
            "unit": "%",
            "file": sys.stderr if file is None else file,
            "dynamic_ncols": True,
            "bar_format": "{l_bar}{bar}| [{elapsed}<{remaining}{postfix}]",
        }
        options.update(tqdm_options)
        self._bar = tqdm(**options)
        self.percent = 0.0

    def __call__(self, info: Any) -> None:
        """Move the bar to ``info`` (a :class:`hsw2v.running.epochs.Progress`)."""
        percent = 100.0 * (info.epoch + info.fraction) / max(info.epochs, 1)
        self._bar.set_description(f"epoch {info.epoch + 1}/{info.epochs}", refresh=False)
        speed = info.trained_words / info.seconds if info.seconds > 0 else 0.0
        self._bar.set_postfix_str(f"{speed:,.0f} words/s, alpha {info.alpha:.5f}", refresh=False)
        step = max(percent - self.percent, 0.0)
        if percent >= 100.0:  # the end: close() prints the final line, once
            self._bar.n += step
        else:
            self._bar.update(step)
        self.percent = max(percent, self.percent)

    def close(self) -> None:
        """Finish the bar (``train()`` calls this when it returns or fails).

        Examples
        --------
        >>> import io
        >>> out = io.StringIO()
        >>> bar = ProgressBar(file=out)
        >>> bar.close()
        >>> "  0%|" in out.getvalue(), out.getvalue().endswith("\\n")
        (True, True)
        """
        self._bar.close()


def resolve(progress: Any) -> Callable[[Any], None] | None:
    """Turn ``train()``'s ``progress`` argument into a hook: ``False``/``None`` -> ``None``,
    ``True`` -> a new :class:`ProgressBar`, a callable -> itself.

    Examples
    --------
    >>> resolve(False) is None, resolve(print) is print
    (True, True)
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar()
    if callable(progress):
        return progress
    raise TypeError(f"progress must be True, False or a callable, got {progress!r}")
