"""Held-out recalibration (``MLPR.fit_recalibration``, ``hmcpgm fit --holdout``): the final model's own mLPRs
mapped to the labels of rows it was not fitted on."""

import numpy as np
import pandas as pd
import pytest

from hmcpgm import MLPR, make_paper_synthetic
from hmcpgm.calibration import fit_recalibration
from hmcpgm.cli import main
from hmcpgm.exceptions import InputError
from hmcpgm.io import read_matrix, write_hierarchy, write_matrix
from hmcpgm.persist import load_model, save_model


@pytest.fixture(scope="module")
def fitted():
    data = make_paper_synthetic(n_train=1500, n_test=1200, seed=5)
    model = MLPR(hierarchy=data.hierarchy, version="indpt", cv=3).fit(data.train_scores, data.train_labels)
    return data, model


def _held_out(data):
    return data.test_scores[:600], data.test_labels[:600], data.test_scores[600:]


def test_map_is_the_isotonic_fit_of_the_final_models_mlprs_with_the_cross_fitted_prior(fitted):
    data, model = fitted
    model = MLPR(**model.get_params()).fit(data.train_scores, data.train_labels)
    xh, yh, new = _held_out(data)
    before = model.calibrated_proba(new)
    assert model.recalibrated_on_ == "cross-fitting" and model.crossfit_recalibration_ is model.recalibration_
    model.fit_recalibration(xh, yh)
    assert model.recalibrated_on_ == "held-out rows (600)"
    q = model.predict_proba(new)
    prior = model.crossfit_recalibration_  # the cross-fitted map, the held-out map's prior
    expected = fit_recalibration(model.predict_proba(xh), yh, prior_count=2.0, prior_rate=prior)(q)
    np.testing.assert_array_equal(model.calibrated_proba(new), expected)
    again = model.fit_recalibration(xh, yh).calibrated_proba(new)  # the prior stays the cross-fitted map
    np.testing.assert_array_equal(again, expected)
    assert np.abs(model.calibrated_proba(new) - before).max() > 1e-3  # another map than cross-fitting's


def test_mlprs_and_ranking_unchanged(fitted):
    data, model = fitted
    model = MLPR(**model.get_params()).fit(data.train_scores, data.train_labels)
    xh, yh, new = _held_out(data)
    p = model.predict_proba(new)
    model.fit_recalibration(xh, yh)
    np.testing.assert_array_equal(model.predict_proba(new), p)
    g = model.calibrated_proba(new)
    order = np.argsort(p.ravel(), kind="stable")
    assert np.all(np.diff(g.ravel()[order]) >= -1e-15)  # non-decreasing in the mLPR


def test_saved_and_loaded(fitted, tmp_path):
    data, model = fitted
    model = MLPR(**model.get_params()).fit(data.train_scores, data.train_labels)
    xh, yh, new = _held_out(data)
    model.fit_recalibration(xh, yh)
    save_model(model, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.recalibrated_on_ == "held-out rows (600)"
    np.testing.assert_array_equal(back.calibrated_proba(new), model.calibrated_proba(new))


def test_dataframes_paired_by_index(fitted):
    data, model = fitted
    model = MLPR(**model.get_params()).fit(data.train_scores, data.train_labels)
    xh, yh, new = _held_out(data)
    classes = list(data.hierarchy.classes)
    X = pd.DataFrame(xh, columns=classes, index=[f"g{i}" for i in range(len(xh))])
    Y = pd.DataFrame(yh, columns=classes, index=X.index)[classes[::-1]].iloc[::-1]  # shuffled rows and columns
    a = MLPR(**model.get_params()).fit(data.train_scores, data.train_labels).fit_recalibration(xh, yh)
    b = model.fit_recalibration(X, Y)
    np.testing.assert_array_equal(a.calibrated_proba(new), b.calibrated_proba(new))


def test_bad_inputs(fitted):
    data, model = fitted
    xh, yh, _ = _held_out(data)
    with pytest.raises(InputError, match="X has 600 rows but y has 599"):
        model.fit_recalibration(xh, yh[:599])
    with pytest.raises(Exception, match="not fitted|fit"):
        MLPR(hierarchy=data.hierarchy).fit_recalibration(xh, yh)


def test_cli_fit_holdout(tmp_path, capsys):
    data = make_paper_synthetic(n_train=1200, n_test=500, seed=2)
    h = data.hierarchy
    write_hierarchy(h, tmp_path / "h.csv")
    for name, m in (("s", data.train_scores), ("y", data.train_labels), ("hs", data.test_scores),
                    ("hy", data.test_labels)):
        write_matrix(tmp_path / f"{name}.csv", m, h)
    args = ["fit", str(tmp_path / "s.csv"), str(tmp_path / "y.csv"), str(tmp_path / "h.csv"), "--quiet",
            "--mlpr-version", "indpt"]
    assert main([*args, "-o", str(tmp_path / "plain.npz")]) == 0
    assert main([*args, "-o", str(tmp_path / "held.npz"), "--holdout", str(tmp_path / "hs.csv"),
                 str(tmp_path / "hy.csv")]) == 0
    assert "recalibrated on 500 held-out objects" in capsys.readouterr().out
    plain, held = load_model(tmp_path / "plain.npz"), load_model(tmp_path / "held.npz")
    assert plain.recalibrated_on_ == "cross-fitting" and held.recalibrated_on_ == "held-out rows (500)"
    _, hs = read_matrix(tmp_path / "hs.csv", plain.hierarchy_, "scores")  # in the model's class order
    _, hy = read_matrix(tmp_path / "hy.csv", plain.hierarchy_, "labels", binary=True)
    np.testing.assert_allclose(held.calibrated_proba(hs), plain.fit_recalibration(hs, hy).calibrated_proba(hs),
                               atol=1e-12)
    write_matrix(tmp_path / "short.csv", data.test_labels[:499], h)
    assert main([*args, "-o", str(tmp_path / "bad.npz"), "--holdout", str(tmp_path / "hs.csv"),
                 str(tmp_path / "short.csv")]) != 0
    err = capsys.readouterr().err
    assert "scores has 500 rows but labels has 499" in err and "short.csv" in err
    assert not (tmp_path / "bad.npz").exists()
    before = (tmp_path / "hy.csv").read_bytes()  # -o onto a held-out input: refused, the input untouched
    assert main([*args, "-o", str(tmp_path / "hy.csv"), "--holdout", str(tmp_path / "hs.csv"),
                 str(tmp_path / "hy.csv")]) == 2
    assert "is a --holdout file" in capsys.readouterr().err
    assert (tmp_path / "hy.csv").read_bytes() == before


def test_jeffreys_blocks_worked_by_hand():
    """Blocks {0.1, 0.2} (0 of 2 positive) and {0.3, 0.4} (2 of 2): Jeffreys' posterior means (0 + 1/2) / 3 and
    (2 + 1/2) / 3, knots at the blocks' inner edges 0.2 and 0.3; the unshrunk map says 0 and 1."""
    p, y = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 1, 1])
    g = fit_recalibration(p, y, prior_count=1.0, prior_rate=0.5)
    np.testing.assert_allclose(g(np.array([0.0, 0.2, 0.25, 0.3, 1.0])), [1 / 6, 1 / 6, 0.5, 5 / 6, 5 / 6])
    np.testing.assert_allclose(fit_recalibration(p, y)(np.array([0.2, 0.3])), [0.0, 1.0])
    # a light top block shrunk below its neighbour is pooled with it: 1 of 1 -> 0.75 < 9.5 / 11 (9 of 10)
    p = np.arange(12) / 12
    y = np.array([0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1])
    g = fit_recalibration(p, y, prior_count=1.0, prior_rate=0.5)
    assert np.all(np.diff(g(np.linspace(0, 1, 50))) >= 0)
    assert g(1.0) == pytest.approx((9.5 + 1.5) / 13)  # pooled with the pseudo-counts' weights
    with pytest.raises(InputError, match="prior_rate"):
        fit_recalibration(p, y, prior_count=1.0, prior_rate=1.5)


def test_empirical_bayes_prior_worked_by_hand():
    """Blocks {0.1, 0.2} (0 of 2) and {0.3, 0.4} (2 of 2), knots 0.2 and 0.3; a prior map q(x) = x gives each
    block 2 pseudo-events at q(knot): (0 + 2 * 0.2) / 4 = 0.1 and (2 + 2 * 0.3) / 4 = 0.65."""
    p, y = np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 1, 1])
    g = fit_recalibration(p, y, prior_count=2.0, prior_rate=lambda x: x)
    np.testing.assert_allclose(g(np.array([0.0, 0.2, 0.25, 0.3, 1.0])), [0.1, 0.1, 0.375, 0.65, 0.65])
    # a prior that would make the shrunk rates decrease is pooled: 0 of 2 under q = 1, 2 of 2 under q = 0
    g = fit_recalibration(p, y, prior_count=2.0, prior_rate=lambda x: np.where(x < 0.25, 1.0, 0.0))
    np.testing.assert_allclose(g(np.array([0.0, 1.0])), [0.5, 0.5])  # (2 + 2) / 8 both
    with pytest.raises(InputError, match="prior_rate"):
        fit_recalibration(p, y, prior_count=2.0, prior_rate=lambda x: x + 2)
