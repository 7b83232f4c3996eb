"""The hurdle network of bench/hurdle_network.py: its sum-product pass against brute-force enumeration."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from hurdle_network import checks, enumerate_hurdle, fit_hurdle, hurdle_posterior  # noqa: E402


def test_hurdle_pass_equals_enumeration_on_random_trees():
    assert checks(np.random.default_rng(3)) < 1e-12


def test_hurdle_fit_matches_exhaustive_labels():
    from hmcpgm import Hierarchy

    h = Hierarchy.from_parents([1, None, 1])  # root in the middle column
    y = np.array([[1, 1, 0], [0, 1, 1], [1, 1, 1], [0, 0, 0]] * 25)
    theta, q = fit_hurdle(y, h, pseudo_count=0.0)
    assert q[1] == 0.0  # every positive root has a positive child
    # ML of the conditioned Bernoullis: mean among rows with a positive child = t / (1 - prod(1 - t))
    mean = y[y[:, 1] == 1][:, [0, 2]].mean(axis=0)
    t = theta[[0, 2]]
    np.testing.assert_allclose(t / (1 - np.prod(1 - t)), mean, atol=1e-9)
    # with q = 0 a positive root forces a child: evidence against both children lowers the root
    llr = np.array([[-3.0, 0.0, -3.0]])
    low = hurdle_posterior(llr, h, theta, q)[0, 1]
    np.testing.assert_allclose(low, enumerate_hurdle(llr, h, theta, q)[0, 1], atol=1e-12)
    assert low < hurdle_posterior(np.zeros((1, 3)), h, theta, q)[0, 1]
