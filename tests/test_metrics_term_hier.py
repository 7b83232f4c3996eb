"""Term-centric (HEMDAG's conventions) and hierarchical (HiClass's definitions) metrics against references."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score
from strategies import dags

from hmcpgm import Hierarchy
from hmcpgm.exceptions import InputError
from hmcpgm.metrics import auprc_per_class, auroc_per_class, hierarchical_f1, precision_at_recall


def _matrix(data, m, k, elements):
    return np.array(data.draw(st.lists(st.lists(elements, min_size=k, max_size=k), min_size=m, max_size=m)))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_auprc_and_auroc_per_class_are_sklearns_with_hemdags_degenerate_classes(data):
    m, k = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 4))
    s = _matrix(data, m, k, st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9]))  # coarse: many ties
    y = _matrix(data, m, k, st.integers(0, 1))
    prc, roc = auprc_per_class(s, y), auroc_per_class(s, y)
    expected_prc, expected_roc = [], []
    for j in range(k):
        if y[:, j].min() == y[:, j].max():  # HEMDAG: all labels equal
            expected_prc.append(0.0)
            expected_roc.append(0.5)
        else:
            expected_prc.append(average_precision_score(y[:, j], s[:, j]))
            expected_roc.append(roc_auc_score(y[:, j], s[:, j]))
    np.testing.assert_allclose(prc.per_class, expected_prc, atol=1e-12)
    np.testing.assert_allclose(roc.per_class, expected_roc, atol=1e-12)
    nonzero = [v for v in expected_prc if v != 0]
    assert prc.average == pytest.approx(np.mean(nonzero) if nonzero else 0.0)
    assert roc.average == pytest.approx(np.mean(expected_roc))


def _pxr_brute_force(s, y, level):
    """Scan the distinct values from the highest; the first whose top set reaches the recall level."""
    for t in sorted(set(s), reverse=True):
        called = s >= t
        tp = int((called & (y == 1)).sum())
        if tp / y.sum() >= level:
            return tp / called.sum()
    raise AssertionError("recall 1 is always reached")


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_precision_at_recall_scans_thresholds_from_the_top(data):
    m, k = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 3))
    s = _matrix(data, m, k, st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.8]))
    y = _matrix(data, m, k, st.integers(0, 1))
    levels = [0.1, 0.25, 1 / 3, 0.5, 1.0]
    r = precision_at_recall(s, y, recall_levels=levels)
    for j in range(k):
        degenerate = y[:, j].min() == y[:, j].max()
        for i, level in enumerate(levels):
            expected = 0.0 if degenerate else _pxr_brute_force(s[:, j], y[:, j], level)
            assert r.per_class[j, i] == pytest.approx(expected)
    np.testing.assert_allclose(r.average, r.per_class.mean(axis=0))


def _closed_sets(matrix, h):
    return [{h.classes[k] for k in np.flatnonzero(row)} | {a for k in np.flatnonzero(row)
                                                          for a in h.ancestors(h.classes[k])} for row in matrix]


def _hiclass(pred_sets, true_sets, average):
    """HiClass's formulas on Python sets (its micro sums, its macro per-sample mean), zero denominators -> 0."""
    def score(pairs):
        both = sum(len(p & t) for p, t in pairs)
        npred, ntrue = sum(len(p) for p, _ in pairs), sum(len(t) for _, t in pairs)
        prec = both / npred if npred else (np.nan if average == "micro" else 0.0)
        rec = both / ntrue if ntrue else (np.nan if average == "micro" else 0.0)
        f = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        return np.array([prec, rec, f])

    pairs = list(zip(pred_sets, true_sets))
    if average == "micro":
        return score(pairs)
    return np.mean([score([pair]) for pair in pairs], axis=0)


@settings(max_examples=60, deadline=None)
@given(h=dags(max_classes=7), data=st.data(), average=st.sampled_from(["micro", "macro"]))
def test_hierarchical_f1_is_hiclass_on_ancestor_closed_sets(h, data, average):
    m = data.draw(st.integers(1, 8))
    d = _matrix(data, m, h.n_classes, st.integers(0, 1))
    y = _matrix(data, m, h.n_classes, st.integers(0, 1))
    expected = _hiclass(_closed_sets(d, h), _closed_sets(y, h), average)
    np.testing.assert_allclose(hierarchical_f1(d, y, h, average=average), expected, atol=1e-12)


def test_hierarchical_f1_without_roots_and_by_name():
    h = Hierarchy.from_edges([("r", "a"), ("a", "b"), ("r", "c")])
    d = pd.DataFrame([[0, 0, 1, 0]], columns=["r", "a", "b", "c"])
    y = pd.DataFrame([[1, 0, 0, 0]], columns=["c", "b", "a", "r"])  # true: {c} (and r)
    assert hierarchical_f1(d, y, h, exclude_roots=True) == (0.0, 0.0, 0.0)  # {a, b} against {c}
    assert hierarchical_f1(d, y, h).precision == pytest.approx(1 / 3)  # {r, a, b} against {r, c}
    with pytest.raises(InputError, match="average"):
        hierarchical_f1(d, y, h, average="weighted")


def test_per_class_results_are_named_for_dataframes():
    s = pd.DataFrame({"x": [0.9, 0.1, 0.5], "y": [0.2, 0.3, 0.4]})
    y = pd.DataFrame({"y": [0, 1, 0], "x": [1, 0, 1]})
    r = auprc_per_class(s, y)
    assert list(r.per_class.index) == ["x", "y"] and r.per_class["x"] == 1.0
    assert list(precision_at_recall(s, y, recall_levels=[0.5]).per_class.columns) == [0.5]
    with pytest.raises(InputError, match="recall_levels"):
        precision_at_recall(s, y, recall_levels=[0.0])
