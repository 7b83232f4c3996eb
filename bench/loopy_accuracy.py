"""Loopy BP against the exact answer (the sparse junction tree) on the whole Gene Ontology.

Run: python bench/loopy_accuracy.py [N_OBJECTS]  (default 200; about 10 minutes on 2 cores).

Realistic evidence: out-of-fold first-stage scores of cellcycle_GO.train
(``hmcpgm.first_stage.out_of_fold_scores``, default classifier, 5 folds) fit
``MLPR(hierarchy=h, allow_empty=True)``; a first stage fitted on all training rows scores the test
rows, whose likelihoods (``model.likelihoods``) are the evidence. The exact full mLPRs
of the first N test rows come from ``engine="sparse"``; each loopy variant (defaults,
damping, starting messages from the exact solution on a spanning forest) is compared
with them: max, 99.9% quantile and mean |error| over all (object, class) pairs, then
broken down by class kind (depth, number of parents). A synthetic 400-class DAG
(bench/inference.py's generator, uniform likelihoods) is measured the same way.
Prints markdown tables (docs/concepts.md quotes them).
"""

import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

from hmcpgm import MLPR, ConvergenceWarning, Hierarchy, LabelNetwork, loopy_belief_propagation, mlpr_from_likelihoods
from hmcpgm.datasets import load_hmc_split
from hmcpgm.first_stage import fit_first_stage, out_of_fold_scores, predict_scores

# the shared data folder beside the repository; HMCPGM_HMC_DATA overrides it
HMC = HMC_DATA
VARIANTS = {
    "loopy, defaults (no damping)": {},
    "loopy, damping 0.5": {"damping": 0.5},
    "loopy, spanning-forest start": {"start": "forest"},
}


def errors(exact, approx):
    err = np.abs(approx - exact)
    return err.max(), np.quantile(err, 0.999), err.mean()


def breakdown(h, exact, approx):
    err = np.abs(approx - exact)
    depth = np.asarray(h.depth)
    n_par = np.array([len(p) for p in h.parent_indices])
    kinds = [
        ("roots", n_par == 0),
        ("1 parent", n_par == 1),
        ("2 parents", n_par == 2),
        ("3+ parents", n_par >= 3),
        ("depth 1-2", (depth >= 1) & (depth <= 2)),
        ("depth 3-5", (depth >= 3) & (depth <= 5)),
        ("depth 6+", depth >= 6),
    ]
    rows = []
    for name, mask in kinds:
        if mask.any():
            e = err[:, mask]
            rows.append((name, int(mask.sum()), e.max(), np.quantile(e, 0.999), e.mean()))
    return rows


def run_loopy(h, theta, lik, opts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t = time.perf_counter()
        out, report = loopy_belief_propagation(LabelNetwork(h, theta), lik, **opts)
    return out, report.converged, time.perf_counter() - t


def table(title, h, theta, lik, exact):
    print(f"\n### {title}\n")
    print("| engine | time (s) | converged | max error | 99.9% quantile | mean error |")
    print("|---|---|---|---|---|---|")
    first = None
    for name, opts in VARIANTS.items():
        approx, converged, secs = run_loopy(h, theta, lik, opts)
        mx, q, mean = errors(exact, approx)
        print(f"| {name} | {secs:.1f} | {converged.mean():.1%} | {mx:.3g} | {q:.3g} | {mean:.2e} |")
        first = first if first is not None else approx
    print("\nBy class kind (defaults):\n")
    print("| classes | count | max error | 99.9% quantile | mean error |")
    print("|---|---|---|---|---|")
    for name, count, mx, q, mean in breakdown(h, exact, first):
        print(f"| {name} | {count} | {mx:.3g} | {q:.3g} | {mean:.2e} |")
    edges = np.asarray(h.edge_indices)
    viol = (first[:, edges[:, 1]] > first[:, edges[:, 0]] + 1e-12).mean()
    print(f"\nchild mLPR above its parent's (Proposition 1 broken): loopy {viol:.2%} of (object, edge) pairs; "
          f"exact {(exact[:, edges[:, 1]] > exact[:, edges[:, 0]] + 1e-12).mean():.2%}")


def gene_ontology(n):
    split = load_hmc_split("cellcycle_GO", HMC)
    h, train, test = split.hierarchy, split.train, split.test
    cache = Path(tempfile.gettempdir()) / f"hmcpgm_loopy_accuracy_go_{n}.npz"
    if cache.exists():  # evidence and exact answers of an earlier run (delete the file to redo)
        saved = np.load(cache)
        theta, lik, exact = saved["theta"], saved["lik"], saved["exact"]
        print(f"cellcycle_GO: K={h.n_classes}; evidence and exact mLPRs of {n} test rows read from {cache}")
    else:
        t = time.perf_counter()
        oof = out_of_fold_scores(train.features, train.labels, progress=False)
        model = MLPR(hierarchy=h, allow_empty=True).fit(oof, train.labels)
        first = fit_first_stage(train.features, train.labels, progress=False)
        lik = model.likelihoods(predict_scores(first, test.features[:n]))
        theta = model.theta_
        print(f"cellcycle_GO: K={h.n_classes}; first stage + MLPR fitted in {time.perf_counter() - t:.0f} s; "
              f"evidence of the first {n} test rows")
        t = time.perf_counter()
        exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
        print(f"exact (sparse junction tree): {time.perf_counter() - t:.0f} s")
        np.savez(cache, theta=theta, lik=lik, exact=exact)
    table(f"Gene Ontology (cellcycle_GO, {n} test objects, realistic evidence)", h, theta, lik, exact)


def synthetic(n):
    rng = np.random.default_rng(2024)
    k = 400
    parents = [None] * 4
    for j in range(4, k):
        lo = max(0, j - 30)
        if rng.uniform() < 0.15:
            parents.append([int(v) for v in rng.choice(np.arange(lo, j), size=2, replace=False)])
        else:
            parents.append(int(rng.integers(lo, j)))
    h = Hierarchy.from_parents(parents)
    theta = rng.uniform(0.3, 0.95, size=k)
    lik = rng.uniform(0.05, 1.0, size=(n, k, 2))
    exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
    table(f"Synthetic DAG (K={k}, two-parent classes 15%, {n} objects, uniform likelihoods)", h, theta, lik, exact)


if __name__ == "__main__":
    n_objects = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    synthetic(n_objects)
    if HMC.exists():
        gene_ontology(n_objects)
    else:
        print(f"\n{HMC} absent: Gene Ontology measurement skipped")
