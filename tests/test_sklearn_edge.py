"""MLPR and HierarchicalCorrection as a demanding scikit-learn user drives them.

scikit-learn's generic checks draw X and y with different column counts, which these
estimators refuse (tests/test_sklearn.py names those checks); here the same contracts
are checked on data they take: X with one score column per class of y.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold

from hmcpgm import MLPR, Hierarchy, InputError, LabelNetwork
from hmcpgm.corrections import HierarchicalCorrection

# a forest and a DAG in one, columns not in topological order
H = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("e", "f")],
                         classes=["d", "f", "b", "a", "e", "c"])


def _data(n, seed):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(H, rng.uniform(0.3, 0.9, H.n_classes)).sample(n, rng)
    return rng.normal(1.5 * y), y


X, Y = _data(600, 0)
ESTIMATORS = {
    "mlpr-paper": lambda: MLPR(H, version="indpt", tempering=None, recalibrate=False),
    "mlpr-auto": lambda: MLPR(H, cv=3),
    "mlpr-flat": lambda: MLPR(version="full", tempering=None, recalibrate=False),
    "correction": lambda: HierarchicalCorrection(H, correction="iso_tpr"),
    "correction-flat": lambda: HierarchicalCorrection(calibration="platt", correction="htd"),
}
FITTED = {}


def _fitted(name):
    if name not in FITTED:
        FITTED[name] = ESTIMATORS[name]().fit(X, Y)
    return FITTED[name]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# ---------------------------------------------------------------------- before fit
@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "score"])
def test_every_method_before_fit_raises_not_fitted(name, method):
    est = ESTIMATORS[name]()
    args = (X, Y) if method == "score" else (X,)
    with pytest.raises(NotFittedError):
        getattr(est, method)(*args)


# ---------------------------------------------------------------------- parameters checked at fit, not at predict
@pytest.mark.parametrize("params", [
    {"inference_options": {"bogus": 1}},
    {"inference_options": {"max_classes": 3}},  # an option of engine="enumerate", not of "auto"
    {"engine": "junction", "inference_options": {"tol": 1e-3}},
    {"engine": "loopy", "inference_options": {"damping": 2.0}},
    {"engine": "loopy", "inference_options": {"max_iter": 0}},
    {"engine": "loopy", "inference_options": {"tol": "small"}},
])
def test_bad_inference_options_are_refused_by_fit(params):
    """A grid search over them would otherwise fit every fold and turn each prediction's error into a NaN score."""
    est = MLPR(H, version="full", tempering=None, recalibrate=False, **params)
    with pytest.raises(InputError, match="option|damping|max_iter|tol"):
        est.fit(X, Y)
    assert not hasattr(est, "second_stage_")


def test_a_grid_over_inference_options_has_no_nan_scores():
    grid = GridSearchCV(MLPR(H, version="full", tempering=None, recalibrate=False, engine="loopy"),
                        {"inference_options": [{"damping": 0.0}, {"damping": 0.5}]}, cv=KFold(3))
    grid.fit(X, Y)
    assert np.isfinite(grid.cv_results_["mean_test_score"]).all()


# ---------------------------------------------------------------------- DataFrames: by class name and row index
@pytest.mark.parametrize("name", ESTIMATORS)
def test_score_pairs_dataframes_by_class_name_and_row_index(name):
    """fit pairs a y DataFrame with X by column name and row index; score must too (else a silently wrong score)."""
    est = _fitted(name)
    classes = list(est.classes_)
    Xd, yd = pd.DataFrame(X, columns=classes), pd.DataFrame(Y, columns=classes)
    expected = est.score(X, Y)
    assert est.score(Xd, yd) == expected
    assert est.score(Xd, yd[sorted(classes, key=str)]) == expected  # y's columns in another order
    assert est.score(Xd[classes[::-1]], yd) == expected  # X's columns in another order
    assert est.score(Xd, yd.sample(frac=1, random_state=0)) == expected  # y's rows in another order
