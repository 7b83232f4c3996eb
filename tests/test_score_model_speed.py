"""The compiled score-model kernels give the numbers of the numpy code they replaced.

The reference is tests/score_model_reference.py, a frozen copy of the vectorised numpy
implementation; every comparison is computed in the test, on synthetic data and, when
present, on a slice of real first-stage scores.
"""

from pathlib import Path

import numpy as np
import pytest
import score_model_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm.calibration import fit_logistic_pairs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "hmc"
RTOL = 1e-9


def _close(actual, expected, rtol=RTOL, atol=1e-12):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------- fit_logistic_pairs
def _logistic_data(seed, m=400, k=7):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(m, k)) * rng.uniform(0.1, 3.0, size=k)
    y = (rng.random((m, k)) < 1 / (1 + np.exp(-(rng.normal(size=k) + rng.normal(size=k) * z)))).astype(float)
    z[:, 0] = 0.0                              # a constant covariate
    y[:, 1] = z[:, 1] > 0                      # separable: Newton runs to max_iter
    y[:, 2] = np.clip(rng.random(m), 0.05, 0.95)  # soft targets
    return rng, z, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", ["plain", "prior", "two_steps", "weights", "start"])
def test_fit_logistic_pairs_equals_the_numpy_newton_steps(seed, case):
    rng, z, y = _logistic_data(seed)
    k = z.shape[1]
    kwargs = {
        "plain": {},
        "prior": {"prior_mean": [0.5, 1.0], "prior_precision": [0.3, 2.0]},
        "two_steps": {"prior_mean": rng.normal(size=(k, 2)), "prior_precision": [1.0, 1.0], "max_iter": 2},
        "weights": {"weight": rng.random(z.shape) * (rng.random(z.shape) < 0.8)},
        "start": {"start": rng.normal(size=(k, 2)), "max_iter": 7},
    }[case]
    theta, cov = fit_logistic_pairs(z, y, **kwargs)
    theta_ref, cov_ref = ref.fit_logistic_pairs(z, y, **kwargs)
    finite = np.abs(theta_ref).max(axis=1) < 50  # the separable column runs off; both stop after max_iter steps
    _close(theta[finite], theta_ref[finite])
    _close(cov[finite], cov_ref[finite], atol=1e-12 * np.abs(cov_ref[finite]).max())
    _close(theta[~finite], theta_ref[~finite], rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 60), k=st.integers(1, 5), max_iter=st.integers(1, 60))
def test_fit_logistic_pairs_equals_the_numpy_newton_steps_on_small_problems(seed, m, k, max_iter):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(m, k))
    y = np.clip(rng.random((m, k)), 0.1, 0.9)  # soft targets: every fit has a finite optimum
    prior = {"prior_mean": rng.normal(size=2), "prior_precision": rng.uniform(0, 2, size=2)}
    theta, cov = fit_logistic_pairs(z, y, max_iter=max_iter, **prior)
    theta_ref, cov_ref = ref.fit_logistic_pairs(z, y, max_iter=max_iter, **prior)
    _close(theta, theta_ref, rtol=1e-8, atol=1e-10)
    _close(cov, cov_ref, rtol=1e-8, atol=1e-10)
