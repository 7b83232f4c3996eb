"""Edge cases of cutoffs, the recalibration map and the ranking metrics."""

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from hmcpgm import Hierarchy, InputError, bayes_cutoff, hier_rank
from hmcpgm.calibration import fit_recalibration
from hmcpgm.metrics import average_precision, precision_recall_at


@pytest.fixture
def chain():
    return Hierarchy.from_parents([None, 0])


# ---------------------------------------------------------------------- metrics of rankings
def test_precision_recall_at_without_events_is_nan(chain):
    # zero objects: no event to call, so precision and recall are 0 / 0
    ranking = hier_rank(np.zeros((0, 2)), chain)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), 0.5)
    assert np.isnan(precision) and np.isnan(recall)
    precision, recall = precision_recall_at(ranking, np.zeros((0, 2)), [0.1, 1.0])
    assert precision.shape == (2,) and np.isnan(precision).all() and np.isnan(recall).all()


# ---------------------------------------------------------------------- Bayesian route
def test_bayes_max_f1_with_every_mlpr_zero_calls_nothing(chain):
    # every event is surely negative: the expected F1 is 0 at every r >= 1, and calling
    # an event whose mLPR is 0 is a sure false positive; the cutoff calls nothing
    mlpr = np.zeros((3, 2))
    cut = bayes_cutoff(hier_rank(mlpr, chain), mlpr, rule="max_f1")
    assert cut.rank == 0 and cut.threshold == np.inf
    assert np.isnan(cut.f1) and np.isnan(cut.precision)


def test_bayes_max_f1_with_one_positive_mlpr_calls_it(chain):
    mlpr = np.array([[0.0, 0.0], [1e-9, 0.0], [0.0, 0.0]])
    cut = bayes_cutoff(hier_rank(mlpr, chain), mlpr, rule="max_f1")
    assert cut.rank == 1 and cut.f1 == pytest.approx(2e-9 / (1 + 1e-9))


# ---------------------------------------------------------------------- recalibration map
@pytest.mark.parametrize("prior_count", [-1.0, np.nan, np.inf, "2"])
def test_fit_recalibration_refuses_a_bad_prior_count(prior_count):
    # a negative count made knots of -inf, NaN gave a map of NaN: both silently
    with pytest.raises(InputError, match="prior_count"):
        fit_recalibration([0.1, 0.5, 0.9], [0, 1, 1], prior_count=prior_count)


@pytest.mark.parametrize("prior_rate", ["0.5", [0.5]])
def test_fit_recalibration_refuses_a_prior_rate_that_is_not_a_number(prior_rate):
    with pytest.raises(InputError, match="prior_rate"):
        fit_recalibration([0.1, 0.5, 0.9], [0, 1, 1], prior_count=1.0, prior_rate=prior_rate)


def test_recalibration_is_exact_on_the_top_block_and_close_above_other_boundaries():
    # what fit_recalibration's docstring promises, against sklearn's isotonic blocks
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(2)
    p = rng.random(400)
    y = (rng.random(400) < p ** 2).astype(int)
    g = fit_recalibration(p, y)
    order = np.argsort(-p, kind="stable")
    fitted = IsotonicRegression().fit(p, y).predict(p)[order]
    top = int(np.flatnonzero(fitted != fitted[0])[0])
    assert g(p[order[:top]]).sum() == pytest.approx(y[order[:top]].sum(), abs=1e-9)
    for b in np.flatnonzero(np.diff(fitted)) + 1:
        assert abs(g(p[order[:b]]).mean() - y[order[:b]].mean()) < 0.1
    small = fit_recalibration([0.1, 0.3, 0.32, 0.5], [0, 1, 0, 1])  # the docstring's example
    assert 1 - small([0.3, 0.32, 0.5]).mean() == pytest.approx(0.332, abs=5e-4)


# ---------------------------------------------------------------------- AU(PRC)
def test_average_precision_of_one_class_named_by_a_string():
    # classes="ab" evaluated the classes "a" and "b" (the string's letters)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("r", "ab")])
    values = np.array([[0.9, 0.8, 0.1, 0.7], [0.7, 0.3, 0.6, 0.2]])
    labels = np.array([[1, 1, 0, 0], [1, 0, 1, 1]])
    assert average_precision(values, labels, h, classes="ab") == average_precision(values, labels, h, classes=["ab"])
    assert average_precision(values, labels, h, classes=["ab"]) == average_precision_score([0, 1], [0.7, 0.2])


def test_average_precision_with_no_class_left_says_so():
    # every class of a flat hierarchy is a root: the error said "no positive" of labels that had some
    flat = Hierarchy.from_edges([], classes=["a", "b"])
    with pytest.raises(InputError, match="no class.*exclude_roots=False"):
        average_precision([[0.1, 0.2]], [[1, 0]], flat)
    assert average_precision([[0.1, 0.2]], [[1, 0]], flat, exclude_roots=False) == average_precision_score([1, 0],
                                                                                                        [0.1, 0.2])
