"""Choosing version, tempering and score models by cross-fitting on the training rows."""

import time
import warnings

import numpy as np
from scipy.special import expit

from .._columns import labels_by_score_rows
from .._validation import check_hierarchy, class_matrix, label_matrix
from ..calibration import fit_recalibration, recalibration_classes
from ..exceptions import InputError
from ..likelihood import crossfitted_stack, fit_neighbour_stack, fit_score_model
from ..network import LabelNetwork
from ..options import check_pool, check_stack, resolve_prior
from ..second_stage import SecondStage, prior_log_odds_shift
from ..tempering import GROUPINGS, log_evidence_ratio, own_evidence, tempering_groups, with_prior
from ._choice import (
    CONSISTENCY,
    CRITERIA,
    SCREEN_GRID,
    VERSIONS,
    choose_version,
    consistent_values,
    criterion_value,
    indpt_logit_parts,
    paired_auprc_z,
    screen_version,
)
from ._crossfit import cross_fit, cross_fitted_mlpr, resolve_engine
from ._exponents import fit_exponents
from ._pool import choose_pool_weight, choose_stack_weight, crossfitted_isotonic

#: The consistency steps ``consistency="auto"`` tries against HierRank alone, each by its
#: paired bootstrap z on the cross-fitted values; the one with the largest z is taken when
#: it beats ``margin``. The max constraint lifts a class to its descendants' largest value.
#: Adding HTD-DAG (``"htd"``, which caps a class at its parents' smallest) was measured by
#: ``bench/consistency_candidates.py`` and not adopted (docs/concepts.md).
CONSISTENCY_CANDIDATES = ("max",)


#: (row, class) cells, that is events, that the cross-fitting of nbh and full keeps on a DAG before "auto"
#: subsamples its rows (never below 300 rows): the recalibration map is fitted on these events
DAG_CELLS = 300_000


def dag_rows(n_classes, least):
    """Rows of the seeded subsample ``max_rows="auto"`` / ``screen_rows="auto"`` take on a DAG.

    The subsample bounds the cost of nbh's and full's cross-fitted inference, and
    the chosen version's mLPRs on it fit the recalibration map. A DAG keeps as many
    rows as :data:`DAG_CELLS` events hold (a third of them for the screening,
    ``least`` = 100), and at least ``least``: 300 and 100 rows on the Gene Ontology,
    every row of a small DAG. A fixed 300 rows fitted the map of a 9-class DAG on
    2,700 events: its top block, all positives, read 1.0, and the FDR cutoff's
    realised FDR exceeded alpha (``python bench/fdr_well_specified.py --seeds
    0-39``: 0.062 at alpha 0.05 with 300 of 2,500 rows, 0.052 with every row).
    More rows cost fit time on a DAG of hundreds of classes (``python
    bench/dag_subsample.py`` times both rules).

    Parameters
    ----------
    n_classes : int
        Classes of the DAG.
    least : int
        The fewest rows: 300 for the exponent searches, 100 for the screening.

    Returns
    -------
    int
        ``max(least, DAG_CELLS * least // (300 * n_classes))``.

    Examples
    --------
    >>> dag_rows(4125, 300), dag_rows(4125, 100), dag_rows(9, 300), dag_rows(500, 300)
    (300, 100, 33333, 600)
    """
    return max(int(least), DAG_CELLS * least // (300 * int(n_classes)))


def fit_second_stage_auto(scores, labels, hierarchy, *, versions=VERSIONS, tempering="one", criterion="auprc",
                          score_model="auto", cv=5, seed=0, evaluated=None, max_rows="auto", screen_rows="auto",
                          screen_margin=3.0, engine="auto", a_min=0.02, n_iter=4, margin=1.0, recalibrate=True,
                          pseudo_count=0.5, allow_empty=True, consistency="auto", pool="auto", stack="auto",
                          descendants=False, prior="auto", return_predictions=False,
                          progress=False, **score_options):
    """Choose version, tempering and score models by cross-fitting on the training rows.

    Parameters
    ----------
    scores : array-like of shape (M, K)
        Training scores (out of fold from the first stage).
    labels : array-like of shape (M, K)
        0/1 training labels that respect the hierarchy.
    hierarchy : Hierarchy
        Fixes the column order and the network.
    versions : tuple of str
        Candidates among ``"indpt"``, ``"nbh"``, ``"full"``.
    tempering : {"one", "depth", "frequency"} or None
        Grouping of the tempering exponents (:func:`hmcpgm.tempering.tempering_groups`);
        None fixes ``a = 1`` (the paper's model).
    criterion : {"auprc", "log_loss"}
        What the exponents and the version optimise: the micro AU(PRC) of the
        cross-fitted mLPRs (default: the ranking is what HierRank and every cutoff
        use; the probabilities the Bayesian FDR averages come from the separate
        recalibration map; exponents are searched on the events sorted by value,
        versions compared on their HierRank rankings), or the mean cross-fitted
        log loss of the labels (a proper scoring rule).
    score_model : str, default "auto"
        Per-class choice among :data:`hmcpgm.likelihood.AUTO_CANDIDATES`, or one model.
    cv, seed : int
        Folds of the cross-fitting.
    evaluated : array of bool, shape (K,), optional
        Classes entering the criterion and the recalibration (default all).
    max_rows : int, "auto" or None
        For nbh and full, cross-fitted inference on a seeded subsample of at most
        this many training rows (their engines are slow on large DAGs); the
        chosen version's mLPRs on these rows also fit the recalibration map.
        "auto": all rows on forests; on DAGs :func:`dag_rows` (300 on the Gene
        Ontology, every row of a small DAG); None: all rows.
    screen_rows : int, "auto" or None
        Before fitting its exponent, nbh and full are tried at a = 0.1, 0.3, 1 on
        a seeded subsample of this many rows (each class's own evidence at
        indpt's exponent, as the exponent search fits them) and dropped when
        their best loss there is worse than indpt's by more than
        ``screen_margin`` paired standard errors. "auto": no screening on
        forests; on DAGs :func:`dag_rows` with 100 (100 rows on the Gene Ontology).
    screen_margin : float
        Paired standard errors of the screening (see ``screen_rows``).
    engine : str
        Inference engine (``"auto"``: :func:`resolve_engine`).
    a_min : float
        Smallest exponent searched.
    n_iter : int
        Golden-section steps per search (after a grid over 0.03, 0.1, 0.3, 1).
    margin : float or None
        Version choice: the simplest version (indpt, then nbh, then full) unless
        a more complex one is better by more than ``margin`` paired standard
        errors (AU(PRC): bootstrap over rows; log loss: per-row differences);
        None takes the best.
    recalibrate : bool
        Fit the shared recalibration map on the cross-fitted mLPRs of the choice
        (evaluated classes whose training labels vary).
    pseudo_count : float
        Of ``theta``.
    allow_empty : bool
        Classes without training positives carry no evidence.
    consistency : {"auto", "hierrank", "max"}
        What makes the chosen version's values consistent with the hierarchy
        before HierRank: nothing more (``"hierrank"``: HierRank pools a child
        that beats its parent into one block) or the max constraint (``"max"``:
        each class lifted to the largest posterior among its descendants, a
        lower bound of its own posterior under the hierarchy). ``"auto"`` takes
        ``"max"`` when its cross-fitted AU(PRC) is better by more than
        ``margin`` paired bootstrap standard errors (each step of
        :data:`CONSISTENCY_CANDIDATES` is tried so). The table's
        ``attrs["consistency"]`` reports the step chosen, its ``z`` and the ``z``
        of every candidate (``candidates``).
    pool : "auto", float in [0, 1] or None
        The weight ``w`` of the chosen version's mLPRs in their linear opinion
        pool ``w * mLPR + (1 - w) * q`` with each class's own isotonic posterior
        ``q_k = P(Y_k = 1 | s_k)`` (the isotonic score model's LPR), before the
        consistency step. ``"auto"``: the weight among :data:`POOL_WEIGHTS` whose
        pooled cross-fitted values score best on ``criterion`` (flat AU(PRC), as
        for the exponents; ties go to the larger weight), the pool's ``q`` being
        the isotonic model's out-of-fold LPRs on the same folds; a number fixes
        it; None or 1: no pool. The table's ``attrs["pool"]`` reports the weight
        and the criterion of every weight tried.
    stack : "auto", float in [0, 1] or None
        The weight ``v`` of the neighbour stack's posterior averaged with the
        values after the pool, ``(1 - v) * p + v * r``, before the consistency
        step (:func:`hmcpgm.likelihood.fit_neighbour_stack`; the cross-fitted
        values that the consistency choice and the recalibration map read use the
        stack's out-of-fold posteriors, each fitted on the other folds of the
        cross-fit). ``"auto"``: the weight among :data:`STACK_WEIGHTS` whose
        averaged cross-fitted values rank best (:func:`choose_stack_weight`); a
        number fixes it; None or 0: no stack. The table's ``attrs["stack"]``
        reports the weight and the criterion of every weight tried.
    descendants : bool
        On a forest, with a tempering: after full's exponent ``a``, also fit the
        exponent of the descendants' evidence (the evidence below each queried
        class; ``a`` then stays the exponent of the evidence outside its
        subtree), then refit ``a`` with it, each by the same search; kept when
        the criterion improves (:func:`hmcpgm.inference.split_full_posterior`,
        exact). The table's ``a_descendants`` column (only with
        ``descendants=True``) reports it (None: not fitted or not kept).
        Measured on the benchmark's trees (``bench/descendants_evidence.py``),
        it did not improve the choice: off by default.
    prior : {"auto", "prevalence", "network"}
        The prior of ``Y_k`` in nbh's and full's posteriors (:class:`SecondStage`'s
        ``prior``): the training prevalence with the network's Bayes factor (each
        fold's own prevalence in the cross-fitting), or the network's marginal;
        ``"auto"``: the prevalence on a DAG, the network on a forest
        (:func:`hmcpgm.options.resolve_prior`).
    return_predictions : bool
        Also return a dict with, per version not screened out, its fitted
        configuration and cross-fitted mLPRs (``"versions"``: ``{version:
        {"rows", "mlpr", "a", "engine", "descendants"}}``), the :class:`CrossFit`
        (``"crossfit"``) and the subsample of rows for nbh and full (``"rows"``).
    progress : bool
        Show a progress bar over the steps (tqdm on standard error; off when it
        is not a terminal).
    **score_options
        Options of :func:`hmcpgm.likelihood.fit_score_model`.

    Returns
    -------
    SecondStage
        With ``return_predictions``: ``(SecondStage, details)``.

    Examples
    --------
    >>> from hmcpgm.datasets import make_paper_synthetic
    >>> data = make_paper_synthetic(3000, 500, seed=1)
    >>> stage = fit_second_stage_auto(data.train_scores, data.train_labels, data.hierarchy, cv=3)
    >>> stage.version
    'full'
    >>> stage.predict_proba(data.test_scores).shape
    (500, 25)
    """
    import pandas as pd

    hierarchy = check_hierarchy(hierarchy)
    if criterion not in CRITERIA:
        raise InputError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    bad = [v for v in versions if v not in VERSIONS]
    if bad or not len(versions):
        raise InputError(f"versions must be a non-empty tuple of {VERSIONS}, got {versions!r}")
    if tempering is not None and tempering not in GROUPINGS:
        raise InputError(f"tempering must be one of {GROUPINGS} or None, got {tempering!r}")
    if consistency != "auto" and consistency not in CONSISTENCY:
        raise InputError(f"consistency must be 'auto' or one of {CONSISTENCY}, got {consistency!r}")
    check_pool(pool)
    check_stack(stack)
    prior = resolve_prior(prior, hierarchy)
    if isinstance(a_min, bool) or not isinstance(a_min, (int, float, np.number)) or not 0 < a_min <= 1:
        raise InputError(f"a_min must be a number in (0, 1], got {a_min!r}")
    labels = labels_by_score_rows(scores, labels)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy)
    if evaluated is None:
        evaluated = np.ones(hierarchy.n_classes, bool)
    elif np.shape(evaluated) != (hierarchy.n_classes,) or np.asarray(evaluated).dtype != bool:
        raise InputError(f"evaluated must be a boolean mask of the {hierarchy.n_classes} classes, got "
                         f"{np.asarray(evaluated).dtype} of shape {np.shape(evaluated)}")
    cols = np.flatnonzero(evaluated)
    seconds = {}
    from tqdm.auto import tqdm

    n_steps = 3 + len([v for v in VERSIONS if v in versions]) + ("indpt" not in versions and tempering is not None)
    bar = tqdm(total=n_steps, desc="fit", disable=None if progress else True, leave=False)
    bar.set_postfix_str("score models", refresh=False)
    t0 = time.perf_counter()
    crossfit = cross_fit(s, y, hierarchy, score_model=score_model, cv=cv, seed=seed, pseudo_count=pseudo_count,
                         **score_options)
    seconds["cross_fit"] = time.perf_counter() - t0
    bar.update()
    groups = np.zeros(hierarchy.n_classes, np.intp) if tempering is None else tempering_groups(
        hierarchy, tempering, y)
    all_rows = np.arange(len(s))
    sub = all_rows
    if max_rows == "auto":
        max_rows = None if hierarchy.is_forest else dag_rows(hierarchy.n_classes, 300)
    if screen_rows == "auto":
        screen_rows = None if hierarchy.is_forest else dag_rows(hierarchy.n_classes, 100)
    if max_rows is not None and max_rows < len(s):
        sub = np.sort(np.random.default_rng(seed).choice(len(s), size=int(max_rows), replace=False))
    rows_table, fitted, predictions = [], {}, {}
    screen = None
    if screen_rows is not None and screen_rows < len(s):
        screen = np.sort(np.random.default_rng(seed + 1).choice(len(s), size=int(screen_rows), replace=False))
    # every version keeps a class's own evidence at indpt's exponent (fitted first, even when
    # indpt is not a candidate); nbh and full fit the strength of the other classes' evidence
    candidates = [v for v in VERSIONS if v in versions]
    own = np.ones(hierarchy.n_classes)
    for version in (["indpt"] if "indpt" not in candidates and tempering is not None else []) + candidates:
        t0 = time.perf_counter()
        bar.set_postfix_str(version, refresh=False)
        eng = resolve_engine(hierarchy, version, engine)
        rows = all_rows if version == "indpt" else sub
        kept = {}

        indpt_parts = indpt_logit_parts(crossfit) if version == "indpt" else None
        # what every evaluation of this version reads: the rows' labels, evidence and its log ratio
        y_rows = y[rows]
        own_parts = None
        if version != "indpt":
            own_likelihoods = crossfit.likelihoods[rows]
            own_parts = (own_likelihoods, log_evidence_ratio(own_likelihoods))

        def evaluate(a, version=version, rows=rows, eng=eng, kept=kept, parts=indpt_parts, own=own, y_rows=y_rows,
                     own_parts=own_parts):
            if parts is not None:  # indpt: logit LPR = logit prevalence + a log Bayes factor, no network
                p = expit(parts[0] + np.asarray(a, float) * parts[1])
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # loopy non-convergence on a few objects: judged by the loss
                    p = cross_fitted_mlpr(crossfit, hierarchy, version, a, rows=rows, engine=eng, prior=prior)
                p = own_evidence(p, own_parts[0], a, own, log_ratio=own_parts[1])
            value = criterion_value(p, y_rows, cols, criterion)  # flat AU(PRC): cheap, fine for one exponent
            if not kept or value < kept["value"]:
                kept.update(value=value, a=np.asarray(a, float), mlpr=p)
            return value

        screened = None
        if version != "indpt" and screen is not None and "indpt" in predictions and tempering is not None:
            screened = screen_version(crossfit, hierarchy, version, eng, screen, predictions["indpt"], y, cols,
                                      prior=prior,
                                      own=own)
        desc = None
        if screened is not None and screened[1] > screen_margin:
            a, value = screened[0], np.nan
            n_eval, rows_used, note = len(SCREEN_GRID), len(screen), f"screened out (z {screened[1]:.1f})"
            other_value = np.nan
        else:
            if tempering is None or not y_rows[:, cols].any():  # no positive to rank: no exponent to fit, a = 1
                evaluate(np.ones(hierarchy.n_classes))
                n_eval = 1
            else:
                _, _, n_eval = fit_exponents(evaluate, groups, a_min, n_iter)
            a, value, p = kept["a"], kept["value"], kept["mlpr"]
            if (version == "full" and descendants and hierarchy.is_forest and tempering is not None
                    and y_rows[:, cols].any()):
                a, desc, value, p, n_more = _fit_descendants(crossfit, hierarchy, rows, own_parts[1], own, a, value, p,
                                                             prior, y_rows, cols, criterion, groups, a_min, n_iter)
                n_eval += n_more
            if version == "indpt":
                own = a.copy()
                if version not in candidates:
                    bar.update()
                    continue
            predictions[version] = {"rows": rows, "mlpr": p, "a": a, "engine": eng, "descendants": desc}
            fitted[version] = (a, eng, value, desc)
            rows_used, note = len(rows), ""
            other = "auprc" if criterion == "log_loss" else "log_loss"
            other_value = criterion_value(p, y[rows], cols, other, hierarchy) * (-1 if other == "auprc" else 1)
        other = "auprc" if criterion == "log_loss" else "log_loss"
        rows_table.append({
            "version": version, "grouping": tempering or "fixed",
            "a": np.round(np.unique(a), 4).tolist(),
            **({"a_descendants": None if desc is None else np.round(np.unique(desc), 4).tolist()}
               if descendants else {}),
            f"cv_{criterion}": value if criterion == "log_loss" else -value,
            f"cv_{other}": other_value,
            "rows": rows_used, "evaluations": n_eval, "engine": eng, "note": note,
            "seconds": round(time.perf_counter() - t0, 2),
        })
        seconds[f"cv_{version}"] = time.perf_counter() - t0
        bar.update()
    bar.set_postfix_str("choices", refresh=False)
    t0 = time.perf_counter()
    memo = {}  # HierRank orders of the cross-fitted mLPRs, shared by the version and consistency choices
    best, z = choose_version(predictions, y, cols, criterion, tuple(predictions), margin, hierarchy, memo)
    a, eng, _, desc = fitted[best]
    table = pd.DataFrame(rows_table)
    table["z"] = [z.get(v, np.nan) for v in table["version"]]
    table["chosen"] = table["version"] == best
    rows, p = predictions[best]["rows"], predictions[best]["mlpr"]
    weight, pool_table = 1.0, {}
    if pool is not None and (pool == "auto" or float(pool) < 1.0):
        t1 = time.perf_counter()
        q = crossfitted_isotonic(crossfit, s, y, hierarchy, cv=cv, seed=seed, **score_options)[rows]
        weight, pool_table = choose_pool_weight(p, q, y[rows], cols, criterion, pool)
        if weight < 1.0:
            p = weight * p + (1.0 - weight) * q
        seconds["pool"] = time.perf_counter() - t1
    table.attrs["pool"] = {"weight": weight, "cv": pool_table}
    stack_weight, stack_table = None, {}
    if stack is not None and (isinstance(stack, str) or float(stack) > 0.0):  # "auto" or a weight
        t1 = time.perf_counter()
        r = crossfitted_stack(s, y, hierarchy, crossfit.folds)[rows]
        stack_weight, stack_table = choose_stack_weight(p, r, y[rows], cols, criterion, stack)
        if stack_weight is not None:
            p = (1.0 - stack_weight) * p + stack_weight * r
        seconds["stack"] = time.perf_counter() - t1
    table.attrs["stack"] = {"weight": 0.0 if stack_weight is None else stack_weight, "cv": stack_table}
    chosen_consistency, consistency_z, candidate_z, candidates = consistency, np.nan, {}, {}
    if consistency == "auto":
        # the HierRank order of p is shared with the version choice (the mLPRs alone) or, pooled, kept
        # under the pool's weight, so each candidate after the first reuses it
        key = (best, rows.tobytes()) if weight == 1.0 and stack_weight is None else (
            best, rows.tobytes(), weight, stack_weight)
        for name in CONSISTENCY_CANDIDATES:  # each against HierRank alone, on the same resamples
            candidates[name] = consistent_values(p, hierarchy, name)
            candidate_z[name], _ = paired_auprc_z(p, candidates[name], y[rows], hierarchy, cols, memo=memo,
                                                  keys=(key, None))
        top = max(candidate_z, key=candidate_z.get)  # ties: the first candidate
        consistency_z = candidate_z[top]
        chosen_consistency = top if consistency_z > (0.0 if margin is None else margin) else "hierrank"
    p = candidates[chosen_consistency] if chosen_consistency in candidates else consistent_values(
        p, hierarchy, chosen_consistency)
    table.attrs["consistency"] = {"chosen": chosen_consistency, "z": consistency_z, "candidates": candidate_z}
    seconds["choices"] = time.perf_counter() - t0 - seconds.get("pool", 0.0) - seconds.get("stack", 0.0)  # own entries
    t0 = time.perf_counter()
    recal = None
    if recalibrate:
        varied = recalibration_classes(y.mean(axis=0), cols)
        recal = fit_recalibration(p[:, varied], y[rows][:, varied])
    seconds["recalibration"] = time.perf_counter() - t0
    bar.update()
    bar.set_postfix_str("final fit", refresh=False)
    t0 = time.perf_counter()
    kind = "auto" if score_model == "auto" else score_model
    final = fit_score_model(s, y, hierarchy, kind=kind, allow_empty=allow_empty,
                            cross_validation=crossfit.cross_validation if kind == "auto" else None,
                            cv=cv, seed=seed, **score_options)
    theta = LabelNetwork.from_labels(y, hierarchy, pseudo_count=pseudo_count).theta
    pool_model = None
    if weight < 1.0:
        pool_model = fit_score_model(s, y, hierarchy, kind="isotonic", allow_empty=allow_empty, cv=cv, seed=seed,
                                     **score_options)
    stack_model = None if stack_weight is None else fit_neighbour_stack(s, y, hierarchy)
    seconds["final_fit"] = time.perf_counter() - t0
    bar.update()
    bar.close()
    stage = SecondStage(hierarchy, best, np.asarray(a, float), final, theta, recal, eng, table,
                        {k: round(v, 2) for k, v in seconds.items()},
                        own=None if best == "indpt" else np.asarray(own, float), consistency=chosen_consistency,
                        descendants=desc, pool_weight=None if weight >= 1.0 else weight, pool_model=pool_model,
                        stack_weight=stack_weight, stack_model=stack_model,
                        prior=prior)
    if return_predictions:
        return stage, {"versions": predictions, "crossfit": crossfit, "rows": sub}
    return stage


def _fit_descendants(crossfit, hierarchy, rows, log_ratio, own, a, value, p, prior, y_rows, cols, criterion, groups,
                     a_min, n_iter):
    """Full on a forest: the descendants' exponent given ``a``, then ``a`` given it; kept if the criterion improves.

    Returns ``(a, descendants or None, value, mlpr, evaluations)``.
    """
    from ..inference import split_full_posterior

    folds = crossfit.folds[rows]
    by_fold = [(f, np.flatnonzero(folds == f)) for f in np.unique(folds)]
    # each fold's own prevalence, as cross_fitted_mlpr's stages; once per fold, not per evaluation
    shifts = {f: prior_log_odds_shift(LabelNetwork(hierarchy, crossfit.thetas[f]),
                                      crossfit.cross_validation["prevalence"][f])
              for f, _ in by_fold} if prior == "prevalence" else {}

    def mlpr(out, desc):
        q = np.empty(log_ratio.shape)
        for f, idx in by_fold:
            q[idx] = split_full_posterior(hierarchy, crossfit.thetas[f], log_ratio[idx], out, desc, own)
            if f in shifts:
                q[idx] = with_prior(q[idx], shifts[f])
        return q

    best = {"value": value, "a": a, "desc": None, "mlpr": p}

    def search(make):
        def evaluate(x):
            out, desc = make(np.asarray(x, float))
            q = mlpr(out, desc)
            v = criterion_value(q, y_rows, cols, criterion)
            if v < best["value"]:
                best.update(value=v, a=out, desc=desc, mlpr=q)
            return v
        return fit_exponents(evaluate, groups, a_min, n_iter)[2]

    n_eval = search(lambda d: (a, d))
    if best["desc"] is not None:
        desc = best["desc"]
        n_eval += search(lambda out: (out, desc))
    return best["a"], best["desc"], best["value"], best["mlpr"], n_eval
