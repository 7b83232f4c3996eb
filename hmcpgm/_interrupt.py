"""Ctrl-C that cannot be lost: recorded as well as raised, checked before anything is committed.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when
the signal arrives. Where that is a garbage-collector callback, a weakref callback
or a ``__del__`` (dask's ``distributed`` runs one at every collection), Python
prints "Exception ignored in ..." and carries on: the interrupt is gone and the run
would finish and replace its output. Inside :func:`ctrl_c_recorded` each Ctrl-C is
also recorded; :func:`check_interrupt` raises it again at the next safe point (an
output about to be committed, the next chunk's result), so such a Ctrl-C still
stops the run with its outputs untouched.
"""

import contextlib
import signal
import sys
import threading

# A plain flag, not a threading.Event: the handler runs in the main thread between any two steps of
# it, so a lock taken by clearing the flag would be held when the handler sets it (a hang).
_seen = [False]


def check_interrupt():
    """Raise ``KeyboardInterrupt`` if a recorded Ctrl-C was swallowed where it was first raised.

    Examples
    --------
    >>> check_interrupt()  # nothing recorded: returns
    """
    if _seen[0]:
        raise KeyboardInterrupt


def _on_ctrl_c(signum, frame):
    _seen[0] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_recorded():
    """Inside the block Ctrl-C raises as usual and is also recorded for :func:`check_interrupt`.

    An interrupt swallowed by Python (unraisable) is not printed: the recording
    reports it. Outside the main thread, where no signal handler can be set, the
    block changes nothing. Signal handler and unraisable hook are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_handler, previous_hook = signal.getsignal(signal.SIGINT), sys.unraisablehook

    def hook(unraisable):
        if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _seen[0]):
            previous_hook(unraisable)

    try:  # a Ctrl-C pressed while the handler is being set still restores both
        _seen[0] = False
        signal.signal(signal.SIGINT, _on_ctrl_c)
        sys.unraisablehook = hook
        yield
    finally:
        signal.signal(signal.SIGINT, previous_handler)
        sys.unraisablehook = previous_hook
        _seen[0] = False
