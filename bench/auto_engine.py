"""engine="auto" on every benchmark hierarchy: which engine runs, and the warning when approximate.

Run: python bench/auto_engine.py [BUDGET_BYTES]  (about 5 minutes; the GO hierarchies
compile the sparse junction tree once each).

For each data set in the shared folder (HMCPGM_HMC_DATA overrides its place): the
inference plan's choice, then ``MLPR(hierarchy=h, allow_empty=True)`` fitted on the training labels
with scores N(1.5 y, 1) and ``predict_proba`` on 3 rows (engine="auto"), and
``mlpr_from_likelihoods(engine="auto")`` on the same likelihoods. Checks that an
``ApproximationWarning`` is raised exactly when the plan says the answer is approximate;
a second pass with a tiny budget (default 1 MB) forces the fallback to loopy BP on DAGs.
"""

import sys
import time
import warnings

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

from hmcpgm import MLPR, ApproximationWarning, LabelNetwork, inference_plan, mlpr_from_likelihoods
from hmcpgm.datasets import load_hmc_split

HMC = HMC_DATA
NAMES = ["cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "cellcycle_GO", "eisen_GO", "gasch1_GO", "ImCLEF07A",
         "Enron_corr"]


def check(name, h, model, lik, budget):
    plan = inference_plan(h, budget_bytes=budget)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        out = mlpr_from_likelihoods(LabelNetwork(h, model.theta_), lik, budget_bytes=budget)
        secs = time.perf_counter() - t
    warned = any(issubclass(w.category, ApproximationWarning) for w in caught)
    ok = warned == (not plan.exact) and np.isfinite(out).all()
    print(f"  budget {budget:>13,} B: auto runs {plan.engine!r} ({'exact' if plan.exact else 'approximate'}), "
          f"ApproximationWarning {'raised' if warned else 'not raised'}, {secs:.1f} s for {len(lik)} objects"
          f" -> {'OK' if ok else 'MISMATCH'}")
    return ok


def main(small_budget):
    rng = np.random.default_rng(0)
    all_ok = True
    for name in NAMES:
        try:
            split = load_hmc_split(name, HMC)
        except (FileNotFoundError, OSError) as err:
            print(f"{name}: skipped ({err})")
            continue
        h, y = split.hierarchy, split.train.labels
        scores = rng.normal(1.5 * y)
        t = time.perf_counter()
        model = MLPR(hierarchy=h, allow_empty=True).fit(scores, y)
        proba = model.predict_proba(scores[:3])
        print(f"{name}: {h} ; MLPR fit + predict_proba(3 rows, engine='auto') {time.perf_counter() - t:.1f} s, "
              f"finite: {bool(np.isfinite(proba).all())}")
        lik = model.likelihoods(scores[:3])
        all_ok &= check(name, h, model, lik, 4 * 2**30)
        if not h.is_forest:
            all_ok &= check(name, h, model, lik, small_budget)
    print("every check passed" if all_ok else "SOME CHECK FAILED")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10**6)
