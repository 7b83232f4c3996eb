"""Does another recalibration map remove the held-out map's optimism at the top, and at what cost? (issues 19, 20)

``MLPR.fit_recalibration`` fits an isotonic map on held-out rows and shrinks each
block's rate by ``HELD_OUT_PRIOR_COUNT`` (2) pseudo-events at the cross-fitted map's
rate. On the synthetic DAGs of ``bench/fdr_noisy_dag.py`` that map estimates the FDR
of the ranking's first events below the realised one. This script fits the default
on each run (``random_state=0``, as the leaderboard) and cuts the test rows' HierRank
ranking (evaluated classes) with the Bayesian cutoff at alpha 0.05, 0.1 and 0.2
under these maps, fitted on the validation rows (the classes whose training labels
vary, as the default's):

- ``held-out``: the default's (2 pseudo-events at the cross-fitted map's rate);
- ``platt-2``, ``platt-5``, ``platt-10``: 2, 5 or 10 pseudo-events at the rate of a
  Platt fit (``logit P(Y = 1) = a + b logit mLPR``) of all the held-out events, a
  smooth prior with no top block of its own;
- ``mlpr-5``: 5 pseudo-events at the block's own mLPR (the model's claim);
- ``platt-only``: the Platt fit alone, no isotonic blocks;
- ``held-out-5``: the default's map with 5 pseudo-events instead of 2;
- ``held-out-bc``: the default's map with a bootstrap bias correction,
  ``2 g - mean_b g_b`` over 20 resamples of the rows;
- ``split``, ``split-prior``, ``split5-prior``: a split isotonic map (the blocks
  chosen on one half of the rows, their rates read on the other, both ways,
  averaged), alone, with the default's prior, and over 5 random halvings;
- ``cross-fitted``: the map ``fit`` builds from cross-fitted mLPRs, no held-out rows.

Per run and map it prints *called / realised FDP / oracle* (the oracle: the longest
prefix whose realised FDP is at most alpha), then per map and alpha, over the runs
of each kind: the events called, their pooled realised FDP (false calls over calls),
the false discovery rate (the mean of the runs' FDPs, 0 where nothing is called,
with its standard error over the runs), the oracle's events, and the estimated minus
the realised FDP of the ranking's first 50 events (mean and standard error).

Runs: ``--runs`` (leaderboard runs, scores as ``bench/version_transfer.py``: its
``--cache-dir``, else made from the ARFF files) and ``--synthetic N`` (the first N
seeds of ``bench/fdr_noisy_dag.py``'s benchmarks, 900 / 300 / 600 rows).

Usage (from the repository root)::

    python bench/recalibration_prior.py                  # 10 synthetic DAGs and the 10 tree runs, minutes
    python bench/recalibration_prior.py --synthetic 40   # docs/real_data.md's table, about 10 minutes
    python bench/recalibration_prior.py --runs cellcycle_GO.joint,eisen_GO.joint --synthetic 0
"""

import tempfile
import warnings

import numpy as np
from fdr_noisy_dag import synthetic_scores
from version_transfer import TREE_RUNS, load_run, run_arguments, standard_error

ALPHAS = (0.05, 0.1, 0.2)
TOP = 50  # the ranking's first events, whose estimated and realised FDP are compared


def logit(p):
    p = np.clip(np.asarray(p, dtype=float), 1e-9, 1 - 1e-9)
    return np.log(p) - np.log1p(-p)


def platt_rate(p, y):
    """``P(Y = 1 | mLPR)`` by one logistic fit on ``logit mLPR`` of all the events (a callable)."""
    from hmcpgm.calibration import fit_logistic_pairs

    theta, _ = fit_logistic_pairs(logit(p).reshape(-1, 1), np.asarray(y, float).reshape(-1, 1))
    a, b = theta[0]
    return lambda x: 1.0 / (1.0 + np.exp(-(a + b * logit(x))))


def split_map(p, y, *, prior_count=0.0, prior_rate=None, repeats=1, seed=0):
    """An isotonic map whose blocks come from one half of the rows and whose rates from the other.

    PAVA's top rate is the largest mean over the suffixes of the sorted events,
    biased upward; read on rows that did not choose the blocks, each block's
    rate is an unbiased mean (then pooled where it decreases). Both halves take
    each role; the maps are averaged, over ``repeats`` random halvings.
    """
    from hmcpgm.calibration import RecalibrationMap, isotonic_knots, stable_argsort

    p, y = np.asarray(p, float), np.asarray(y, float)
    rng = np.random.default_rng(seed)
    fitted = []
    for _ in range(repeats):
        perm = rng.permutation(p.shape[0])
        halves = perm[: p.shape[0] // 2], perm[p.shape[0] // 2:]
        for a, b in (halves, halves[::-1]):
            pa, ya = p[a].ravel(), y[a].ravel()
            order = stable_argsort(pa)
            _, _, kw = isotonic_knots(pa, ya, order=order)
            ends = np.cumsum(kw).astype(int)[:-1]
            sa = pa[order]
            cuts = (sa[ends - 1] + sa[ends]) / 2
            pb, yb = p[b].ravel(), y[b].ravel()
            block = np.searchsorted(cuts, pb, side="right")
            n = np.bincount(block, minlength=kw.size).astype(float)
            keep = n > 0
            x = np.bincount(block, pb, minlength=kw.size)[keep] / n[keep]
            rate = np.bincount(block, yb, minlength=kw.size)[keep] / n[keep]
            w = n[keep]
            if prior_count:
                rate = (rate * w + prior_count * np.asarray(prior_rate(x))) / (w + prior_count)
                w = w + prior_count
            kx, ky, _ = isotonic_knots(x, rate, weight=w, order="sorted")
            if kx.size == 1:
                kx, ky = np.array([0.0, 1.0]), np.repeat(ky, 2)
            fitted.append(RecalibrationMap(kx, np.maximum.accumulate(ky)))
    return lambda q: np.mean([g(q) for g in fitted], axis=0)


def bias_corrected(p, y, fit, *, boots=20, seed=0):
    """The bootstrap bias correction of a map: ``2 g - mean_b g_b``, ``g_b`` fitted on rows drawn with replacement.

    Read on a grid, clipped to [0, 1] and made non-decreasing again (isotonic on the grid).
    """
    from hmcpgm.calibration import RecalibrationMap, isotonic_knots

    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, 2001)
    g = fit(p, y)
    boot = np.mean([fit(p[i], y[i])(grid) for i in (rng.integers(0, p.shape[0], p.shape[0]) for _ in range(boots))],
                   axis=0)
    values = np.clip(2 * g(grid) - boot, 0.0, 1.0)
    kx, ky, _ = isotonic_knots(grid, values, order="sorted")
    if kx.size == 1:
        kx, ky = np.array([0.0, 1.0]), np.repeat(ky, 2)
    return RecalibrationMap(kx, np.maximum.accumulate(ky))


def maps(model, s_valid, y_valid):
    """The recalibration maps compared, by name; each fitted on the classes whose training labels vary."""
    import copy

    from hmcpgm.calibration import fit_recalibration, recalibration_classes

    cross = model.crossfit_recalibration_
    held_out = copy.deepcopy(model).fit_recalibration(s_valid, y_valid).recalibration_  # the default's own
    varied = recalibration_classes(model.second_stage_.score_model.prevalence)  # as MLPR.fit_recalibration
    p_valid, y_valid = model.predict_proba(s_valid)[:, varied], np.asarray(y_valid)[:, varied]
    platt = platt_rate(p_valid, y_valid)
    out = {"held-out": held_out}
    for count in (2, 5, 10):
        out[f"platt-{count}"] = fit_recalibration(p_valid, y_valid, prior_count=float(count), prior_rate=platt)
    out["mlpr-5"] = fit_recalibration(p_valid, y_valid, prior_count=5.0, prior_rate=lambda x: np.asarray(x))
    out["platt-only"] = platt
    out["held-out-5"] = fit_recalibration(p_valid, y_valid, prior_count=5.0, prior_rate=cross)
    out["held-out-bc"] = bias_corrected(p_valid, y_valid, lambda p, y: fit_recalibration(
        p, y, prior_count=2.0, prior_rate=cross))
    out["split"] = split_map(p_valid, y_valid)
    out["split-prior"] = split_map(p_valid, y_valid, prior_count=2.0, prior_rate=cross)
    out["split5-prior"] = split_map(p_valid, y_valid, prior_count=2.0, prior_rate=cross, repeats=5)
    out["cross-fitted"] = cross
    return out


def cutoffs(name, hierarchy, evaluated, s_train, y_train, s_valid, y_valid, s_test, y_test):
    """Per map, the cutoff's numbers at each alpha; printed as one block."""
    from hmcpgm import MLPR
    from hmcpgm.applications.evaluation import _bayes_power
    from hmcpgm.ranking import hier_rank

    keep = [c for c, e in zip(hierarchy.classes, evaluated) if e]
    cols = hierarchy.indices(keep)
    model = MLPR(hierarchy=hierarchy, allow_empty=True, random_state=0).fit(s_train, y_train)
    p_test = model.predict_proba(s_test)
    ranking = hier_rank(p_test, hierarchy).restrict(keep)
    labels = np.asarray(y_test)[:, cols]
    out = {}
    print(name, flush=True)
    top = min(TOP, ranking.n_events)
    realised = float(np.mean(1 - ranking.ranked(labels)[:top]))
    for label, g in maps(model, s_valid, y_valid).items():
        out[label] = [_bayes_power(ranking, g(p_test)[:, cols], labels, a) for a in ALPHAS]
        out[label].append({"top_estimated": float(np.mean(1 - ranking.ranked(g(p_test)[:, cols])[:top])),
                           "top_realised": realised})
        cells = [f"{c['called']:5d} / {'-' if c['fdp'] is None else format(c['fdp'], '.3f'):>5} / {c['oracle']:5d}"
                 for c in out[label][:len(ALPHAS)]]
        print(f"  {label:<13} " + "  ".join(cells), flush=True)
    return out


def summary(kind, results):
    """Per map and alpha over the runs: events called, pooled FDP, mean FDP (the FDR) and the oracle's events.

    The pooled FDP (false calls over calls, summed over the runs) weighs each run
    by its calls, so the runs whose map is optimistic, which call the most, count
    the most. The false discovery rate is the mean of the runs' FDPs, a run that
    calls nothing counting 0; its standard error is over the runs.
    """
    if not results:
        return
    print(f"\n{kind} ({len(results)} runs): called / pooled FDP / mean FDP (FDR) +- its standard error / oracle")
    for label in results[0]:
        cells = []
        for j in range(len(ALPHAS)):
            called = sum(r[label][j]["called"] for r in results)
            false = sum(r[label][j]["called"] * (r[label][j]["fdp"] or 0.0) for r in results)
            oracle = sum(r[label][j]["oracle"] for r in results)
            fdp = np.array([r[label][j]["fdp"] or 0.0 for r in results])
            cells.append(f"{called:6d} / {false / called if called else 0:.3f} / {fdp.mean():.3f} +- "
                         f"{standard_error(fdp):.3f}"
                         f" / {oracle:6d}")
        gap = np.array([r[label][-1]["top_estimated"] - r[label][-1]["top_realised"] for r in results])
        cells.append(f"top {TOP}: estimated - realised FDP {gap.mean():+.3f} +- {standard_error(gap):.3f}")
        print(f"  {label:<13} " + "  ".join(cells))


def main():
    args = run_arguments(__doc__, TREE_RUNS, extra=lambda parser: parser.add_argument(
        "--synthetic", type=int, default=10, help="seeds of bench/fdr_noisy_dag.py's benchmarks (0: none)"))
    warnings.simplefilter("ignore")
    print("Bayesian cutoff on the test rows, mLPR-auto-HierRank: called / realised FDP / oracle at alpha "
          + ", ".join(map(str, ALPHAS)))
    synthetic, real = [], []
    with tempfile.TemporaryDirectory() as folder:
        for name, h, evaluated, z in synthetic_scores(args.synthetic, folder):
            synthetic.append(cutoffs(name, h, evaluated, z["s_train"], z["y_train"], z["s_valid"], z["y_valid"],
                                     z["s_test"], z["y_test"]))
    for run in args.runs if args.runs != [""] else []:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        real.append(cutoffs(run, h, np.asarray(z["evaluated"], bool), z["s_train"], z["y_train"], z["s_valid"],
                            z["y_valid"], z["s_test"], z["y_test"]))
    summary("synthetic DAGs", synthetic)
    summary("leaderboard runs", real)


if __name__ == "__main__":
    main()
