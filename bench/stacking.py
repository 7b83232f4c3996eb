"""Stacking the neighbours' scores: a discriminative rival to the network's evidence (issue 19).

The network reads each first-stage score through its own class's label only
(``S_k`` independent of everything else given ``Y_k``); nbh and full reach the
neighbours' scores through the labels, with fitted exponents that temper the
evidence counted twice. A discriminative second stage reads the neighbours' scores
directly. The neighbour stack (:func:`hmcpgm.likelihood.fit_neighbour_stack`)
fits, per class ``k`` on the training rows,

    logit P(Y_k = 1) = b0 + b1 L_k + b2 min_{p parent} L_p + b3 max_{c child} L_c
                       + b4 log sum_{c child} exp(L_c)

with ``L`` the Platt-calibrated logits of the first-stage scores (Platt's map of
each class's scores on the score models' robust asinh scale, fitted on the same
training rows; a root has no parent term, a leaf no child terms), by penalised
maximum likelihood
with a Gaussian prior of precision ``lam`` centred on ``b1 = 1`` and the other
slopes 0 (the class's own calibrated score) and a flat prior on ``b0``. ``lam``
is picked per run on the validation rows among ``--lams``. The stacked values are
ranked by HierRank, as the default's.

Printed per run, AU(PRC) points on the test rows (evaluated classes) minus the best
of the leaderboard's 18 corrections picked on the test rows (the leaderboard's
strongest baseline, :func:`hmcpgm.applications.leaderboard.correction_values`):
the default without its stack, ``MLPR(stack=None)`` (the default before
``stack="auto"``; ``default`` below); the stack; the default fitted on the stacked values of the
training rows instead of the scores (the stack as a first stage: ``on stack``);
the default and the stack averaged (``avg``); the default averaged with the stack's
Platt-calibrated scores alone, without the neighbours (``avg flat``: is the gain the
neighbours, or a second opinion of any kind?); the average of the default and the
stack with the weight of the default (0, 0.25, 0.5, 0.75 or 1) that ranks the
validation rows best (``avg picked``); the same average of the default and the
stack with the stack's precision picked without the validation rows, by the
AU(PRC) of its out-of-fold values on the training rows (5 folds, ``avg cv``): what a
second stage could do on its own, with the picks of the stack's precision and of
that weight and the stack's fit in seconds. Then, over the runs, each second stage's
mean and worst gap, and on how many runs it is ahead of the default.

The stack's training values are in-sample (five coefficients per class under the
prior); the first-stage scores it reads are out of fold, as everywhere in the
benchmark.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/stacking.py --runs ImCLEF07A.joint
    python bench/stacking.py --runs all   # the 16 runs of the leaderboard (about 40 minutes)
"""

import time
import warnings

import numpy as np
from scipy.special import expit
from version_transfer import TREE_RUNS, auprc, load_run, run_arguments


def cross_validated_lam(s, y, hierarchy, lams, evaluated, cv=5, seed=0):
    """The precision whose stack ranks its out-of-fold values of the training rows best (HierRank AU(PRC))."""
    from sklearn.model_selection import KFold

    from hmcpgm.likelihood import crossfitted_stack

    folds = np.empty(len(s), dtype=np.int64)
    for f, (_, held) in enumerate(KFold(cv, shuffle=True, random_state=seed).split(s)):
        folds[held] = f
    out = {lam: crossfitted_stack(s, y, hierarchy, folds, lam=lam) for lam in lams}
    return max(lams, key=lambda lam: auprc(out[lam], y, hierarchy, evaluated))


def best_correction(s_train, y_train, s_test, y_test, hierarchy, evaluated):
    """The leaderboard's correction with the best AU(PRC) on the test rows (picked on them): its label and
    AU(PRC)."""
    from hmcpgm.applications.leaderboard import correction_values

    corrections, _ = correction_values(s_train, y_train, [s_test], hierarchy)
    best = {k: auprc(v[0], y_test, hierarchy, evaluated) for k, v in corrections.items()}
    top = max(best, key=best.get)
    return top, best[top]


def print_summary(gaps, n_runs, width):
    """Each second stage's mean and worst gap over the runs, and on how many it is ahead of ``gaps["default"]``."""
    print(f"\nover {n_runs} runs, minus the best correction: mean / worst; runs ahead of the default")
    for k, g in gaps.items():
        ahead = sum(a > d for a, d in zip(g, gaps["default"]))
        print(f"{k:<{width}} {np.mean(g):+.2f} / {np.min(g):+.2f}; {ahead} of {n_runs}")


def main():
    from hmcpgm import MLPR
    from hmcpgm.likelihood import fit_neighbour_stack

    def extra(parser):
        parser.add_argument("--lams", default="3,10,30,100", help="comma-separated prior precisions to pick from")

    args = run_arguments(__doc__, TREE_RUNS, extra=extra)
    lams = [float(x) for x in args.lams.split(",")]
    warnings.simplefilter("ignore")
    keys = ("default", "stack", "on stack", "avg", "avg flat", "avg picked", "avg cv")
    weights = (0.0, 0.25, 0.5, 0.75, 1.0)
    print("AU(PRC) points on the test rows minus the best correction picked on them")
    print(f"{'run':<24}{'best correction':>16}{'its AU(PRC)':>12}" + "".join(f"{k:>11}" for k in keys)
          + f"{'lam':>6}{'lam cv':>7}{'w':>6}{'stack s':>9}", flush=True)
    gaps = {k: [] for k in keys}
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        s_train, y_train = np.asarray(z["s_train"], float), np.asarray(z["y_train"])
        parts = {p: (np.asarray(z[f"s_{p}"], float), np.asarray(z[f"y_{p}"])) for p in ("valid", "test")}
        default = MLPR(hierarchy=h, allow_empty=True, stack=None).fit(s_train, y_train)
        fits = {}
        for lam in lams:
            t0 = time.perf_counter()
            fits[lam] = (fit_neighbour_stack(s_train, y_train, h, lam=lam), time.perf_counter() - t0)
        lam = max(lams, key=lambda v: auprc(fits[v][0].lpr(parts["valid"][0]), parts["valid"][1], h, ev))
        stack, stack_seconds = fits[lam]
        on_stack = MLPR(hierarchy=h, allow_empty=True, stack=None).fit(stack.lpr(s_train), y_train)
        lam_cv = cross_validated_lam(s_train, y_train, h, lams, ev)
        stack_cv = fits[lam_cv][0]
        score = {}
        for part, (s, y) in parts.items():
            d, v = default.predict_proba(s), stack.lpr(s)
            score["default", part] = auprc(d, y, h, ev)
            score["stack", part] = auprc(v, y, h, ev)
            score["on stack", part] = auprc(on_stack.predict_proba(v), y, h, ev)
            flat = expit(stack.logits(s))  # the stack's own calibrated scores, without the neighbours
            score["avg flat", part] = auprc(0.5 * d + 0.5 * flat, y, h, ev)
            for w in weights:
                score[w, part] = auprc(w * d + (1 - w) * v, y, h, ev)
            score["avg", part] = score[0.5, part]
            score["avg cv", part] = auprc(0.5 * d + 0.5 * stack_cv.lpr(s), y, h, ev)
        picked = max(weights, key=lambda w: score[w, "valid"])
        score["avg picked", "test"] = score[picked, "test"]
        top, top_auprc = best_correction(s_train, y_train, *parts["test"], h, ev)
        for k in keys:
            gaps[k].append(score[k, "test"] - top_auprc)
        print(f"{run:<24}{top:>16}{top_auprc:>12.2f}" + "".join(f"{gaps[k][-1]:>+11.2f}" for k in keys)
              + f"{lam:>6g}{lam_cv:>7g}{picked:>6g}{stack_seconds:>9.1f}", flush=True)
    print_summary(gaps, len(args.runs), 10)


if __name__ == "__main__":
    main()
