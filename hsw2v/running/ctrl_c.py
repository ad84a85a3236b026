"""A Ctrl-C that lands while training runs is never lost, even where CPython drops it.

Why. CPython runs the SIGINT handler (``signal.default_int_handler``, which raises
KeyboardInterrupt) in the main thread at the next point where the interpreter checks for
signals, whatever Python code runs there. When that code is a finalizer (a ``__del__``, a
weakref callback, a generator closed by garbage collection, a ``gc.callbacks`` hook), the
exception cannot propagate: CPython prints "Exception ignored in ..." and drops it, and the
Ctrl-C is gone. Training runs such code on the main thread at every epoch's end: freeing
the epoch's finished threads runs ``threading``'s weakref callbacks (the ``WeakSet`` of
threads). A Ctrl-C that came in then was dropped and training went on to its last epoch.

What. While :func:`ctrl_c_latch` is held (``train()``, and every pool of worker threads,
:class:`hsw2v.running.threads.Workers`), the SIGINT handler is :func:`_on_sigint`: it
records the Ctrl-C, then raises KeyboardInterrupt exactly as the default handler does. A
KeyboardInterrupt that reaches the latch's owner clears the record (:func:`delivered`); one
that CPython dropped leaves it, and :func:`raise_if_dropped` (called where training waits:
each job, each poll of the pool, each epoch, and the latch's end) raises it anew, so the
training stops within its current job. The latch is taken only in the main thread, and
only when the handler in place is Python's default: a handler of the user's own, or
SIGINT ignored (``nohup``, a background job), is left alone. The handler in place when the
outermost latch was taken comes back when it is released, unless something replaced ours
meanwhile.

An interrupt can land at the start of any Python function, ``__exit__`` included, and skip
it. So the latch's bookkeeping is a list of weak references to the latches held: one whose
``__exit__`` was skipped is forgotten once its ``with`` block is gone, and ``__exit__`` can
be called again after an interrupt cut it short (:class:`hsw2v.running.threads.Workers`
does). A handler left in place that way acts as the default one while no latch is held.

A KeyboardInterrupt caught and swallowed by the user's own code inside a training call (a
callback) counts as dropped too: a Ctrl-C during ``train()`` stops ``train()``.
"""

from __future__ import annotations

import signal
import threading
import weakref

__all__ = ["ctrl_c_latch", "delivered", "raise_if_dropped"]

_pending = False  # a Ctrl-C came in under a latch, and no KeyboardInterrupt for it arrived
_held: list = []  # weak references to the latches held (main thread only)
_previous = None  # the SIGINT handler the outermost latch replaced (None: not replaced)


def _any_held() -> bool:
    for ref in _held:
        if ref() is not None:
            return True
    return False


def _on_sigint(signum, frame):
    """SIGINT handler while a latch is held: record the Ctrl-C, then do what
    ``signal.default_int_handler`` does (and only that, while no latch is held)."""
    global _pending
    if _any_held():
        _pending = True
    raise KeyboardInterrupt


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def delivered(exc: BaseException | None) -> None:
    """Note that ``exc`` reached the caller: when it is a KeyboardInterrupt, the Ctrl-C
    recorded by the handler has been delivered and must not be raised again."""
    global _pending
    if isinstance(exc, KeyboardInterrupt) and _in_main_thread():
        _pending = False


def as_ctrl_c(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt to raise instead of ``exc``, an exception other than
    KeyboardInterrupt that left a block while a Ctrl-C was recorded (the interrupt turned
    into it on its way, e.g. CPython's ``threading.Condition`` raises "release unlocked
    lock" when one lands inside it); None otherwise. Clears the record."""
    global _pending
    if exc is None or isinstance(exc, KeyboardInterrupt) or not _pending:
        return None
    if not _in_main_thread():
        return None
    _pending = False
    return KeyboardInterrupt()


def raise_if_dropped() -> None:
    """Raise KeyboardInterrupt in the main thread if a Ctrl-C came in and the exception the
    handler raised for it never reached the caller (CPython dropped it in a finalizer).

    >>> raise_if_dropped()  # no Ctrl-C: nothing happens
    """
    global _pending
    if _pending and _in_main_thread():
        _pending = False
        raise KeyboardInterrupt


def _install() -> None:
    """Put :func:`_on_sigint` in place of Python's default SIGINT handler."""
    global _previous
    _previous = None
    try:
        current = signal.getsignal(signal.SIGINT)
        if current is signal.default_int_handler or current is _on_sigint:
            signal.signal(signal.SIGINT, _on_sigint)
            _previous = signal.default_int_handler
    except (ValueError, OSError):  # no signal support here (e.g. an embedded interpreter)
        pass


def _restore() -> None:
    global _previous
    previous, _previous = _previous, None
    if previous is None:
        return
    try:
        if signal.getsignal(signal.SIGINT) is _on_sigint:  # not replaced by the user meanwhile
            signal.signal(signal.SIGINT, previous)
    except (ValueError, OSError):
        pass


class ctrl_c_latch:  # noqa: N801 - used as a function: ``with ctrl_c_latch():``
    """Hold the latch for a ``with`` block (see the module docstring). Leaving the block
    normally raises a Ctrl-C that was dropped inside it. Leaving it with another exception
    while a Ctrl-C is recorded raises KeyboardInterrupt from that exception
    (:func:`as_ctrl_c`). Outside the main thread it does nothing.

    A class, not a generator, each step ordered to stay true wherever an interrupt lands:
    the latch is published last in ``__enter__`` (nothing after it checks for signals before
    the block is entered) and withdrawn first in ``__exit__``, which may be called again.

    >>> with ctrl_c_latch():
    ...     pass
    """

    __slots__ = ("held", "__weakref__")

    def __init__(self) -> None:
        self.held = False

    def __enter__(self) -> ctrl_c_latch:
        global _held, _pending
        if _in_main_thread():
            live = [ref for ref in _held if ref() is not None]
            if not live:
                _pending = False
                _install()
            live.append(weakref.ref(self))
            self.held = True
            _held = live
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        global _held
        if not self.held:
            return False
        _held = [ref for ref in _held if ref() is not None and ref() is not self]
        self.held = False
        delivered(exc)
        replacement = as_ctrl_c(exc)
        if not _any_held():
            _restore()
        if replacement is not None:
            raise replacement from exc
        if exc is None:
            raise_if_dropped()
        return False
