import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.isotonic import isotonic_regression
from sklearn.linear_model import LogisticRegression

from hmcpgm import InputError
from hmcpgm.calibration import (
    fit_logistic_pairs,
    fit_recalibration,
    isotonic_knots,
)


# ---------------------------------------------------------------------- isotonic
@pytest.mark.parametrize("increasing", [True, False])
def test_isotonic_blocks_equal_sklearn(increasing):
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=400), 1)  # ties
    y = (rng.random(400) < 1 / (1 + np.exp(-(2 * x if increasing else -2 * x)))).astype(float)
    kx, ky, kw = isotonic_knots(x, y, increasing=increasing)
    # reference: sklearn on the points sorted by x, ties averaged first
    ux, inv = np.unique(x, return_inverse=True)
    w = np.bincount(inv).astype(float)
    uy = np.bincount(inv, y) / w
    fit = isotonic_regression(uy, sample_weight=w, increasing=increasing)
    starts = np.r_[0, np.flatnonzero(np.diff(fit)) + 1]
    np.testing.assert_allclose(ky, fit[starts], rtol=1e-12)
    np.testing.assert_allclose(kw, np.add.reduceat(w, starts))
    means = np.add.reduceat(w * ux, starts) / kw
    np.testing.assert_allclose(kx[1:-1], means[1:-1], rtol=1e-12)
    # end knots: the inner edges of the end blocks
    assert kx[0] == ux[starts[1] - 1] and kx[-1] == ux[starts[-1]]
    assert np.all(np.diff(kx) > 0)
    assert np.all(np.diff(ky) > 0) if increasing else np.all(np.diff(ky) < 0)


def test_isotonic_block_shrinkage():
    kx, ky, kw = isotonic_knots([0.0, 1.0, 2.0], [0, 0, 1], prior_rate=0.2, prior_count=3)
    np.testing.assert_allclose(ky, [(0 + 0.6) / (2 + 3), (1 + 0.6) / (1 + 3)])


# ---------------------------------------------------------------------- logistic pairs
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), scale=st.sampled_from([1e-9, 1e-3, 1e4, 1e9]))
def test_isotonic_knots_do_not_depend_on_the_scale_of_the_weights(seed, n, scale):
    """Weights and pseudo-count scaled together leave every knot where it was. The re-pooled blocks after
    shrinking were found again from cumulative weights with a fixed slack of 1e-9: at large totals a block
    moved into its neighbour, at small weights a knot became NaN (weights 3, 3, 1e-7, 1e-7, 1 at 1e-3 and 1e7)."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.normal(size=n))
    y = rng.random(n)
    w = np.exp(rng.normal(scale=4.0, size=n))  # weights over many orders of magnitude: light blocks re-pool
    count, rate = float(np.exp(rng.normal(scale=2.0))), float(rng.random())
    kx, ky, kw = isotonic_knots(x, y, weight=w, prior_rate=rate, prior_count=count)
    sx, sy, sw = isotonic_knots(x, y, weight=w * scale, prior_rate=rate, prior_count=count * scale)
    assert np.all(np.isfinite(sx)) and np.all(sw > 0)
    np.testing.assert_allclose(sx, kx, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sy, ky, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sw, kw * scale, rtol=1e-9)


def test_isotonic_knots_reported_case_at_three_scales():
    x, y, w = [0, 1, 2, 3, 4], [0.2, 0.4, 0.5, 0.7, 0.9], np.array([3, 3, 1e-7, 1e-7, 1])
    for scale in (1.0, 1e-3, 1e7):
        kx, ky, kw = isotonic_knots(x, y, weight=w * scale, prior_rate=0.0, prior_count=0.7e-7 * scale)
        np.testing.assert_allclose(kx, [0, 1.00000003, 3, 4], rtol=1e-7)
        # the 2nd and 3rd points, and the 4th alone, pooled by hand: (3 * 0.4 + 1e-7 * 0.5) / (3 + 1e-7), then
        # the shrunk rate of the 1e-7 block: 1e-7 * 0.7 / (1e-7 + 0.7e-7)
        np.testing.assert_allclose(ky[2], 0.7e-7 / 1.7e-7, rtol=1e-7)
        np.testing.assert_allclose(np.interp([2.5, 3.5], kx, ky), [0.4088, 0.6559], atol=1e-4)


def test_logistic_pairs_equal_sklearn_without_prior():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(3000, 3))
    y = rng.random(z.shape) < 1 / (1 + np.exp(-(0.3 + np.array([1.0, -2.0, 0.2]) * z)))
    theta, cov = fit_logistic_pairs(z, y)
    for k in range(3):
        ref = LogisticRegression(C=1e12, tol=1e-12, max_iter=10_000).fit(z[:, [k]], y[:, k])
        np.testing.assert_allclose(theta[k], [ref.intercept_[0], ref.coef_[0, 0]], rtol=1e-6, atol=1e-8)
    assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_logistic_pairs_with_prior_and_soft_targets_match_scipy():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(60, 2))
    y = np.clip(rng.random((60, 2)), 0.05, 0.95)  # soft targets
    mu, prec = np.array([0.5, 1.0]), np.array([2.0, 4.0])
    theta, _ = fit_logistic_pairs(z, y, prior_mean=mu, prior_precision=prec)
    for k in range(2):
        def loss(t, k=k):
            eta = t[0] + t[1] * z[:, k]
            return np.sum(np.logaddexp(0, eta) - y[:, k] * eta) + 0.5 * np.sum(prec * (t - mu) ** 2)
        ref = minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(theta[k], ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- recalibration
def test_recalibration_recovers_a_known_distortion():
    rng = np.random.default_rng(3)
    p = rng.random(50_000)
    y = rng.random(50_000) < p**3  # overconfident predictions
    g = fit_recalibration(p, y)
    grid = np.linspace(0.1, 0.95, 18)
    np.testing.assert_allclose(g(grid), grid**3, atol=0.03)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 400), power=st.floats(0.2, 5.0))
def test_recalibration_map_is_monotone_and_a_probability(seed, n, power):
    rng = np.random.default_rng(seed)
    p = rng.random(n) ** power
    y = (rng.random(n) < rng.random(n)).astype(int)
    g = fit_recalibration(p, y)
    x = np.sort(np.concatenate([rng.random(200), [0.0, 1.0], p]))
    gx = g(x)
    assert np.all(np.diff(gx) >= -1e-15)
    assert np.all((gx >= 0) & (gx <= 1))
    # one shared increasing map keeps child <= parent and the order of the events
    parent, child = np.maximum(x, x[::-1]), np.minimum(x, x[::-1])
    assert np.all(g(child) <= g(parent))


def test_recalibration_bad_input():
    with pytest.raises(InputError, match="probabilities"):
        fit_recalibration([0.5, 1.5], [0, 1])
    with pytest.raises(InputError, match="only 0 and 1"):
        fit_recalibration([0.5, 0.5], [0, 2])
    with pytest.raises(InputError, match="must match"):
        fit_recalibration([0.5], [0, 1])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), increasing=st.booleans(),
       prior_rate=st.floats(0, 1), prior_count=st.floats(0, 5), min_count=st.integers(0, 30))
def test_isotonic_knots_stay_monotone_after_shrinking_and_merging(seed, n, increasing, prior_rate, prior_count,
                                                                  min_count):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 2)
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * x))).astype(float)
    kx, ky, kw = isotonic_knots(x, y, increasing=increasing, prior_rate=prior_rate, prior_count=prior_count,
                                min_count=min_count)
    step = np.diff(ky)
    assert np.all(step >= -1e-12) if increasing else np.all(step <= 1e-12)
    assert np.all(np.diff(kx) > 0)
    np.testing.assert_allclose(kw.sum(), n)
    assert np.all((ky >= 0) & (ky <= 1))


def test_logistic_pairs_reach_the_optimum_where_plain_newton_steps_cycle():
    """Newton's capped steps, without a line search, cycled between two points far from the optimum: with a
    prior (objective 1095 against 306.7), and for Platt's targets of a rare, well separated class (the slope came
    out negative: the fit reversed). Checked against scipy's minimiser; an ordinary column beside them."""
    def objective(t, z, y, mu, prec):
        eta = t[0] + t[1] * z
        return np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * np.sum(prec * (t - mu) ** 2)

    rng = np.random.default_rng(3)
    z = 10 * rng.normal(size=500)
    y = (rng.random(500) < 1 / (1 + np.exp(-(0.3 - 0.08 * z)))).astype(float)
    mu, prec = np.array([0.5, -1.0]), np.array([2.0, 5.0])
    ordinary = rng.normal(size=500)
    y2 = (rng.random(500) < 1 / (1 + np.exp(-ordinary))).astype(float)
    theta, cov = fit_logistic_pairs(np.column_stack([z, ordinary]), np.column_stack([y, y2]), prior_mean=mu,
                                    prior_precision=prec)
    for c, (zz, yy) in enumerate(((z, y), (ordinary, y2))):
        best = minimize(objective, [0.0, 0.0], args=(zz, yy, mu, prec), method="Nelder-Mead",
                        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
        assert objective(theta[c], zz, yy, mu, prec) <= best.fun + 1e-8
    assert np.all(np.linalg.eigvalsh(cov) > 0)

    rng = np.random.default_rng(0)  # Platt's targets, as the score model "logistic" fits them
    y = (rng.random(300) < 0.05).astype(int)
    s = rng.normal(size=300) + 20 * y
    q = np.percentile(s, [25, 75])
    zz = np.clip((s - np.median(s)) / ((q[1] - q[0]) / 1.349), -20, 20)
    zz = (zz - zz.mean()) / zz.std()
    n1 = y.sum()
    target = np.where(y == 1, (n1 + 1) / (n1 + 2), 1 / (300 - n1 + 2))
    theta, _ = fit_logistic_pairs(zz[:, None], target[:, None],
                                  start=[[np.log(target.mean() / (1 - target.mean())), 0.0]])
    best = minimize(objective, [0.0, 0.0], args=(zz, target, 0.0, 0.0), method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 50000})
    assert objective(theta[0], zz, target, 0.0, 0.0) <= best.fun + 1e-8 and theta[0, 1] > 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(5, 300), log_scale=st.floats(-1, 1.5), soft=st.booleans(),
       with_prior=st.booleans())
def test_logistic_pairs_reach_scipys_optimum_on_badly_scaled_problems(seed, m, log_scale, soft, with_prior):
    """Wide covariates and rare classes, where plain capped Newton steps cycled on about a quarter of such
    problems; the fit's penalised objective is scipy's BFGS optimum's, to 1e-7 relative."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m) * 10**log_scale
    y = (rng.random(m) < 1 / (1 + np.exp(-(3 * rng.normal() + rng.normal() * z)))).astype(float)
    if soft:
        y = np.clip(y, 0.02, 0.98)
    mu = rng.normal(size=2)
    prec = rng.uniform(0, 3, size=2) * with_prior + 1e-3  # some prior: every problem has a finite optimum

    def objective(t):
        eta = t[0] + t[1] * z
        return np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * np.sum(prec * (t - mu) ** 2)

    theta, _ = fit_logistic_pairs(z[:, None], y[:, None], prior_mean=mu, prior_precision=prec, max_iter=100)
    best = minimize(objective, mu, method="BFGS", options={"gtol": 1e-10})
    assert objective(theta[0]) <= best.fun + 1e-7 * (abs(best.fun) + 1)


def test_logistic_pairs_refuse_mismatched_shapes_in_one_line():
    from hmcpgm.calibration import fit_logistic_pairs_shrunk

    z = np.zeros((5, 2))
    with pytest.raises(InputError, match="z must be a matrix"):
        fit_logistic_pairs(z, np.zeros((4, 2)))
    with pytest.raises(InputError, match="z must be a matrix"):
        fit_logistic_pairs(z[:, 0], z[:, 0])
    with pytest.raises(InputError, match="z must be a matrix"):
        fit_logistic_pairs(z, z, weight=np.ones(3))
    with pytest.raises(InputError, match="z must be a matrix"):
        fit_logistic_pairs_shrunk(z[:, 0], z[:, 0])
    theta, _ = fit_logistic_pairs(np.arange(10.0).reshape(5, 2), np.array([[0.2, 0.8]]))  # y broadcasts
    assert theta.shape == (2, 2)
