"""Ctrl-C pressed at an exact point of a run: the n-th Python function call, not a moment in time."""

import signal
import sys


def with_ctrl_c_at_call(run, n):
    """``run()`` with Ctrl-C pressed at its n-th Python function call (n < 1: never); (result, calls made)."""
    calls = [0]

    def profile(frame, event, arg):
        if event == "call":
            calls[0] += 1
            if calls[0] == n:
                signal.raise_signal(signal.SIGINT)

    sys.setprofile(profile)
    try:
        result = run()
    finally:
        sys.setprofile(None)
    return result, calls[0]
