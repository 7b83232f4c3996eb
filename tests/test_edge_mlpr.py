"""MLPR and the command line on odd inputs the benchmark data never hold.

Every bad input is refused with one line naming the argument; every odd but valid
input (no rows, a header-only file, standard input, a hierarchy whose columns are
not in topological order) gives the answer the plain case gives.
"""


import numpy as np
import pandas as pd
import pytest

from hmcpgm import MLPR, Hierarchy, InputError, LabelNetwork

#: The paper's model: a fixed version, exponent 1, nothing cross-fitted.
PAPER = {"version": "full", "tempering": None, "recalibrate": False}


def _tree():
    return Hierarchy.from_edges([("a", "b"), ("a", "c")])


def _data(hierarchy, theta, m=300, seed=0):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(hierarchy, theta).sample(m, rng)
    return rng.normal(loc=1.5 * y), y


@pytest.fixture(scope="module")
def fitted():
    h = _tree()
    X, y = _data(h, [0.6, 0.5, 0.5])
    return MLPR(hierarchy=h, cv=3).fit(X, y), X, y


def _one_line(exc):
    message = str(exc.value)
    assert len(message.splitlines()) == 1, message
    return message


# ---------------------------------------------------------------------- bad scores: one line naming X
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_score_array_is_one_line_naming_row_and_class(fitted, bad):
    model, X, y = fitted
    Xb = X.copy()
    Xb[4, 2] = bad
    for call in (lambda: MLPR(hierarchy=_tree(), **PAPER).fit(Xb, y), lambda: model.predict_proba(Xb)):
        with pytest.raises(InputError) as exc:
            call()
        message = _one_line(exc)
        assert "X must be finite" in message and "row 4, class 'c'" in message, message


@pytest.mark.parametrize("bad", [
    pytest.param(lambda X: X.astype(complex), id="complex"),
    pytest.param(lambda X: X[:, :, None], id="3-D"),
    pytest.param(lambda X: X[:, 0], id="1-D"),
])
def test_a_malformed_score_array_is_one_line_naming_X(fitted, bad):
    model, X, y = fitted
    for call in (lambda: MLPR(hierarchy=_tree(), **PAPER).fit(bad(X), y), lambda: model.predict_proba(bad(X))):
        with pytest.raises(ValueError) as exc:
            call()
        assert "X" in _one_line(exc)


# ---------------------------------------------------------------------- zero rows
def test_zero_rows_give_empty_answers_for_arrays_as_for_dataframes(fitted):
    model, X, _ = fitted
    frame = pd.DataFrame(X[:0], columns=list(model.classes_))
    for method in ("predict_proba", "calibrated_proba", "predict", "lpr"):
        from_array = getattr(model, method)(X[:0])
        from_frame = getattr(model, method)(frame)
        assert from_array.shape == from_frame.shape == (0, 3), method
        assert from_array.dtype == from_frame.to_numpy().dtype, method


def test_fit_recalibration_on_zero_rows_names_X(fitted):
    model, X, y = fitted
    with pytest.raises(InputError) as exc:
        model.fit_recalibration(X[:0], y[:0])
    assert _one_line(exc).startswith("X has no rows")
