"""The score-model registry: one table that every place reads; a fitted model holds what its entry says."""

import numpy as np
import pytest

from hmcpgm import MLPR, Hierarchy, InputError
from hmcpgm.estimator import check_params
from hmcpgm.likelihood import (
    AUTO_BASELINE,
    AUTO_CANDIDATES,
    LEGACY_AUTO_CANDIDATES,
    POSTERIOR_MODELS,
    SCORE_MODELS,
    fit_score_model,
    get_score_model,
    score_model_from_dict,
)

H = Hierarchy.from_parents([None, 0, 0])


def _data(seed=0, m=300):
    rng = np.random.default_rng(seed)
    y0 = rng.random(m) < 0.6
    y = np.column_stack([y0, y0 & (rng.random(m) < 0.5), y0 & (rng.random(m) < 0.4)]).astype(int)
    return rng.normal(size=y.shape) + 1.5 * y, y


def test_the_names_every_place_offers_are_the_registrys():
    from hmcpgm.cli._parser import build_parser

    names = SCORE_MODELS[:-1]
    assert SCORE_MODELS[-1] == "auto" and all(get_score_model(n).name == n for n in names)
    assert POSTERIOR_MODELS == (*(n for n in names if get_score_model(n).route == "posterior"), "auto")
    assert AUTO_CANDIDATES == tuple(n for n in names if get_score_model(n).auto)
    assert AUTO_CANDIDATES[AUTO_BASELINE] == "logistic"
    fit = build_parser()._subparsers._group_actions[0].choices["fit"]
    option = next(a for a in fit._actions if "--score-model" in a.option_strings)
    assert tuple(option.choices) == SCORE_MODELS
    with pytest.raises(InputError, match="score_model must be one of 'lpr'"):
        check_params(MLPR(score_model="beta"))


@pytest.mark.parametrize("kind", SCORE_MODELS)
def test_a_fitted_model_holds_the_arrays_its_entry_names_and_loads_from_them_alone(kind):
    s, y = _data()
    model = fit_score_model(s, y, H, kind=kind, cv=3, gridsize=32)
    state = model.to_dict()
    held = set(state) - {"kind", "classes", "prevalence", "informative"}
    if kind == "auto":
        assert held == {"lo", "hi", "center", "scale", "asinh", "lpr", "choice", "candidates", "cv_log_loss"}
        assert state["choice"].dtype.kind == "U" and set(state["choice"]) <= set(AUTO_CANDIDATES)
        assert state["candidates"].tolist() == list(AUTO_CANDIDATES)
    else:
        assert held == set(get_score_model(kind).params)
    again = score_model_from_dict(state, H)
    np.testing.assert_array_equal(again.likelihoods(s), model.likelihoods(s))
    assert again.choice == model.choice


def test_positions_read_through_the_legacy_table_and_names_as_they_are():
    s, y = _data(1)
    state = fit_score_model(s, y, H, kind="auto", cv=3, gridsize=32).to_dict()
    names = state["choice"].tolist()
    old = dict(state, choice=np.array([LEGACY_AUTO_CANDIDATES.index(n) for n in names], dtype=float))
    del old["candidates"]  # files of format 3 had no candidate list: the legacy one is assumed
    assert score_model_from_dict(old, H).choice == tuple(names)
    bad = dict(old, choice=np.array([0.0, 1.0, 9.0]))
    with pytest.raises(InputError, match=r"positions \[0.0, 1.0, 9.0\], not all in the old candidate list"):
        score_model_from_dict(bad, H)
    with pytest.raises(InputError, match=r"choice names \['beta'\], which are not candidates"):
        score_model_from_dict(dict(state, choice=np.array(["beta", "lpr", "lpr"])), H)


def test_grid_data_columns_are_the_indexed_copies_made_once():
    """Every candidate of a fold reads the same column subsets: one copy each, with the memory order of
    ``a[:, cols]`` (column-major), which fixes the order of the fitters' sums (bit-for-bit the same tables)."""
    from hmcpgm.likelihood._registry import GridData

    rng = np.random.default_rng(0)
    s = rng.normal(size=(20, 5))
    y = rng.random((20, 5)) < 0.4
    order = np.argsort(s.T, axis=1, kind="stable")
    data = GridData(s, s * 2, y, None, None, None, None, None, None, None, {}, order)
    for cols in (np.arange(5), np.array([0, 3, 4])):
        for name, whole in (("s", s), ("t", s * 2), ("y", y)):
            got = data.columns(name, cols)
            want = whole[:, cols]
            np.testing.assert_array_equal(got, want)
            assert got.flags.f_contiguous == want.flags.f_contiguous and got.dtype == want.dtype
            assert data.columns(name, cols) is got  # made once
        np.testing.assert_array_equal(data.columns("t_order", cols), order[cols])
