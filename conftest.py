"""Repository-level pytest configuration.

Doctests run over ``hmcpgm/`` (``--doctest-modules`` in pyproject.toml); the plotting
package's doctests need the optional matplotlib extra, so they are skipped where it
is not installed (``pip install "hmcpgm[plot]"``).
"""

import importlib.util
import os
import signal

from hypothesis import HealthCheck, settings

collect_ignore = []
if importlib.util.find_spec("matplotlib") is None:
    collect_ignore.append("hmcpgm/plot")

# Hypothesis profiles: "dev" (default, quick) and "ci" (more examples, derandomised so a
# CI failure reproduces). .ci/run selects "ci" with HYPOTHESIS_PROFILE=ci.
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Ctrl-C, SIGTERM and SIGHUP as at a terminal. A test run started under nohup or as a background job of a
# script inherits them ignored, and hmcpgm keeps an ignored signal ignored (a nohup run goes on when the
# terminal closes): the tests that stop a run with them, in this process or in a child, need them handled.
for _name in ("SIGINT", "SIGTERM", "SIGHUP"):
    _number = getattr(signal, _name, None)
    if _number is not None and signal.getsignal(_number) is signal.SIG_IGN:
        signal.signal(_number, signal.default_int_handler if _name == "SIGINT" else signal.SIG_DFL)
