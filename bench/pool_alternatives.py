"""The default's linear pool against two other ways of combining the same two posteriors (issue 19).

The default ``MLPR()`` ranks ``w * mLPR + (1 - w) * q``, the linear opinion pool of the
chosen version's mLPR and each class's own isotonic posterior ``q``, ``w`` chosen on
the cross-fitted training rows (docs/concepts.md, "Pooling the mLPRs with the isotonic
posterior"). This script fits the default once per run and, from the same cross-fitted
``mLPR`` and ``q`` and the same fitted score models, builds two alternatives:

- ``log pool``: the logarithmic (geometric) pool, ``logit^-1(w logit mLPR + (1 - w) logit q)``,
  ``w`` chosen among :data:`hmcpgm.selection.POOL_WEIGHTS` by the same criterion and
  tie rule (flat AU(PRC) of the cross-fitted values). Both posteriors are clipped to
  [1e-12, 1 - 1e-12] so that a 0 or a 1 keeps a finite logit;
- ``stacked``: a logistic regression of the labels on ``logit mLPR`` and ``logit q``,
  one for every class (shared coefficients), fitted on the cross-fitted values of the
  training rows (scikit-learn, ``C=1e4``).

Each then takes the default's consistency step (``"max"`` or HierRank alone), and the
script prints the AU(PRC) points (HierRank, evaluated classes) of each minus the
default on the validation and the test rows.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/pool_alternatives.py --runs Enron_corr.joint
    python bench/pool_alternatives.py   # the 10 runs on trees (about 8 minutes)
"""

import warnings
from dataclasses import replace

import numpy as np
from scipy.special import expit, logit
from version_transfer import auprc, load_run, run_arguments

CLIP = 1e-12


def clipped_logit(p):
    """``logit(p)`` with ``p`` clipped to ``[CLIP, 1 - CLIP]``."""
    return logit(np.clip(p, CLIP, 1.0 - CLIP))


def main():
    from sklearn.linear_model import LogisticRegression

    from hmcpgm.likelihood import fit_score_model
    from hmcpgm.second_stage import consistent_values
    from hmcpgm.selection import fit_second_stage_auto
    from hmcpgm.selection._pool import choose_pool_weight, crossfitted_isotonic

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    print("AU(PRC) points minus the default (linear pool): valid / test")
    print(f"{'run':<24} {'version':<7} {'w linear':>8} {'w log':>6} {'log pool':>13} {'stacked':>13}")
    gains = []
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        cols = np.flatnonzero(ev)
        stage, fit = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0,
                                           return_predictions=True)
        rows = fit["versions"][stage.version]["rows"]
        p_cv = clipped_logit(fit["versions"][stage.version]["mlpr"])
        q_cv = clipped_logit(crossfitted_isotonic(fit["crossfit"], z["s_train"], z["y_train"], h)[rows])
        y_cv = z["y_train"][rows]
        # flat AU(PRC) reads only the order, which logit^-1 keeps: the weight of the log pool
        w_log, _ = choose_pool_weight(p_cv, q_cv, y_cv, cols, "auprc")
        stacker = LogisticRegression(C=1e4, max_iter=2000).fit(
            np.column_stack([p_cv[:, cols].ravel(), q_cv[:, cols].ravel()]), y_cv[:, cols].ravel())
        iso = stage.pool_model if stage.pool_model is not None else fit_score_model(
            z["s_train"], z["y_train"], h, kind="isotonic", allow_empty=True)
        mlpr_only = replace(stage, pool_weight=None, consistency="hierrank")
        q_only = replace(stage, pool_weight=0.0, pool_model=iso, consistency="hierrank")
        cells = {"log": [], "stacked": []}
        for part in ("valid", "test"):
            s, y = z[f"s_{part}"], z[f"y_{part}"]
            default = auprc(stage.predict_proba(s), y, h, ev)
            p, q = clipped_logit(mlpr_only.predict_proba(s)), clipped_logit(q_only.predict_proba(s))
            log_pool = expit(w_log * p + (1.0 - w_log) * q)
            stacked = stacker.predict_proba(np.column_stack([p.ravel(), q.ravel()]))[:, 1].reshape(p.shape)
            for key, values in (("log", log_pool), ("stacked", stacked)):
                cells[key].append(auprc(consistent_values(values, h, stage.consistency), y, h, ev) - default)
        gains.append(cells["log"] + cells["stacked"])
        w_lin = 1.0 if stage.pool_weight is None else stage.pool_weight
        print(f"{run:<24} {stage.version:<7} {w_lin:>8g} {w_log:>6g} "
              + " ".join(f"{'/'.join(f'{x:+.2f}' for x in cells[k]):>13}" for k in ("log", "stacked")), flush=True)
    g = np.array(gains)
    means = [f"{g[:, i].mean():+.2f}/{g[:, i + 1].mean():+.2f}" for i in (0, 2)]
    print(f"{'mean':<24} {'':<7} {'':>8} {'':>6} " + " ".join(f"{m:>13}" for m in means))


if __name__ == "__main__":
    main()
