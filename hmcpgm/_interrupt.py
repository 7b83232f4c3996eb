"""Ctrl-C that cannot be lost: recorded as well as raised, checked before anything is committed.

A termination request (SIGTERM from ``kill`` or ``timeout``, a cluster's job
cancellation; SIGHUP from a closed terminal) is handled as a Ctrl-C: it raises
``KeyboardInterrupt`` so that outputs being written are removed, not left half
written, and :func:`interrupted_by` tells which signal it was.

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
# It holds the number of the first signal received (0: none); _last keeps it after the block ends.
_seen = [0]
_last = [0]
# the signals that stop a run: Ctrl-C, a termination request, a closed terminal (not on Windows)
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def check_interrupt():
    """Raise ``KeyboardInterrupt`` if a recorded Ctrl-C was swallowed where it was first raised.

    Examples
    --------
    >>> check_interrupt()  # nothing recorded: returns
    """
    if _seen[0]:
        raise KeyboardInterrupt


def interrupted_by():
    """The signal that stopped the last :func:`ctrl_c_recorded` block (``signal.SIGINT`` when none was recorded).

    Examples
    --------
    >>> import signal
    >>> interrupted_by() == signal.SIGINT
    True
    """
    return signal.Signals(_last[0] or signal.SIGINT)


def _on_stop(signum, frame):
    _seen[0] = _seen[0] or signum
    raise KeyboardInterrupt


@contextlib.contextmanager
def stops_deferred(ctrl_c=False):
    """Inside the block a SIGTERM or SIGHUP that :func:`ctrl_c_recorded` handles is recorded, not raised.

    For a step that must not be cut halfway: dask's ``LocalCluster`` stopped in the
    middle of its start leaves a cluster that its exit-time close fails on, with a
    traceback; the renames that put a run's outputs in place
    (:func:`hmcpgm._atomic.commit_all`). After the block, :func:`check_interrupt`
    raises the recorded signal (the caller closes what the step opened first).

    Parameters
    ----------
    ctrl_c : bool
        Hold SIGINT too (else it raises as usual, so a cluster's start stays
        interruptible by hand). Outside :func:`ctrl_c_recorded`, where SIGINT has
        Python's own handler, a Ctrl-C held in the block is raised as
        ``KeyboardInterrupt`` when the block ends.

    Examples
    --------
    >>> with stops_deferred():
    ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deferred = {s: signal.getsignal(s) for s in STOP_SIGNALS
                if (ctrl_c or s != signal.SIGINT) and signal.getsignal(s) is _on_stop}
    if ctrl_c and signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # a library call, not the CLI
        deferred[signal.SIGINT] = signal.default_int_handler
    held = []

    def record(signum, frame):
        if deferred[signum] is _on_stop:
            _seen[0] = _seen[0] or signum  # raised by the caller's next check_interrupt
        else:
            held.append(signum)

    try:
        for s in deferred:
            signal.signal(s, record)
        yield
    finally:
        for s, handler in deferred.items():
            signal.signal(s, handler)
    if held:
        raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c_recorded():
    """Inside the block Ctrl-C raises as usual and is also recorded for :func:`check_interrupt`.

    SIGTERM and SIGHUP (:data:`STOP_SIGNALS`) do the same instead of ending the
    process on the spot; :func:`interrupted_by` says which signal came first.
    An interrupt swallowed by Python (unraisable) is not printed: the recording
    reports it. A signal the process ignores (``nohup`` ignores SIGHUP, a shell's
    background job SIGINT) stays ignored. Outside the main thread, where no signal
    handler can be set, the block changes nothing. Signal handlers and unraisable
    hook are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_handlers = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    previous_hook = sys.unraisablehook

    def hook(unraisable):
        if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _seen[0]):
            previous_hook(unraisable)

    try:  # a Ctrl-C pressed while the handlers are being set still restores them all
        _seen[0] = _last[0] = 0
        for s in STOP_SIGNALS:
            if previous_handlers[s] is not signal.SIG_IGN:  # nohup, or a background job's Ctrl-C: stays ignored
                signal.signal(s, _on_stop)
        sys.unraisablehook = hook
        yield
    finally:
        for s, handler in previous_handlers.items():
            signal.signal(s, handler)
        sys.unraisablehook = previous_hook
        _last[0], _seen[0] = _seen[0], 0
