"""The second-stage leaderboard: the classic hierarchical corrections beside the mLPR methods.

A second stage turns first-stage scores into hierarchy-consistent values. The
field's classic ones (HEMDAG's HTD-DAG, GPAV, TPR-DAG and its variants,
Obozinski's and/or, C-HMCNN's max constraint) start from per-class calibrated
scores; :func:`correction_values` fits each calibration once on the training
rows' out-of-fold scores and applies every correction of :data:`LEADERBOARD` to
the validation and test rows, timing each second stage's fit.

Each family is named ``"<calibration>-<correction>"`` (``iso-tpr_dag``,
``platt-mcm``, ...); its values are hierarchy-consistent (``flat`` is the
calibrated scores without a correction), so the benchmark ranks them by
NaiveSort (ancestors first on ties), as HEMDAG does.
"""

import time

import numpy as np

__all__ = ["LEADERBOARD", "CALIBRATION_PREFIX", "correction_values", "precision_at_recall_levels"]

#: (correction name in hmcpgm.corrections.CORRECTIONS, options, label)
LEADERBOARD = (
    ("flat", {}, "flat"),
    ("htd", {}, "htd"),
    ("gpav", {}, "gpav"),
    ("tpr_dag", {}, "tpr"),
    ("iso_tpr", {}, "iso_tpr"),
    ("descens", {}, "descens"),
    ("obozinski", {"method": "and"}, "and"),
    ("obozinski", {"method": "or"}, "or"),
    ("mcm", {}, "mcm"),
)

#: calibration method -> the prefix of its families' names
CALIBRATION_PREFIX = {"isotonic": "iso", "platt": "platt"}


def correction_values(s_train, y_train, score_sets, hierarchy, *, calibrations=("isotonic", "platt"),
                      corrections=LEADERBOARD):
    """Values of every classic second stage for each score matrix of ``score_sets``.

    Parameters
    ----------
    s_train, y_train : (M, K) arrays
        Training scores (out of fold) and labels, in ``hierarchy.classes`` order.
    score_sets : sequence of (M_i, K) arrays
        Scores to correct (e.g. validation and test rows).
    hierarchy : Hierarchy
        The class hierarchy.
    calibrations : tuple of str
        Per-class calibrations (:func:`hmcpgm.corrections.fit_calibration`).
    corrections : tuple
        ``(name, options, label)`` triples, see :data:`LEADERBOARD`.

    Returns
    -------
    values : dict
        ``"<prefix>-<label>"`` -> tuple of (M_i, K) arrays, one per score set.
    seconds : dict
        The same keys -> seconds to fit the per-class calibration (a correction
        has nothing else to fit) plus the time to calibrate and correct the score
        sets (each correction's share of calibrating them, and its own pass).
    """
    from ..corrections import CORRECTIONS, fit_calibration

    values, seconds = {}, {}
    for method in calibrations:
        t0 = time.perf_counter()
        cal = fit_calibration(s_train, y_train, method=method)
        fit_time = time.perf_counter() - t0
        calibrated = [cal.transform(s) for s in score_sets]
        share = (time.perf_counter() - t0 - fit_time) / max(len(corrections), 1)
        for name, options, label in corrections:
            entry = CORRECTIONS[name]
            t1 = time.perf_counter()
            out = tuple(np.asarray(entry(c, hierarchy, **options), dtype=float) for c in calibrated)
            key = f"{CALIBRATION_PREFIX.get(method, method)}-{label}"
            values[key] = out
            seconds[key] = fit_time + share + (time.perf_counter() - t1)
    return values, seconds


def precision_at_recall_levels(precision, recall, levels):
    """Precision of the shortest prefix of a ranking whose recall reaches each level.

    Parameters
    ----------
    precision, recall : arrays of shape (n,)
        Of the top ``r`` events, r = 1..n (:func:`hmcpgm.metrics.pr_curve`).
    levels : sequence of float in (0, 1]
        Recall levels.

    Returns
    -------
    list of float
        One precision per level (nan when the ranking never reaches the level).

    Examples
    --------
    >>> precision_at_recall_levels(np.array([1, .5, .67, .5]), np.array([.5, .5, 1, 1]), (0.5, 1.0))
    [1.0, 0.67]
    """
    precision = np.asarray(precision, float)
    recall = np.asarray(recall, float)
    out = []
    for level in levels:
        hit = np.flatnonzero(recall >= level - 1e-12)
        out.append(float(precision[hit[0]]) if hit.size else float("nan"))
    return out
