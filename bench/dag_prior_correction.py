"""Can nbh add the neighbours' evidence on the Gene Ontology once its prior is the prevalence? (issue 19)

On a DAG the label network's prior marginal ``P(Y_k = 1)`` (the product of theta over
``k`` and its ancestors) falls far below the prevalence for deep classes
(``bench/dag_prior_marginals.py``), so nbh starts every deep GO class from too small a
prior; with it the default's screening kept indpt on every GO run (docs/concepts.md,
"The network's prior on a DAG", where this script's table is). ``MLPR(prior="prevalence")``
keeps nbh's Bayes factor (what the class's own and its neighbours' scores say about
``Y_k`` under the network) and replaces the network's prior odds of ``Y_k`` by the
prevalence's (indpt's prior, that of the score models):

    logit p'_k = logit p_k - logit P_network(Y_k = 1) + logit prevalence_k

(:class:`hmcpgm.second_stage.SecondStage`'s ``prior``). As the neighbours' exponent
``a`` goes to 0 this tends to indpt's posterior, which nbh alone does not.

Per run it fits the default restricted to indpt (``versions=("indpt",)``: what the
default chose on every GO run with the network's prior) and, for each ``a`` of a grid
(each class's own evidence at indpt's exponent, as the default's nbh), prints the
AU(PRC) points (HierRank, evaluated classes) of the corrected nbh minus indpt without
its pool, on the cross-fitted training rows (every row; each fold's own theta and
prevalence), the validation rows and the test rows. Then, at the ``a`` best on the
cross-fitted rows: nbh uncorrected minus indpt, and the corrected nbh pooled with the
isotonic posterior at indpt's weight minus indpt pooled (the default before the prior).

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/dag_prior_correction.py --runs cellcycle_GO.classwise   # about 4 minutes
    python bench/dag_prior_correction.py   # the six GO runs
"""

import warnings
from dataclasses import replace

import numpy as np
from version_transfer import auprc, load_run, new_rows_auprc, run_arguments

GO_RUNS = tuple(f"{d}_GO.{f}" for f in ("joint", "classwise") for d in ("cellcycle", "eisen", "gasch1"))
GRID = (0.01, 0.03, 0.1, 0.3)


def main():
    from hmcpgm.selection import cross_fitted_mlpr, fit_second_stage_auto
    from hmcpgm.selection._crossfit import resolve_engine

    args = run_arguments(__doc__, runs=GO_RUNS)
    warnings.simplefilter("ignore")
    print("AU(PRC) points of nbh with the prevalence's prior minus indpt (no pool): cv / valid / test;")
    print("at the a best on cv: nbh uncorrected minus indpt, and the corrected nbh pooled minus indpt pooled")
    print(f"{'run':<22} " + " ".join(f"{'a=' + format(a, 'g'):>19}" for a in GRID)
          + f" {'best a':>6} {'uncorrected':>13} {'pooled':>13}")
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        stage, fit = fit_second_stage_auto(z["s_train"], z["y_train"], h, versions=("indpt",), allow_empty=True,
                                           seed=0, return_predictions=True)
        crossfit, own = fit["crossfit"], np.asarray(fit["versions"]["indpt"]["a"], float)
        engine = resolve_engine(h, "nbh", "auto")
        indpt = replace(stage, version="indpt", a=own, own=None, descendants=None, pool_weight=None,
                        consistency="hierrank")
        cv = auprc(fit["versions"]["indpt"]["mlpr"], z["y_train"], h, ev)
        base = np.array([cv, *new_rows_auprc(indpt, z, h, ev)])
        gains = {}
        for a in GRID:
            p_cv = cross_fitted_mlpr(crossfit, h, "nbh", a, engine=engine, own=own, prior="prevalence")
            nbh = replace(indpt, version="nbh", a=np.full(h.n_classes, a), own=own, engine=engine, prior="prevalence")
            gains[a] = np.array([auprc(p_cv, z["y_train"], h, ev), *new_rows_auprc(nbh, z, h, ev)]) - base
        best = max(GRID, key=lambda a: gains[a][0])
        nbh = replace(indpt, version="nbh", a=np.full(h.n_classes, best), own=own, engine=engine, prior="prevalence")
        uncorrected = new_rows_auprc(replace(nbh, prior="network"), z, h, ev) - base[1:]
        pooled = replace(nbh, pool_weight=stage.pool_weight, consistency=stage.consistency)
        pooled = new_rows_auprc(pooled, z, h, ev) - new_rows_auprc(stage, z, h, ev)
        print(f"{run:<22} " + " ".join(f"{'/'.join(f'{x:+.2f}' for x in gains[a]):>19}" for a in GRID)
              + f" {best:>6g} {'/'.join(f'{x:+.2f}' for x in uncorrected):>13}"
              + f" {'/'.join(f'{x:+.2f}' for x in pooled):>13}", flush=True)


if __name__ == "__main__":
    main()
