"""The compiled score-model kernels give the numbers of the numpy code they replaced.

The reference is tests/score_model_reference.py, a frozen copy of the vectorised numpy
implementation; every comparison is computed in the test, on synthetic data and, when
present, on a slice of real first-stage scores.
"""


import numpy as np
import pytest
import score_model_reference as ref
from hmc_data import HMC_DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from hmcpgm.calibration import fit_logistic_pairs, isotonic_columns, isotonic_knots

DATA = HMC_DATA
RTOL = 1e-9


def _close(actual, expected, rtol=RTOL, atol=1e-12):
    if np.asarray(expected).dtype.kind == "U":  # model names
        assert np.asarray(actual).tolist() == np.asarray(expected).tolist()
        return
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


def test_the_compiled_exp_is_numpys_to_a_few_units_in_the_last_place():
    from hmcpgm.calibration import _exp_into

    rng = np.random.default_rng(0)
    x = np.r_[rng.uniform(-700, 700, 200_000), rng.normal(size=50_000), np.linspace(-1, 1, 1001),
              0.0, -0.0, 1e-300, -1e-300, 700.0, -700.0, np.log(2.0) / 2, -np.log(2.0) / 2]
    out = np.empty_like(x)
    _exp_into(x, out, np.empty(len(x), np.int64))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-15, atol=0)
    beyond = np.array([-745.0, -1e308, 701.0, 1e308])
    out = np.empty(4)
    _exp_into(beyond, out, np.empty(4, np.int64))  # clipped to [-700, 700]
    np.testing.assert_allclose(out, np.exp([-700.0, -700.0, 700.0, 700.0]), rtol=1e-15)


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


# ---------------------------------------------------------------------- isotonic
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 80), increasing=st.booleans(), ties=st.booleans(),
       prior=st.sampled_from([None, 0.0, 0.3]), prior_count=st.sampled_from([0.0, 1.0, 4.0]),
       min_count=st.sampled_from([0.0, 1.0, 10.0]), weighted=st.booleans())
def test_isotonic_knots_equal_the_numpy_version(seed, n, increasing, ties, prior, prior_count, min_count, weighted):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    if ties:
        x = np.round(x, 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * x))).astype(float)
    w = rng.uniform(0.5, 3.0, n) if weighted else None
    kwargs = {"weight": w, "increasing": increasing, "prior_rate": prior, "prior_count": prior_count,
              "min_count": min_count}
    for got, want in zip(isotonic_knots(x, y, **kwargs), ref.isotonic_knots(x, y, **kwargs)):
        _close(got, want)
    order = np.argsort(x, kind="stable")
    presorted = {**kwargs, "weight": None if w is None else w[order]}
    for got, want in zip(isotonic_knots(x[order], y[order], order="sorted", **presorted),
                         ref.isotonic_knots(x, y, **kwargs)):
        _close(got, want)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 60), k=st.integers(1, 6),
       prior_count=st.sampled_from([0.0, 1.0]), min_count=st.sampled_from([0.0, 10.0]))
def test_isotonic_columns_read_each_columns_knots_on_its_grid(seed, m, k, prior_count, min_count):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(m, k)), 1)
    y = (rng.random((m, k)) < 0.4).astype(float)
    grid = np.sort(rng.normal(size=(k, 9)) * 2, axis=1)
    increasing = rng.random(k) < 0.5
    rate = rng.random(k)
    got = isotonic_columns(x, y, grid, increasing=increasing, prior_rate=rate, prior_count=prior_count,
                           min_count=min_count)
    for j in range(k):
        kx, ky, _ = ref.isotonic_knots(x[:, j], y[:, j], increasing=increasing[j], prior_rate=rate[j],
                                       prior_count=prior_count, min_count=min_count)
        _close(got[j], np.interp(grid[j], kx, ky))


# ---------------------------------------------------------------------- the score models end to end
def _synthetic(hierarchy, seed, m=300):
    from hmcpgm._validation import label_matrix

    rng = np.random.default_rng(seed)
    k = hierarchy.n_classes
    y = rng.random((m, k)) < rng.uniform(0.02, 0.4, size=k)
    y = label_matrix(y.astype(int), hierarchy, close=True).astype(bool)
    s = rng.normal(size=(m, k)) * rng.uniform(0.1, 3.0, size=k) + y * rng.uniform(-1.0, 3.0, size=k)
    s[:, 0] = np.round(s[:, 0], 1)       # ties
    s[rng.integers(m), -1] = 1e6         # one extreme score
    return s, y.astype(int)


def _real(n_rows=400):
    """Labels and hierarchy of cellcycle_FUN; scores a noisy linear map of its features (joint-like, one scale)."""
    path = DATA / "cellcycle_FUN.train.arff"
    if not path.exists():
        pytest.skip(f"{path} not found")
    from hmcpgm.datasets import load_hmc_arff

    data = load_hmc_arff(path)
    rng = np.random.default_rng(0)
    x = np.nan_to_num(np.asarray(data.features, dtype=float)[:n_rows])
    y = np.asarray(data.labels)[:n_rows]
    s = 0.1 * x @ rng.normal(size=(x.shape[1], y.shape[1])) + 2.0 * y + rng.normal(size=y.shape)
    return s, y, data.hierarchy


def _cases():
    from strategies import from_parent_lists

    dag = from_parent_lists([[], [0], [0], [1], [], [4], [1, 2], [6]], order=[7, 3, 0, 5, 1, 6, 2, 4])
    return [(dag, seed) for seed in (0, 1, 2)] + ["real"]


def _data(case):
    if case == "real":
        return (*_real(), 0)
    hierarchy, seed = case
    return (*_synthetic(hierarchy, seed), hierarchy, seed)


@pytest.mark.parametrize("kind", ["lpr", "isotonic", "platt", "pooled", "logistic"])
@pytest.mark.parametrize("case", range(4))
def test_cross_validated_lpr_equals_the_numpy_version(kind, case):
    from hmcpgm.likelihood import cross_validated_lpr

    s, y, hierarchy, seed = _data(_cases()[case])
    got = cross_validated_lpr(s, y, hierarchy, (kind,), cv=4, seed=seed)
    want = ref.cross_validated_lpr(s, y, hierarchy, (kind,), cv=4, seed=seed)
    _close(got["lpr"], want["lpr"])
    np.testing.assert_array_equal(got["folds"], want["folds"])
    _close(got["prevalence"], want["prevalence"])


def _reference_params(s, y, hierarchy, kind):
    """fit_score_model's parameters, with the frozen numpy code of every step."""
    from hmcpgm.likelihood import AUTO_BASELINE, AUTO_CANDIDATES

    opts = {"bandwidth": "silverman", "gridsize": 512, "eps": 1e-6, "prior_count": 1.0, "min_count": 10.0,
            "transform": "asinh"}
    yb = np.asarray(y).astype(bool)
    n_pos = yb.sum(axis=0)
    informative = (n_pos > 0) & (n_pos < len(yb))
    prevalence = n_pos / len(yb)
    if kind != "auto":
        params = ref.fit_grid_models(s, yb, informative, prevalence, (kind,), opts)
        params["lpr"] = params.pop("lpr_by_kind")[0]
        return params
    cv = ref.cross_validated_lpr(s, y, hierarchy, AUTO_CANDIDATES, cv=5, seed=0, **opts)
    choice = ref.choose_candidates(cv["lpr"], yb, baseline=AUTO_BASELINE)
    params = ref.fit_grid_models(s, yb, informative, prevalence, AUTO_CANDIDATES, opts,
                                 only={i: choice == i for i in range(len(AUTO_CANDIDATES))})
    params["lpr"] = params.pop("lpr_by_kind")[choice, np.arange(len(choice))]
    params["choice"] = np.array([AUTO_CANDIDATES[i] for i in choice])  # saved as names (model format 4)
    params["candidates"] = np.array(AUTO_CANDIDATES)
    params["cv_log_loss"] = ref.log_loss_by_class(cv["lpr"], yb)
    return params


@pytest.mark.parametrize("kind", ["lpr", "isotonic", "platt", "pooled", "logistic", "auto"])
@pytest.mark.parametrize("case", [0, 3])
def test_fit_score_model_equals_the_numpy_version(kind, case):
    from hmcpgm.likelihood import fit_score_model

    s, y, hierarchy, _ = _data(_cases()[case])
    got = fit_score_model(s, y, hierarchy, kind=kind, allow_empty=True).params
    want = _reference_params(s, y, hierarchy, kind)
    assert sorted(got) == sorted(want)
    for name in want:
        _close(got[name], want[name])


# ---------------------------------------------------------------------- shared sort orders
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 40), k=st.integers(1, 5), digits=st.integers(0, 2))
def test_sort_orders_restricted_and_carried_through_a_monotone_map_are_the_stable_argsorts(seed, m, k, digits):
    from hmcpgm._sorting import stable_argsort
    from hmcpgm.likelihood._grid import column_orders, restrict_order

    rng = np.random.default_rng(seed)
    v = np.round(rng.normal(size=(m, k)), digits)
    keep = rng.random(m) < 0.7
    stable = column_orders(v)
    np.testing.assert_array_equal(stable, np.argsort(v.T, axis=1, kind="stable"))
    np.testing.assert_array_equal(restrict_order(stable, keep), column_orders(v[keep]))
    flat = np.argsort(v.ravel(), kind="stable")
    coarse = np.floor(v * 2.0)  # non-decreasing in v, makes new ties
    np.testing.assert_array_equal(stable_argsort(coarse.T, stable), np.argsort(coarse.T, axis=1, kind="stable"))
    np.testing.assert_array_equal(stable_argsort(coarse.ravel(), flat), np.argsort(coarse.ravel(), kind="stable"))
    np.testing.assert_array_equal(stable_argsort(v.ravel()), flat)


@pytest.mark.parametrize("kind", ["lpr", "isotonic", "pooled"])
def test_scores_the_transform_makes_equal_keep_the_numpy_versions_numbers(kind):
    from hmcpgm.likelihood import cross_validated_lpr

    hierarchy = _cases()[0][0]
    s, y = _synthetic(hierarchy, 5)
    # distinct scores whose asinh-scaled values are equal: the shared sort must put them back in row order
    s[::7, 1] = 1e6 + np.arange(len(s[::7])) * 1e-10 * (-1) ** np.arange(len(s[::7]))
    got = cross_validated_lpr(s, y, hierarchy, (kind,), cv=3)
    want = ref.cross_validated_lpr(s, y, hierarchy, (kind,), cv=3)
    _close(got["lpr"], want["lpr"])


# ---------------------------------------------------------------------- losses and the choice
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_cand=st.integers(1, 5), m=st.integers(1, 50), k=st.integers(1, 70),
       near_ties=st.booleans())
def test_log_losses_and_the_choice_equal_the_numpy_version(seed, n_cand, m, k, near_ties):
    from hmcpgm.likelihood import choose_candidates, log_loss_by_class

    rng = np.random.default_rng(seed)
    p = rng.random((n_cand, m, k))
    p[:, : m // 3] = rng.choice([0.0, 1.0, 1e-9, 0.5], size=(n_cand, m // 3, k))  # clipped and exact values
    if near_ties:
        p[1:] = p[:1] + rng.normal(scale=1e-3, size=p[1:].shape) * (rng.random((n_cand - 1, 1, k)) < 0.5)
        p = np.clip(p, 0, 1)
    y = (rng.random((m, k)) < 0.3).astype(int)
    _close(log_loss_by_class(p, y), ref.log_loss_by_class(p, y))
    _close(log_loss_by_class(p[0], y), ref.log_loss_by_class(p[0], y))
    for baseline in range(n_cand):
        np.testing.assert_array_equal(choose_candidates(p, y, baseline=baseline),
                                      ref.choose_candidates(p, y, baseline=baseline))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 30), k=st.integers(1, 6), n_grid=st.integers(2, 40))
def test_grid_interpolation_equals_the_numpy_version(seed, m, k, n_grid):
    from hmcpgm.likelihood._grid import interp_grid

    rng = np.random.default_rng(seed)
    lo = rng.normal(size=k)
    hi = lo + rng.choice([0.0, 1e-9, 1.0, 5.0], size=k)  # hi == lo: the width falls back to 1
    table = rng.random((k, n_grid))
    s = lo + (hi - lo + 0.5) * rng.uniform(-0.5, 1.5, size=(m, k))  # below, inside and above the grids
    s[0] = hi
    np.testing.assert_array_equal(interp_grid(s, lo, hi, table), ref.interp_grid(s, lo, hi, table))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 30), k=st.integers(1, 6), n_grid=st.integers(2, 40),
       n_tables=st.integers(1, 4))
def test_grid_interpolation_of_several_tables_equals_the_numpy_version_table_by_table(seed, m, k, n_grid, n_tables):
    from hmcpgm.likelihood._grid import interp_grids

    rng = np.random.default_rng(seed)
    lo = rng.normal(size=k)
    hi = lo + rng.choice([0.0, 1e-9, 1.0, 5.0], size=k)
    tables = rng.random((n_tables, k, n_grid))
    s = lo + (hi - lo + 0.5) * rng.uniform(-0.5, 1.5, size=(m, k))
    s[0] = hi
    missing = rng.random((m, k)) < 0.1
    want = np.stack([ref.interp_grid(s, lo, hi, table) for table in tables])
    s[missing] = np.nan  # NaN in, NaN out
    want[:, missing] = np.nan
    np.testing.assert_array_equal(interp_grids(s, lo, hi, tables), want)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60), digits=st.integers(0, 3), zero_iqr=st.booleans())
def test_robust_scale_from_sorted_values_equals_the_numpy_version(seed, n, digits, zero_iqr):
    from hmcpgm.likelihood._grid import robust_scale

    rng = np.random.default_rng(seed)
    s = np.round(rng.standard_cauchy(size=(n, 1)), digits)
    if zero_iqr:
        s[: max(1, 3 * n // 4)] = 0.5
    want = ref.robust_scale(s)
    got = robust_scale(s, np.sort(s.ravel()))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(robust_scale(s), want):
        np.testing.assert_array_equal(a, b)
    wide = np.round(rng.standard_cauchy(size=(n, 4)), digits)
    wide[:, 0] = 1.0  # a constant column: the standard deviation's turn
    want = ref.robust_scale(wide)
    for a, b in zip(robust_scale(wide, np.sort(wide.T, axis=1)), want):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(5, 80), k=st.integers(1, 8), n_em=st.integers(0, 6))
def test_shrunk_logistic_pairs_equal_the_em_loop_over_the_numpy_newton_steps(seed, m, k, n_em):
    from hmcpgm.calibration import fit_logistic_pairs_shrunk

    rng = np.random.default_rng(seed)
    z = rng.normal(size=(m, k)) * rng.uniform(0.5, 2.0, size=k)
    y = (rng.random((m, k)) < 1 / (1 + np.exp(-(rng.normal(size=k) + z)))).astype(float)
    mu, var = np.array([0.0, 1.0]), np.array([1.0, 1.0])
    theta = np.broadcast_to(mu, (k, 2)).copy()
    for _ in range(n_em):  # the loop the pooled score model ran before
        theta, cov = ref.fit_logistic_pairs(z, y, prior_mean=mu, prior_precision=1 / var, start=theta, max_iter=2)
        mu_new = theta.mean(axis=0)
        var_new = np.maximum(((theta - mu_new) ** 2 + cov[:, [0, 1], [0, 1]]).mean(axis=0), 1e-4)
        done = np.allclose(mu_new, mu, atol=1e-4) and np.allclose(var_new, var, rtol=1e-3)
        mu, var = mu_new, var_new
        if done:
            break
    theta, _ = ref.fit_logistic_pairs(z, y, prior_mean=mu, prior_precision=1 / var, start=theta, max_iter=10)
    got, got_mu, got_var = fit_logistic_pairs_shrunk(z, y, n_em=n_em)
    _close(got, theta, rtol=1e-8, atol=1e-10)
    _close(got_mu, mu, rtol=1e-8, atol=1e-10)
    _close(got_var, var, rtol=1e-8, atol=1e-10)
