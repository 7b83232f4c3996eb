"""Repository-level pytest configuration.

Doctests run over ``hmcpgm/`` (``--doctest-modules`` in pyproject.toml); the plotting
package's doctests need the optional matplotlib extra, so they are skipped where it
is not installed (``pip install "hmcpgm[plot]"``).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("matplotlib") is None:
    collect_ignore.append("hmcpgm/plot")

# Hypothesis profiles: "dev" (default, quick) and "ci" (more examples, derandomised so a
# CI failure reproduces). .ci/run selects "ci" with HYPOTHESIS_PROFILE=ci.
import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
