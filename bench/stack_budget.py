"""The neighbour stack with the paper's indpt and with the default: quality, and fit in fixed-model fits (issue 19)

``bench/stacking.py`` finds that averaging the default's values with a stacked
logistic regression of the neighbours' calibrated scores ranks better than the
default alone. This script asks whether the stack also makes the default's
cross-fitted choices unnecessary. Per run it fits on the training rows, each timed
in the same process:

- the paper's fixed model, ``MLPR(version="full", score_model="lpr",
  tempering=None, recalibrate=False)`` (the unit of issue 19's fit-time floor);
- the default without its stack, ``MLPR(stack=None)`` (the default before
  ``stack="auto"``);
- the paper's indpt, ``MLPR(version="indpt", score_model="lpr", tempering=None,
  recalibrate=False)``: each class's kernel LPR, no network, nothing cross-fitted;
- the neighbour stack (:func:`hmcpgm.likelihood.fit_neighbour_stack`) at one
  fixed prior precision (``--lam``, default 10, not picked on any rows);
- the default averaged with the stack, ``MLPR(stack=0.5)`` (the stack at the
  library's precision, 10, its out-of-fold posteriors in the cross-fitting).

and prints AU(PRC) points on the test rows minus the best of the leaderboard's 18
corrections picked on them, for the default, the stack, the paper's indpt,
``indpt + stack`` (``0.5 * indpt + 0.5 * stack``, ranked by HierRank) and
``default + stack`` (``MLPR(stack=0.5)``); then the fits of the default, of indpt
+ stack (the sum of their two fits) and of ``MLPR(stack=0.5)``, in fixed-model
fits. Fit times depend on the load of the machine; the ratios come from one
process.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/stack_budget.py --runs cellcycle_FUN.joint
    python bench/stack_budget.py --runs all   # the 16 runs of the leaderboard (about 30 minutes)
"""

import time
import warnings

import numpy as np
from stacking import best_correction, print_summary
from version_transfer import TREE_RUNS, auprc, load_run, run_arguments

PAPER = {"score_model": "lpr", "tempering": None, "recalibrate": False}


def timed(estimator, *fit_args):
    """``estimator.fit(*fit_args)`` and its wall time in seconds."""
    t0 = time.perf_counter()
    out = estimator.fit(*fit_args)
    return out, time.perf_counter() - t0


def main():
    from hmcpgm import MLPR
    from hmcpgm.likelihood import fit_neighbour_stack

    def extra(parser):
        parser.add_argument("--lam", type=float, default=10.0, help="the stack's prior precision")

    args = run_arguments(__doc__, TREE_RUNS, extra=extra)
    warnings.simplefilter("ignore")
    keys = ("default", "stack", "indpt", "indpt + stack", "default + stack")
    print("AU(PRC) points on the test rows minus the best correction picked on them; fits in fixed-model fits")
    print(f"{'run':<24}{'best correction':>16}{'its AU(PRC)':>12}" + "".join(f"{k:>16}" for k in keys)
          + f"{'fixed s':>9}{'default':>9}{'indpt + stack':>15}{'default + stack':>17}", flush=True)
    gaps = {k: [] for k in keys}
    ratios = {"default": [], "indpt + stack": [], "default + stack": []}
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        s_train, y_train = np.asarray(z["s_train"], float), np.asarray(z["y_train"])
        data = (s_train, y_train)
        MLPR(hierarchy=h, allow_empty=True, version="indpt", **PAPER).fit(*data)  # numba's first loads
        _, fixed_s = timed(MLPR(hierarchy=h, allow_empty=True, version="full", **PAPER), *data)
        default, default_s = timed(MLPR(hierarchy=h, allow_empty=True, stack=None), *data)
        indpt, indpt_s = timed(MLPR(hierarchy=h, allow_empty=True, version="indpt", **PAPER), *data)
        t0 = time.perf_counter()
        stack = fit_neighbour_stack(s_train, y_train, h, lam=args.lam)
        stack_s = time.perf_counter() - t0
        stacked, stacked_s = timed(MLPR(hierarchy=h, allow_empty=True, stack=0.5), *data)
        s, y = np.asarray(z["s_test"], float), np.asarray(z["y_test"])
        p_indpt, p_stack = indpt.predict_proba(s), stack.lpr(s)
        score = {"default": auprc(default.predict_proba(s), y, h, ev), "stack": auprc(p_stack, y, h, ev),
                 "indpt": auprc(p_indpt, y, h, ev), "indpt + stack": auprc(0.5 * p_indpt + 0.5 * p_stack, y, h, ev),
                 "default + stack": auprc(stacked.predict_proba(s), y, h, ev)}
        top, top_auprc = best_correction(s_train, y_train, s, y, h, ev)
        for k in keys:
            gaps[k].append(score[k] - top_auprc)
        ratios["default"].append(default_s / fixed_s)
        ratios["indpt + stack"].append((indpt_s + stack_s) / fixed_s)
        ratios["default + stack"].append(stacked_s / fixed_s)
        print(f"{run:<24}{top:>16}{top_auprc:>12.2f}" + "".join(f"{gaps[k][-1]:>+16.2f}" for k in keys)
              + f"{fixed_s:>9.2f}{ratios['default'][-1]:>9.1f}{ratios['indpt + stack'][-1]:>15.1f}"
              + f"{ratios['default + stack'][-1]:>17.1f}", flush=True)
    print_summary(gaps, len(args.runs), 16)
    for k, r in ratios.items():
        print(f"fit of {k} in fixed fits: min {np.min(r):.1f}, median {np.median(r):.1f}, max {np.max(r):.1f}")


if __name__ == "__main__":
    main()
