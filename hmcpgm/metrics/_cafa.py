"""Protein-centric metrics of the CAFA challenges: Fmax, weighted Fmax, Smin, information accretion.

They follow the CAFA evaluator (``cafaeval`` 1.3, the tool of the protein-function
community) exactly, on an ``(M, K)`` matrix of values (scores, probabilities) and a
0/1 label matrix whose rows are the targets (proteins) and whose columns are the
classes (terms) of one namespace:

- the labels are closed upward along the hierarchy (cafaeval propagates the ground
  truth), and the targets are the rows with at least one positive label (the ground
  truth file lists only annotated proteins); other rows are left out;
- the values are propagated to the ancestors by max (``propagate=True``, cafaeval's
  default ``-prop max``): a term scores at least as high as any of its descendants;
- thresholds ``tau = numpy.arange(step, 1, step)``, by default 0.01, 0.02, ..., 0.99;
  a term is predicted for a target when its value is ``>= tau``;
- at each tau, per target: precision ``|P & T| / |P|`` (0 when nothing is predicted)
  and recall ``|P & T| / |T|``; with ``normalization="cafa"`` precision is averaged
  over the targets with at least one prediction and recall over all targets
  (``"pred"``: both over the targets with a prediction, ``"gt"``: both over all
  targets); the coverage is the share of targets with a prediction; taus of zero
  coverage are dropped; F is the harmonic mean of the averages (0 when both are 0);
- Fmax is the largest F, Smin the smallest ``sqrt(ru^2 + mi^2)``, where the remaining
  uncertainty ``ru`` and the misinformation ``mi`` are the information-accretion (IA)
  weighted sums of the false negatives and false positives, averaged over all
  targets; ties go to the smallest tau (values equal up to rounding are ties);
- the unweighted metrics evaluate every term (cafaeval's default; ``exclude_roots=True``
  is its ``-no_orphans``: the terms without parents are left out); the IA-weighted
  ones evaluate the terms of positive IA, whatever ``exclude_roots`` says (as cafaeval
  does), and weight each term by its IA.
"""

from typing import NamedTuple

import numpy as np

from .._arrays import binary_matrix
from .._validation import aligned_matrices, check_hierarchy
from ..exceptions import InputError, LabelError
from ._common import class_series, propagate_max, scored_labels
from ._ranked import ap_from_counts, without_roots

__all__ = ["ThresholdScore", "cafa_curve", "cafa_metrics", "fmax", "information_accretion", "propagated_auprc", "smin",
           "weighted_fmax"]

_NORMALIZATIONS = ("cafa", "pred", "gt")


class ThresholdScore(NamedTuple):
    """A metric optimised over thresholds, as CAFA reports it.

    Attributes
    ----------
    value : float
        The metric (Fmax, Smin, ...); ``nan`` when no threshold has coverage.
    threshold : float
        The tau that reaches it (the smallest such tau).
    coverage : float
        The share of targets with at least one prediction at that tau.
    """

    value: float
    threshold: float
    coverage: float


def information_accretion(labels, hierarchy):
    """Information accretion of each class, ``-log2 P(class | all its parents)``, from labels.

    Estimated as in the CAFA organisers' script (``ia.py`` of the InformationAccretion
    repository, used for CAFA 5) with its one pseudo-object annotated with every class:
    ``IA(k) = -log2((n(k) + 1) / (n(parents of k) + 1))``, where ``n(k)`` counts the
    objects labelled ``k`` and ``n(parents of k)`` those labelled with all the parents of
    ``k`` (all objects for a root). The labels are closed upward first, and objects
    without any positive label are left out (annotation files list annotated objects).

    Parameters
    ----------
    labels : array or DataFrame of 0/1, shape (M, K)
        The reference annotations (a DataFrame is aligned by class name).
    hierarchy : Hierarchy
        The classes.

    Returns
    -------
    ndarray of float, shape (K,), or Series
        Nonnegative; a Series indexed by class name when ``labels`` is a DataFrame.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> information_accretion([[1, 1, 0], [1, 1, 1], [1, 0, 0]], h)   # a: 2 of 3, b: 1 of 3
    array([0.       , 0.4150375, 1.       ])
    """
    check_hierarchy(hierarchy)
    (y,) = aligned_matrices([(labels, "labels")], hierarchy, keep_integers=("labels",))
    y = hierarchy.close_labels(binary_matrix(y, "labels", hierarchy)).astype(bool)
    y = y[y.any(axis=1)]
    n_term = y.sum(axis=0) + 1.0
    ia = np.zeros(hierarchy.n_classes)
    for k, parents in enumerate(hierarchy.parent_indices):
        n_parents = (y[:, parents].all(axis=1).sum() if len(parents) else len(y)) + 1.0
        ia[k] = 0.0 if n_term[k] == n_parents else -np.log2(n_term[k] / n_parents)
    return class_series(ia, hierarchy, labels, "information_accretion")


def _ia_vector(ia, hierarchy):
    """IA as a (K,) array: from an array in class order, or a Series/dict by class name (missing: 0)."""
    if ia is None:
        return None
    if isinstance(ia, dict) or hasattr(ia, "items"):  # a dict or a Series: by class name
        items = dict(ia.items())
        unknown = [c for c in items if c not in hierarchy]
        if len(unknown) == len(items) and items:
            raise InputError(f"ia names no class of the hierarchy (e.g. {unknown[0]!r}); give IA by class name")
        out = _numbers([items.get(c, 0.0) for c in hierarchy.classes])
    else:
        out = _numbers(ia)
        if out.shape != (hierarchy.n_classes,):
            raise InputError(f"ia must have one value per class, shape ({hierarchy.n_classes},), got {out.shape}")
    # cafaeval weighs only the terms of positive, finite IA: NaN, infinite and negative IA count as 0
    out = np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
    return np.maximum(out, 0.0)


def _numbers(ia):
    try:
        out = np.asarray(ia, dtype=float)
    except (TypeError, ValueError):
        raise InputError("ia must hold one number per class (information accretion)") from None
    return out


MIN_THRESHOLD_STEP = 1e-5  # 10^5 thresholds: cafaeval's grid of 0.01 has 99


def _thresholds(step):
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, float, np.integer, np.floating)) \
            or not MIN_THRESHOLD_STEP <= step < 1:
        raise InputError(f"threshold_step must be a number in [{MIN_THRESHOLD_STEP:g}, 1), got {step!r}")
    return np.arange(float(step), 1, float(step))


_CHUNK_ROWS = 256
_CHUNK_CELLS = 1 << 22  # (target, threshold) counts per block: 32 MB of float64


def _sums(taus, g, pred, w):
    """Per tau: targets with a prediction, TP, FP, FN, summed precision and recall (cafaeval's matrix), of one
    block of targets (:func:`_block_rows`).

    cafaeval thresholds the (targets x terms) matrix once per tau; here each value's
    bin among the taus is found once (``tau_t <= value`` exactly when ``t < bin``), the
    (weighted) counts are histogrammed by bin per target, and reverse cumulative sums
    give every tau's counts: the same comparisons in O(M K + M T).
    """
    m, n_taus = pred.shape[0], len(taus)
    weights = np.ones(pred.shape[1]) if w is None else np.asarray(w, dtype=float)
    size = m * (n_taus + 1)
    # a value below the first tau lands in bin 0, which no tau counts. When most values are there (a CAFA block:
    # the terms a target has no prediction for), only the others are binned, in the same (row-major) order, so
    # every bin sums the same numbers in the same order as the whole block would
    reached = pred >= taus[0]
    if np.count_nonzero(reached) < reached.size // 4:
        rows, cols = np.nonzero(reached)
        flat = rows * (n_taus + 1) + np.searchsorted(taus, pred[rows, cols], side="right")  # bin: taus <= value
        cell_weights, hit = weights[cols], g[rows, cols]
    else:
        flat = (np.arange(m)[:, None] * (n_taus + 1) + np.searchsorted(taus, pred, side="right")).ravel()
        cell_weights, hit = np.broadcast_to(weights, pred.shape).ravel(), g.ravel()

    def above(counted):
        hist = np.bincount(flat, weights=counted, minlength=size).astype(float).reshape(m, n_taus + 1)
        return np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:]  # [i, t]: sum over values >= taus[t]

    n_pred = above(cell_weights)
    n_inter = above(np.where(hit, cell_weights, 0.0))
    n_gt = np.where(g, weights, 0.0).sum(axis=1)[:, None]
    out = np.zeros((n_taus, 6))
    out[:, 0] = (n_pred > 0).sum(axis=0)
    out[:, 1] = n_inter.sum(axis=0)
    out[:, 2] = (n_pred - n_inter).sum(axis=0)
    out[:, 3] = (n_gt - n_inter).sum(axis=0)
    out[:, 4] = np.divide(n_inter, n_pred, out=np.zeros_like(n_pred), where=n_pred > 0).sum(axis=0)
    out[:, 5] = np.divide(n_inter, n_gt, out=np.zeros_like(n_inter), where=n_gt > 0).sum(axis=0)
    return out


def _normalised(sums, n_targets, normalization):
    n = sums[:, 0]
    ne = np.full(len(n), float(n_targets))

    def norm(col, by_pred):
        den = n if by_pred else ne
        return np.divide(sums[:, col], den, out=np.zeros(len(n)), where=den > 0)

    by_pred = normalization == "pred"
    pr = norm(4, normalization in ("pred", "cafa"))
    rc = norm(5, by_pred)
    mi = norm(2, by_pred)
    ru = norm(3, by_pred)
    num, den = 2 * pr * rc, pr + rc
    f = np.divide(num, den, out=np.zeros(len(n)), where=den != 0)
    return {"n": n, "coverage": n / ne, "precision": pr, "recall": rc, "f": f,
            "misinformation": mi, "remaining_uncertainty": ru, "s": np.sqrt(ru ** 2 + mi ** 2)}


def cafa_curve(values, labels, hierarchy, *, ia=None, weighted=False, exclude_roots=False, normalization="cafa",
               propagate=True, threshold_step=0.01):
    """CAFA's protein-centric precision, recall, F, misinformation and remaining uncertainty per threshold.

    The rows of cafaeval's ``evaluation_all.tsv`` for one namespace (see the module
    docstring for the conventions).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely; rows are targets.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes (one namespace of the ontology).
    ia : array (K,), Series or dict, optional
        Information accretion per class; default: :func:`information_accretion` of
        ``labels``. Used only when ``weighted``. As in cafaeval, only the classes of
        positive, finite IA are weighed (NaN, infinite or negative IA counts as 0).
    weighted : bool, default False
        Weight terms by IA (the ``_w`` columns of cafaeval).
    exclude_roots : bool, default False
        Leave out the classes without parents (cafaeval's ``-no_orphans``); unweighted only.
    normalization : {"cafa", "pred", "gt"}, default "cafa"
        cafaeval's ``-norm``.
    propagate : bool, default True
        Propagate the values to the ancestors by max first.
    threshold_step : float in [1e-5, 1), default 0.01
        The threshold grid ``numpy.arange(step, 1, step)`` (cafaeval's ``-th_step``).

    Returns
    -------
    pandas.DataFrame
        One row per threshold of positive coverage (unweighted, as cafaeval keeps them):
        ``tau, n, coverage, precision, recall, f, misinformation, remaining_uncertainty, s``.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> curve = cafa_curve([[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]], h, threshold_step=0.25)
    >>> curve[["tau", "precision", "recall"]].values.tolist()   # r takes the max of its children
    [[0.25, 0.8333333333333333, 1.0], [0.5, 1.0, 1.0], [0.75, 1.0, 0.5]]
    """
    if not isinstance(weighted, (bool, np.bool_)):
        raise InputError(f"weighted must be True or False, got {weighted!r}")
    return _curves(values, labels, hierarchy, ia=ia, weighted=weighted, exclude_roots=exclude_roots,
                   normalization=normalization, propagate=propagate, threshold_step=threshold_step)[int(weighted)]


def _curves(values, labels, hierarchy, *, ia, weighted, exclude_roots, normalization, propagate, threshold_step):
    """``(unweighted curve, IA-weighted curve or None)``: the inputs checked and propagated once."""
    import pandas as pd

    if normalization not in _NORMALIZATIONS:
        raise InputError(f"normalization must be one of {', '.join(map(repr, _NORMALIZATIONS))}, got {normalization!r}")
    taus = _thresholds(threshold_step)
    s, y = scored_labels(values, labels, hierarchy)
    targets = np.flatnonzero(y.any(axis=1))
    if not targets.size:
        raise LabelError("labels have no positive: CAFA metrics need at least one annotated target")
    cols = np.arange(hierarchy.n_classes)
    if exclude_roots:
        cols = cols[~np.isin(cols, hierarchy.root_indices)]
    w = None
    if weighted:
        w = _ia_vector(ia, hierarchy) if ia is not None else np.asarray(information_accretion(y, hierarchy))
    w_cols = None if w is None else np.flatnonzero(w > 0)
    sums = [0, 0]
    # block by block of targets, each block propagated on its own (rows are independent): no temporary of the
    # whole (M, K) namespace, which weighs gigabytes on the Gene Ontology, nor of the (M, T) counts of a fine grid
    for block in _target_blocks(targets, len(taus)):
        g = y[block].astype(bool)
        p = propagate_max(s[block], hierarchy) if propagate else s[block]
        sums[0] = sums[0] + _sums(taus, g[:, cols], p[:, cols], None)
        if w is not None:
            sums[1] = sums[1] + _sums(taus, g[:, w_cols], p[:, w_cols], w[w_cols])
    plain = _normalised(sums[0], len(targets), normalization)
    keep = plain["coverage"] > 0  # cafaeval drops the thresholds without (unweighted) coverage
    curves = [pd.DataFrame({"tau": taus, **plain})[keep].reset_index(drop=True), None]
    if w is not None:
        result = _normalised(sums[1], len(targets), normalization)
        curves[1] = pd.DataFrame({"tau": taus, **result})[keep].reset_index(drop=True)
    return curves


def _target_blocks(targets, n_taus):
    """The rows of ``targets`` (sorted indices) a block at a time: slices where they run without a gap."""
    rows = max(1, min(_CHUNK_ROWS, _CHUNK_CELLS // (n_taus + 1)))
    every = targets.size == 0 or targets[-1] - targets[0] + 1 == targets.size
    for i in range(0, targets.size, rows):
        part = targets[i:i + rows]
        yield slice(int(part[0]), int(part[-1]) + 1) if every else part


_TIE = 1e-12  # relative: values this close are one value summed in two orders


def _best(curve, column, smallest=False):
    """The row of the best value, the smallest tau among ties (values equal up to rounding, as cafaeval gets
    them bit for bit where its sums and these differ in the last bit)."""
    if len(curve) == 0:
        return ThresholdScore(float("nan"), float("nan"), 0.0)
    v = curve[column].to_numpy()
    best = v.min() if smallest else v.max()
    slack = _TIE * max(1.0, abs(best))
    i = int(np.flatnonzero(v <= best + slack if smallest else v >= best - slack)[0])
    row = curve.iloc[i]
    return ThresholdScore(float(row[column]), float(row["tau"]), float(row["coverage"]))


def fmax(values, labels, hierarchy, *, exclude_roots=False, normalization="cafa", propagate=True,
         threshold_step=0.01):
    """CAFA's protein-centric Fmax: the best F over the thresholds (cafaeval's ``f``).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely; rows are targets.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes (one namespace of the ontology).
    exclude_roots : bool, default False
        Leave out the classes without parents (cafaeval's ``-no_orphans``).
    normalization : {"cafa", "pred", "gt"}, default "cafa"
        cafaeval's ``-norm``.
    propagate : bool, default True
        Propagate the values to the ancestors by max first.
    threshold_step : float in [1e-5, 1), default 0.01
        The threshold grid ``numpy.arange(step, 1, step)``.

    Returns
    -------
    ThresholdScore
        ``(value, threshold, coverage)``.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> fmax([[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]], h)
    ThresholdScore(value=1.0, threshold=0.31, coverage=1.0)
    """
    curve, _ = _curves(values, labels, hierarchy, ia=None, weighted=False, exclude_roots=exclude_roots,
                       normalization=normalization, propagate=propagate, threshold_step=threshold_step)
    return _best(curve, "f")


def weighted_fmax(values, labels, hierarchy, *, ia=None, exclude_roots=False, normalization="cafa",
                  propagate=True, threshold_step=0.01):
    """CAFA's weighted Fmax: precision and recall weighted by information accretion (cafaeval's ``f_w``).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely; rows are targets.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes (one namespace of the ontology).
    ia : array (K,), Series or dict, optional
        Information accretion per class; default: :func:`information_accretion` of ``labels``.
    exclude_roots : bool, default False
        Leave out the classes without parents (cafaeval's ``-no_orphans``); for IA-weighted
        metrics it only drops the thresholds without coverage.
    normalization : {"cafa", "pred", "gt"}, default "cafa"
        cafaeval's ``-norm``.
    propagate : bool, default True
        Propagate the values to the ancestors by max first.
    threshold_step : float in [1e-5, 1), default 0.01
        The threshold grid ``numpy.arange(step, 1, step)``.

    Returns
    -------
    ThresholdScore
        ``(value, threshold, coverage)``, the coverage counting targets with a
        predicted term of positive IA.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> weighted_fmax([[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]], h, ia=[0, 1, 2])
    ThresholdScore(value=1.0, threshold=0.31, coverage=1.0)
    """
    _, curve = _curves(values, labels, hierarchy, ia=ia, weighted=True, exclude_roots=exclude_roots,
                       normalization=normalization, propagate=propagate, threshold_step=threshold_step)
    return _best(curve, "f")


def smin(values, labels, hierarchy, *, ia=None, exclude_roots=False, normalization="cafa", propagate=True,
         threshold_step=0.01):
    """CAFA's Smin: the smallest ``sqrt(ru^2 + mi^2)`` over the thresholds, IA weighted (cafaeval's ``s_w``).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely; rows are targets.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes (one namespace of the ontology).
    ia : array (K,), Series or dict, optional
        Information accretion per class; default: :func:`information_accretion` of ``labels``.
        ``numpy.ones(K)`` gives cafaeval's unweighted ``s`` (every term weighs 1) without
        ``exclude_roots`` (which, as in cafaeval, leaves the roots in the weighted sums).
    exclude_roots : bool, default False
        Leave out the classes without parents (cafaeval's ``-no_orphans``); for IA-weighted
        metrics it only drops the thresholds without coverage.
    normalization : {"cafa", "pred", "gt"}, default "cafa"
        cafaeval's ``-norm``.
    propagate : bool, default True
        Propagate the values to the ancestors by max first.
    threshold_step : float in [1e-5, 1), default 0.01
        The threshold grid ``numpy.arange(step, 1, step)``.

    Returns
    -------
    ThresholdScore
        ``(value, threshold, coverage)``; lower is better.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> smin([[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]], h, ia=[0, 1, 2])
    ThresholdScore(value=0.0, threshold=0.31, coverage=1.0)
    """
    _, curve = _curves(values, labels, hierarchy, ia=ia, weighted=True, exclude_roots=exclude_roots,
                       normalization=normalization, propagate=propagate, threshold_step=threshold_step)
    return _best(curve, "s", smallest=True)


def cafa_metrics(values, labels, hierarchy, *, ia=None, exclude_roots=False, normalization="cafa", propagate=True,
                 threshold_step=0.01):
    """Fmax, Smin and weighted Fmax in one pass (the inputs checked and propagated once).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely; rows are targets.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes (one namespace of the ontology).
    ia : array (K,), Series or dict, optional
        Information accretion per class; default: :func:`information_accretion` of ``labels``
        (CAFA estimates it from a large annotation set: pass one, e.g. of the training labels).
    exclude_roots : bool, default False
        Leave out the classes without parents (cafaeval's ``-no_orphans``); for IA-weighted
        metrics it only drops the thresholds without coverage.
    normalization : {"cafa", "pred", "gt"}, default "cafa"
        cafaeval's ``-norm``.
    propagate : bool, default True
        Propagate the values to the ancestors by max first.
    threshold_step : float in [1e-5, 1), default 0.01
        The threshold grid ``numpy.arange(step, 1, step)``.

    Returns
    -------
    dict
        ``fmax``, ``fmax_threshold``, ``fmax_coverage``, ``smin``, ``smin_threshold``,
        ``weighted_fmax``, ``weighted_fmax_threshold``: the values of :func:`fmax`,
        :func:`smin` and :func:`weighted_fmax` (floats).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> m = cafa_metrics([[0.9, 0.8, 0.1], [0.6, 0.3, 0.5]], [[1, 1, 0], [1, 0, 1]], h, ia=[0, 1, 2])
    >>> m["fmax"], m["smin"], m["weighted_fmax"]
    (1.0, 0.0, 1.0)
    """
    plain, weighted = _curves(values, labels, hierarchy, ia=ia, weighted=True, exclude_roots=exclude_roots,
                              normalization=normalization, propagate=propagate, threshold_step=threshold_step)
    f, fw, s = _best(plain, "f"), _best(weighted, "f"), _best(weighted, "s", smallest=True)
    return {"fmax": f.value, "fmax_threshold": f.threshold, "fmax_coverage": f.coverage,
            "smin": s.value, "smin_threshold": s.threshold,
            "weighted_fmax": fw.value, "weighted_fmax_threshold": fw.threshold}


_AP_BLOCK_CELLS = 1 << 24  # cells of a block of rows propagated at a time: 128 MB of float64


def propagated_auprc(values, labels, hierarchy, *, exclude_roots=False):
    """Micro AU(PRC) of values propagated to the ancestors by max, against labels closed upward, in little memory.

    The number ``hmcpgm evaluate`` prints beside CAFA's metrics: equal to
    ``average_precision(propagate_max(values, hierarchy), hierarchy.close_labels(labels), hierarchy,
    exclude_roots=exclude_roots)`` up to rounding (the sum here runs over the distinct
    values held by a positive, whose terms are the only nonzero ones), computed a block
    of rows at a time: beyond the inputs it holds one block and the values of the
    positive events, not the copies and the sort of the whole (M, K) matrix that
    :func:`hmcpgm.metrics.average_precision` needs (gigabytes on the Gene Ontology).

    Parameters
    ----------
    values : array or DataFrame of float, shape (M, K)
        Predicted scores, higher = more likely. Finite.
    labels : array or DataFrame of 0/1, shape (M, K)
        The annotations (closed upward here). DataFrames are aligned by class name.
    hierarchy : Hierarchy
        The classes.
    exclude_roots : bool, default False
        Leave out the classes without parents.

    Returns
    -------
    float
        The average precision over every (row, class) event of the evaluated classes.

    Raises
    ------
    LabelError
        When the evaluated classes hold no positive label (AP is undefined).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    >>> values, labels = [[0.2, 0.9, 0.1], [0.6, 0.3, 0.5]], [[0, 0, 1], [0, 1, 0]]
    >>> propagated_auprc(values, labels, h, exclude_roots=True)  # a and b: 0.9 -, 0.5 -, 0.3 +, 0.1 +
    0.41666666666666663
    >>> propagated_auprc(values, labels, h)  # r, raised to 0.9 and 0.6, is positive on both rows
    0.6083333333333333
    """
    s, y = scored_labels(values, labels, hierarchy)
    cols = np.arange(hierarchy.n_classes)
    if exclude_roots:
        cols = without_roots(cols, hierarchy)
    rows = max(1, _AP_BLOCK_CELLS // hierarchy.n_classes)

    def blocks():
        for i in range(0, len(s), rows):
            yield propagate_max(s[i:i + rows], hierarchy)[:, cols], y[i:i + rows][:, cols].astype(bool)

    positives = np.sort(np.concatenate([p[g] for p, g in blocks()] or [np.zeros(0)]))
    if not positives.size:
        raise LabelError("labels have no positive among the evaluated classes; average precision is undefined")
    thresholds = np.unique(positives)  # the values at which recall grows
    tps = positives.size - np.searchsorted(positives, thresholds, side="left")  # positives >= each threshold
    counts = np.zeros(thresholds.size + 1, dtype=np.int64)
    zero_bin = np.searchsorted(thresholds, 0.0, side="right")
    for p, _ in blocks():  # events >= each threshold: each value binned by the thresholds it reaches
        v = p.ravel()
        nonzero = v[v != 0]  # most of a CAFA matrix: the terms a target has no prediction for, binned at once
        counts[zero_bin] += v.size - nonzero.size
        counts += np.bincount(np.searchsorted(thresholds, nonzero, side="right"), minlength=thresholds.size + 1)
    reached = np.cumsum(counts[::-1])[::-1][1:]
    return ap_from_counts(tps[::-1], reached[::-1], positives.size)  # from the highest threshold down
