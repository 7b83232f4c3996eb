"""Does another prior for the held-out recalibration map stop its over-calling? (issue 20's cutoff, issue 19's runs)

``MLPR.fit_recalibration`` fits an isotonic map on held-out rows and shrinks each
block's rate by ``HELD_OUT_PRIOR_COUNT`` (2) pseudo-events at the cross-fitted map's
rate. On the synthetic DAGs of ``bench/fdr_noisy_dag.py`` that map over-calls. This
script fits the default on each run (``random_state=0``, as the leaderboard) and cuts
the test rows' HierRank ranking (evaluated classes) with the Bayesian cutoff at alpha
0.05, 0.1 and 0.2 under these maps, fitted on the validation rows (the classes whose
training labels vary, as the default's):

- ``held-out``: the default's (2 pseudo-events at the cross-fitted map's rate);
- ``platt-2``, ``platt-5``, ``platt-10``: 2, 5 or 10 pseudo-events at the rate of a
  Platt fit (``logit P(Y = 1) = a + b logit mLPR``) of all the held-out events, a
  smooth prior with no top block of its own;
- ``mlpr-5``: 5 pseudo-events at the block's own mLPR (the model's claim);
- ``platt-only``: the Platt fit alone, no isotonic blocks;
- ``cross-fitted``: the map ``fit`` builds from cross-fitted mLPRs, no held-out rows.

Per run and map it prints *called / realised FDP / oracle* (the oracle: the longest
prefix whose realised FDP is at most alpha), then per map and alpha, over the runs
of each kind: the events called, their pooled realised FDP (false calls over calls)
and the oracle's events.

Runs: ``--runs`` (leaderboard runs, scores as ``bench/version_transfer.py``: its
``--cache-dir``, else made from the ARFF files) and ``--synthetic N`` (the first N
seeds of ``bench/fdr_noisy_dag.py``'s benchmarks, 900 / 300 / 600 rows).

Usage (from the repository root)::

    python bench/recalibration_prior.py                  # 10 synthetic DAGs and the 10 tree runs, minutes
    python bench/recalibration_prior.py --runs cellcycle_GO.joint,eisen_GO.joint --synthetic 0
"""

import tempfile
import warnings

import numpy as np
from version_transfer import TREE_RUNS, load_run, run_arguments

ALPHAS = (0.05, 0.1, 0.2)


def logit(p):
    p = np.clip(np.asarray(p, dtype=float), 1e-9, 1 - 1e-9)
    return np.log(p) - np.log1p(-p)


def platt_rate(p, y):
    """``P(Y = 1 | mLPR)`` by one logistic fit on ``logit mLPR`` of all the events (a callable)."""
    from hmcpgm.calibration import fit_logistic_pairs

    theta, _ = fit_logistic_pairs(logit(p).reshape(-1, 1), np.asarray(y, float).reshape(-1, 1))
    a, b = theta[0]
    return lambda x: 1.0 / (1.0 + np.exp(-(a + b * logit(x))))


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
    for label, g in maps(model, s_valid, y_valid).items():
        out[label] = [_bayes_power(ranking, g(p_test)[:, cols], labels, a) for a in ALPHAS]
        cells = [f"{c['called']:5d} / {'-' if c['fdp'] is None else format(c['fdp'], '.3f'):>5} / {c['oracle']:5d}"
                 for c in out[label]]
        print(f"  {label:<13} " + "  ".join(cells), flush=True)
    return out


def summary(kind, results):
    """Per map and alpha over the runs: events called, pooled realised FDP, oracle's events."""
    if not results:
        return
    print(f"\n{kind} ({len(results)} runs): called / pooled realised FDP / oracle, summed over the runs")
    for label in results[0]:
        cells = []
        for j in range(len(ALPHAS)):
            called = sum(r[label][j]["called"] for r in results)
            false = sum(r[label][j]["called"] * (r[label][j]["fdp"] or 0.0) for r in results)
            oracle = sum(r[label][j]["oracle"] for r in results)
            cells.append(f"{called:6d} / {false / called if called else 0:.3f} / {oracle:6d}")
        print(f"  {label:<13} " + "  ".join(cells))


def main():
    args = run_arguments(__doc__, TREE_RUNS, extra=lambda parser: parser.add_argument(
        "--synthetic", type=int, default=10, help="seeds of bench/fdr_noisy_dag.py's benchmarks (0: none)"))
    warnings.simplefilter("ignore")
    print("Bayesian cutoff on the test rows, mLPR-auto-HierRank: called / realised FDP / oracle at alpha "
          + ", ".join(map(str, ALPHAS)))
    synthetic, real = [], []
    if args.synthetic:
        from fdr_noisy_dag import write_benchmark

        from hmcpgm.applications import first_stage_scores
        from hmcpgm.datasets import load_hmc_arff

        with tempfile.TemporaryDirectory() as folder:
            for seed in range(args.synthetic):
                train, valid, test = (load_hmc_arff(p) for p in write_benchmark(folder, seed))
                s_train, (s_valid, s_test) = first_stage_scores(train, (valid, test), "joint", progress=False)
                synthetic.append(cutoffs(f"noisydag{seed}", train.hierarchy, np.asarray(train.evaluated, bool),
                                         s_train, train.labels, s_valid, valid.labels, s_test, test.labels))
    for run in args.runs if args.runs != [""] else []:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        real.append(cutoffs(run, h, np.asarray(z["evaluated"], bool), z["s_train"], z["y_train"], z["s_valid"],
                            z["y_valid"], z["s_test"], z["y_test"]))
    summary("synthetic DAGs", synthetic)
    summary("leaderboard runs", real)


if __name__ == "__main__":
    main()
