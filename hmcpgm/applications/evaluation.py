"""One evaluation loop for the paper's experiment and the real-data benchmark.

Every method family (raw scores, mLPR versions) is ranked by NaiveSort and by
HierRank; cutoffs are chosen on validation rows and measured on test rows.
"""

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..decision import bayes_cutoff, choose_cutoff
from ..exceptions import CutoffWarning, InputError
from ..metrics import (
    area_under_hit_curve,
    average_precision,
    bootstrap_average_precision,
    discovery_proportion,
    f1_score,
    fdp,
    pr_curve,
    precision_recall_at,
)
from ..ranking import count_violations, hier_rank, naive_sort
from .leaderboard import precision_at_recall_levels

__all__ = ["RANKERS", "cutoff_power", "evaluate_methods", "fdr_curve", "oracle_rank", "paper_mlprs"]

#: The two ways every family of values is ranked.
RANKERS = {"NaiveSort": naive_sort, "HierRank": hier_rank}


def evaluate_methods(values, hierarchy, labels_valid, labels_test, *, classes=None, kappas=(),
                     fdr_alphas=(), bayes_alphas=(), auprc=False, bayes_values=None, recalls=(), rankers=None,
                     bayes_families=None, cafa_ia=None, bootstrap=0, reference=None, seed=0):
    """Every metric of every method, on test rows, with cutoffs chosen on validation rows.

    Parameters
    ----------
    values : dict
        Family name -> ``(valid_values, test_values)``, each (M, K) in
        ``hierarchy.classes`` order. Each family is ranked by NaiveSort and HierRank;
        the method is ``f"{family}-{ranker}"``.
    hierarchy : Hierarchy
        Fixes the column order of the values and labels.
    labels_valid, labels_test : (M, K) 0/1 arrays
        The true labels of the validation and the test rows (rows as in ``values``).
    classes : sequence, optional
        The evaluated classes (default all). Rankings are restricted to them for
        every metric but ``violations``, which counts over all classes.
    kappas : tuple of float
        ``precision@kappa`` and ``recall@kappa``: of the top ``kappa`` of test events.
    fdr_alphas : tuple of float
        ``fdp@alpha`` and ``discovery@alpha``: at the largest validation prefix with
        realised FDR at most alpha, carried to the test rows by proportion (0 events
        when no validation prefix meets alpha).
    bayes_alphas : tuple of float
        For families whose values are probabilities: ``bayes_rank@alpha`` (test events
        called positive by the Bayesian FDR cutoff on the test mLPRs),
        ``bayes_fdp@alpha`` (their realised false discovery proportion; None when no
        event is called), ``bayes_min_fdr@alpha`` (when nothing is called: the
        smallest estimated FDR of any prefix) and ``oracle_rank@alpha`` (the
        longest prefix of the same ranking whose realised FDP is at most alpha:
        what a cutoff that knew the test labels would call).
    auprc : bool
        ``auprc``: micro-averaged area under the PR curve of the test ranking;
        ``valid_auprc``: the same of the validation ranking (what a user without
        test labels can choose a method by).
    bayes_values : dict, optional
        Family name -> (M, K) test probabilities that the Bayesian FDR cutoff averages
        instead of the family's test values (e.g. recalibrated mLPRs), on the
        family's own ranking.
    recalls : tuple of float
        ``precision@recall{r}``: precision of the shortest prefix of the test
        ranking whose recall reaches ``r`` (the high-precision start of the PR curve).
    rankers : dict, optional
        Family name -> tuple of ranker names of :data:`RANKERS` (default both for
        every family); e.g. hierarchy-consistent corrections ranked by NaiveSort only.
    bayes_families : collection of str, optional
        The families that get the Bayesian FDR cutoff (default every family but
        ``Raw`` whose values are probabilities).
    cafa_ia : array of shape (K,), optional
        When given, every family whose values are probabilities also gets CAFA's
        protein-centric ``fmax``, ``smin`` and ``weighted_fmax`` on the test rows
        (:func:`hmcpgm.metrics.cafa_metrics` over all classes, with this
        information accretion; the same for both rankers, which do not change
        the values).
    bootstrap : int, default 0
        With ``auprc``, this many bootstrap resamples of the test rows
        (:func:`hmcpgm.metrics.bootstrap_average_precision`, every method on
        the same resamples): ``auprc_se``, the standard error of the method's
        test AU(PRC).
    reference : str, optional
        A method (e.g. ``"mLPR-auto-HierRank"``): with ``bootstrap``, every
        method also gets the paired bootstrap of its AU(PRC) minus the
        reference's: ``auprc_diff_se`` (standard error) and ``auprc_diff_low``,
        ``auprc_diff_high`` (the 2.5% and 97.5% quantiles).
    seed : int, default 0
        Seeds the bootstrap resamples.

    Returns
    -------
    dict
        Method -> {metric: value}; always ``f1_max_f1_cutoff`` and ``kappa_max_f1``
        (the max-F1 cutoff chosen on validation), ``hit_curve_area`` (normalised) and
        ``violations`` (ancestor pairs out of order in the test ranking).
    """
    keep, cols = _evaluated(hierarchy, classes)
    y_valid = np.asarray(labels_valid)[:, cols]
    y_test = np.asarray(labels_test)[:, cols]
    out, boots = {}, {}
    # the rankings are the heavy part; their compiled kernels and sorts release the GIL
    use = {family: tuple((rankers or {}).get(family, tuple(RANKERS))) for family in values}
    if reference is not None and reference not in {f"{f}-{r}" for f in values for r in use[f]}:
        raise InputError(f"reference must be one of the methods evaluated, got {reference!r}")
    jobs = [(family, rank_name, part) for family in values for rank_name in use[family] for part in (0, 1)]
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        done = dict(zip(jobs, pool.map(lambda job: RANKERS[job[1]](values[job[0]][job[2]], hierarchy), jobs)))
    for family, (_, v_test) in values.items():
        probabilities = bool(np.min(v_test, initial=0.0) >= 0 and np.max(v_test, initial=0.0) <= 1)
        cafa = {}
        if cafa_ia is not None and probabilities:
            from ..metrics import cafa_metrics

            got = cafa_metrics(v_test, np.asarray(labels_test), hierarchy, ia=cafa_ia)
            cafa = {k: float(got[k]) for k in ("fmax", "smin", "weighted_fmax")}
        for rank_name in use[family]:
            full_test = done[family, rank_name, 1]
            r_valid = done[family, rank_name, 0].restrict(keep)
            r_test = full_test.restrict(keep)
            row = {}
            if auprc:
                row["auprc"] = average_precision(-r_test.ranks.astype(float), y_test, exclude_roots=False)
                row["valid_auprc"] = average_precision(-r_valid.ranks.astype(float), y_valid, exclude_roots=False)
                if bootstrap:
                    boots[f"{family}-{rank_name}"] = aps = bootstrap_average_precision(
                        r_test, y_test, n_resamples=bootstrap, seed=seed)
                    row["auprc_se"] = _spread(aps)
            precision, recall = precision_recall_at(r_test, y_test, kappas)
            row.update({f"precision@{k}": float(p) for k, p in zip(kappas, np.atleast_1d(precision))})
            row.update({f"recall@{k}": float(r) for k, r in zip(kappas, np.atleast_1d(recall))})
            if recalls:
                curve_p, curve_r = pr_curve(r_test, y_test)
                row.update({f"precision@recall{lv}": p for lv, p in
                            zip(recalls, precision_at_recall_levels(curve_p, curve_r, recalls))})
            for alpha in fdr_alphas:
                with warnings.catch_warnings():  # no validation prefix meets alpha: 0 events, reported as such
                    warnings.simplefilter("ignore", CutoffWarning)
                    cut = choose_cutoff(r_valid, y_valid, rule="fdr", alpha=alpha)
                decisions = cut.apply(r_test)
                row[f"fdp@{alpha}"] = fdp(decisions, y_test)
                row[f"discovery@{alpha}"] = discovery_proportion(decisions, y_test)
            best = choose_cutoff(r_valid, y_valid, rule="max_f1")
            row["f1_max_f1_cutoff"] = float(f1_score(best.apply(r_test), y_test))
            row["kappa_max_f1"] = float(best.kappa)
            row["hit_curve_area"] = float(area_under_hit_curve(r_test, y_test))
            bayes = family != "Raw" if bayes_families is None else family in bayes_families
            if probabilities and bayes:
                p_test = np.asarray((bayes_values or {}).get(family, v_test))[:, cols]
                for alpha in bayes_alphas:
                    got = _bayes_power(r_test, p_test, y_test, alpha)
                    row[f"bayes_rank@{alpha}"], row[f"bayes_fdp@{alpha}"] = got["called"], got["fdp"]
                    row[f"bayes_min_fdr@{alpha}"], row[f"oracle_rank@{alpha}"] = got["min_fdr"], got["oracle"]
            row.update(cafa)
            row["violations"] = int(count_violations(full_test, hierarchy))
            out[f"{family}-{rank_name}"] = row
    if reference is not None and boots:
        for method, aps in boots.items():
            diff = aps - boots[reference]
            low, high = np.nanquantile(diff, [0.025, 0.975]) if np.isfinite(diff).any() else (np.nan, np.nan)
            out[method].update(auprc_diff_se=_spread(diff), auprc_diff_low=float(low), auprc_diff_high=float(high))
    return out


def _spread(values):
    """Standard deviation (ddof 1) of the finite values; nan with fewer than two."""
    finite = np.asarray(values)[np.isfinite(values)]
    return float(np.std(finite, ddof=1)) if finite.size > 1 else float("nan")


def cutoff_power(values, probabilities, labels, hierarchy, classes, alphas):
    """The Bayesian FDR cutoff's calls and realised FDP beside the oracle's, on one HierRank ranking.

    Parameters
    ----------
    values : (M, K) array
        What HierRank ranks (e.g. mLPRs), in ``hierarchy.classes`` order.
    probabilities : (M, K) array
        The probabilities whose mean of ``1 - p`` estimates the FDR.
    labels : (M, K) 0/1 array
        The true labels.
    hierarchy : Hierarchy
        Fixes the column order and the ranking's constraints.
    classes : sequence
        The evaluated classes.
    alphas : sequence of float
        Target false discovery rates.

    Returns
    -------
    dict
        ``{str(alpha): {"called", "fdp", "min_fdr", "oracle"}}``: ``fdp`` is None
        when nothing is called, ``min_fdr`` (the smallest estimated FDR of any
        prefix) only then.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([], classes=[0, 1, 2, 3])
    >>> p = np.array([[0.99, 0.98, 0.5, 0.97]])
    >>> cutoff_power(p, p, np.array([[1, 1, 0, 1]]), h, [0, 1, 2, 3], [0.05])  # mean of 1 - p: 0.02 at 3 events
    {'0.05': {'called': 3, 'fdp': 0.0, 'min_fdr': None, 'oracle': 3}}
    """
    keep, cols = _evaluated(hierarchy, classes)
    ranking = hier_rank(np.asarray(values, dtype=float), hierarchy).restrict(keep)
    y = np.asarray(labels)[:, cols]
    p = np.asarray(probabilities, dtype=float)[:, cols]
    return {str(alpha): _bayes_power(ranking, p, y, alpha) for alpha in alphas}


def _evaluated(hierarchy, classes):
    """The evaluated class names and their columns, in the hierarchy's order: the order a restricted ranking
    keeps, so that labels sliced by these columns line up with it (classes listed in another order paired
    every label column with another class's ranking)."""
    cols = np.unique(hierarchy.indices(list(hierarchy.classes if classes is None else classes)))
    return [hierarchy.classes[c] for c in cols], cols


def _bayes_power(ranking, probabilities, labels, alpha):
    """The Bayesian FDR cutoff at ``alpha`` on ``ranking`` (columns as its classes): events called, their
    realised FDP (None when none), the smallest estimated FDR (only then) and the oracle's count."""
    with warnings.catch_warnings():  # nothing called: reported as 0 with min_fdr
        warnings.simplefilter("ignore", CutoffWarning)
        cut = bayes_cutoff(ranking, probabilities, rule="fdr", alpha=alpha)
    return {
        "called": int(cut.rank),
        "fdp": fdp(cut.apply(ranking), labels) if cut.rank else None,
        "min_fdr": None if cut.rank else float(cut.min_fdr),
        "oracle": oracle_rank(ranking, labels, alpha),
    }


def oracle_rank(ranking, labels, alpha):
    """The longest prefix of a ranking whose realised false discovery proportion is at most ``alpha``.

    The oracle cutoff (SPEC section 19): what a cutoff that knew the labels would
    call; a cutoff chosen without them is powerful when it calls a large share of it.

    Parameters
    ----------
    ranking : Ranking
        A ranking of the labelled events.
    labels : (M, K) 0/1 array
        Their labels (columns as the ranking's classes).
    alpha : float
        The target false discovery rate.

    Returns
    -------
    int
        The number of events of that prefix (0 when none qualifies).

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, hier_rank
    >>> r = hier_rank(np.array([[0.9, 0.8, 0.7, 0.6]]), Hierarchy.from_edges([], classes=[0, 1, 2, 3]))
    >>> oracle_rank(r, np.array([[1, 1, 0, 1]]), 0.25)   # FDP 0, 0, 1/3, 1/4
    4
    >>> oracle_rank(r, np.zeros((1, 4)), 0.25)           # no positive: every prefix has FDP 1
    0
    """
    from .._arrays import binary_matrix
    from ..decision import check_alpha
    from ..ranking._ranking import matrix_for

    check_alpha(alpha)
    ranked, y = matrix_for(ranking, labels, "labels", flat=False)
    if not binary_matrix(y, "labels").any():  # every prefix has FDP 1 (choose_cutoff refuses such labels)
        return 0
    with warnings.catch_warnings():  # no prefix qualifies: 0, reported as such
        warnings.simplefilter("ignore", CutoffWarning)
        return int(choose_cutoff(ranked, y, rule="fdr", alpha=alpha).rank)


def fdr_curve(values, probabilities, labels, hierarchy, *, classes=None, n_points=40):
    """Estimated against realised false discovery proportion along a HierRank ranking.

    The events of ``values`` (e.g. mLPRs) are ranked by :func:`hmcpgm.hier_rank`
    over ``classes``; at about ``n_points`` prefix lengths (log-spaced) the
    estimate ``mean(1 - p)`` of each probability matrix in ``probabilities`` is set
    beside the realised proportion of negatives among the prefix's events.

    Parameters
    ----------
    values : (M, K) array
        The values that HierRank ranks (e.g. mLPRs), in ``hierarchy.classes`` order.
    probabilities : dict
        Name -> (M, K) probabilities whose mean of ``1 - p`` estimates the FDR
        (e.g. ``{"calibrated": ..., "mLPR": ...}``).
    labels : (M, K) 0/1 array
        The true labels, which give the realised proportion.
    hierarchy : Hierarchy
        Fixes the column order and the ranking's constraints.
    classes : sequence, optional
        The evaluated classes (default all).
    n_points : int
        About how many prefix lengths are reported (log-spaced; duplicates dropped).

    Returns
    -------
    dict
        ``rank`` (prefix lengths), ``realised`` and one list per name of ``probabilities``.
    """
    keep, cols = _evaluated(hierarchy, classes)
    ranking = hier_rank(values, hierarchy).restrict(keep)
    n = ranking.n_events
    prefix = np.unique(np.geomspace(1, max(n, 1), n_points).astype(int)) if n else np.zeros(0, int)
    count = np.arange(1, n + 1)
    y = ranking.ranked(np.asarray(labels)[:, cols])
    out = {"rank": prefix.tolist(), "realised": ((np.cumsum(1 - y) / count)[prefix - 1]).tolist()}
    for name, p in probabilities.items():
        q = ranking.ranked(np.asarray(p)[:, cols])
        out[name] = ((np.cumsum(1 - q) / count)[prefix - 1]).tolist()
    return out


def paper_mlprs(model, version, score_sets, engine="auto"):
    """mLPRs of one version of the paper's model for each score matrix of ``score_sets``.

    ``model`` is an :class:`hmcpgm.MLPR` fitted as the paper's model (nothing
    cross-fitted, evidence exponent 1), so one fit serves every version: its
    second stage (``model.second_stage_``) with ``version`` and ``engine`` (no
    engine options), the same numbers as ``model.set_params(version=version,
    engine=engine).predict_proba`` without changing ``model``.

    Parameters
    ----------
    model : MLPR
        Fitted with ``tempering=None, recalibrate=False``.
    version : {"indpt", "nbh", "full"}
        The mLPR version.
    score_sets : sequence of (M, K) arrays
        First-stage scores, columns in ``model.classes_`` order.
    engine : str
        Inference engine of :func:`hmcpgm.mlpr_from_likelihoods`.

    Returns
    -------
    tuple of ndarray
        One (M, K) mLPR matrix per score matrix.
    """
    from dataclasses import replace

    from ..estimator import SCORE_LIMIT

    stage = replace(model.second_stage_, version=version, engine=engine, options={})
    return tuple(stage.predict_proba(np.clip(s, -SCORE_LIMIT, SCORE_LIMIT)) for s in score_sets)
