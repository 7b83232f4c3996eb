"""The default's Bayesian FDR cutoff where the network is the truth: labels drawn from a known Bayesian network.

``bench/fdr_noisy_dag.py`` asks how the cutoff does on data it was not tuned on,
with a first stage and noisy features. This script takes away everything but the
second stage: labels are drawn from a small hierarchy's Bayesian network (a root is
positive with probability 0.5, a class with probability 0.6 when all its parents are
positive, else never) and each class's score is ``N(mu_k * y_k, 1)`` with ``mu_k``
from 0.3 to 2.0, so the paper's network with Gaussian score models is the true
model, and a calibrated model's mLPRs are the true posteriors. Two hierarchies,
their columns not in topological order: a 9-class DAG (three classes with two
parents) and a 10-class forest.

Per seed it fits the second stage on ``--rows`` training rows, as ``MLPR()`` does
(:func:`hmcpgm.selection.fit_second_stage_auto` with its defaults), draws 20,000
fresh rows, ranks them by HierRank of the mLPRs and cuts the ranking with
:func:`hmcpgm.bayes_cutoff` on the recalibrated mLPRs (the README's route, what
``rank --fdr`` promises), and prints the realised false discovery proportion at
alpha 0.05, 0.1 and 0.2. Beside it:

- ``raw``: the same cut on the mLPRs before recalibration;
- ``300 rows`` (DAG only): the default before ``dag_rows``, which fitted nbh's and
  full's exponents, and so the recalibration map, on a fixed subsample of 300
  training rows of any DAG (``max_rows=300, screen_rows=100``).

At the end, each column's mean over the seeds with its standard error: the false
discovery rate the cutoff promises to keep at alpha.

Usage (from the repository root)::

    python bench/fdr_well_specified.py                       # 8 seeds, 2,500 rows, about 2 minutes
    python bench/fdr_well_specified.py --seeds 0-19 --rows 1000
"""

import argparse
import warnings

import numpy as np
from version_transfer import standard_error

ALPHAS = (0.05, 0.1, 0.2)
FRESH = 20_000

#: (edges, column order): a DAG and a forest, columns not in topological order
HIERARCHIES = {
    "dag": ([("r1", "a"), ("r1", "b"), ("a", "ab"), ("b", "ab"), ("ab", "x"), ("r2", "c"), ("c", "x2"), ("b", "x2"),
             ("a", "a1")], ["x", "ab", "a1", "r1", "x2", "b", "c", "r2", "a"]),
    "forest": ([("r1", "a"), ("r1", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("r2", "c"), ("c", "c1"),
                ("c", "c2")], ["c2", "a1", "b", "r1", "c", "a", "b1", "r2", "a2", "c1"]),
}


def simulate(hierarchy, n, rng):
    """Labels drawn from the hierarchy's network and Gaussian scores, ``(scores, labels)`` of n rows."""
    k = hierarchy.n_classes
    y = np.zeros((n, k), dtype=int)
    for c in hierarchy.topological_order:
        parents = hierarchy.parent_indices[c]
        gate = np.all(y[:, parents] == 1, axis=1) if len(parents) else np.ones(n, bool)
        y[:, c] = gate & (rng.random(n) < (0.6 if len(parents) else 0.5))
    return rng.normal(size=(n, k)) + y * np.linspace(0.3, 2.0, k), y


def realised_fdp(order, values, labels):
    """Realised FDP of the Bayesian cutoff of ``order`` on ``values`` at each alpha (0 when nothing is called)."""
    from hmcpgm import bayes_cutoff

    out = []
    for alpha in ALPHAS:
        called = np.asarray(bayes_cutoff(order, values, alpha=alpha).apply(order)) == 1
        out.append(float((called & (labels == 0)).sum() / max(called.sum(), 1)))
    return out


def run(kind, seed, rows):
    """The realised FDPs of one seed: {column: [FDP at each alpha]}."""
    from hmcpgm import Hierarchy, hier_rank
    from hmcpgm.selection import fit_second_stage_auto

    edges, classes = HIERARCHIES[kind]
    h = Hierarchy.from_edges(edges, classes=classes)
    rng = np.random.default_rng(seed)
    s, y = simulate(h, rows, rng)
    s_new, y_new = simulate(h, FRESH, rng)
    fits = {"default": {}}
    if kind == "dag":
        fits["300 rows"] = {"max_rows": 300, "screen_rows": 100}
    out = {}
    for name, options in fits.items():
        stage = fit_second_stage_auto(s, y, h, **options)
        p = stage.predict_proba(s_new)
        order = hier_rank(p, h)
        out[name] = realised_fdp(order, stage.calibrate(p), y_new)
        if name == "default":
            out["raw"] = realised_fdp(order, p, y_new)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0-7", help="a range a-b or a comma-separated list")
    parser.add_argument("--rows", type=int, default=2500, help="training rows")
    args = parser.parse_args()
    if "-" in args.seeds:
        a, b = args.seeds.split("-")
        seeds = list(range(int(a), int(b) + 1))
    else:
        seeds = [int(x) for x in args.seeds.split(",")]
    warnings.simplefilter("ignore")
    head = " | ".join(f"alpha {a}" for a in ALPHAS)
    for kind in HIERARCHIES:
        print(f"\n{kind}, {args.rows} training rows, {FRESH} fresh rows: realised FDP ({head})", flush=True)
        results = []
        for seed in seeds:
            res = run(kind, seed, args.rows)
            results.append(res)
            print(f"  seed {seed:3d}  " + "   ".join(f"{name} " + " ".join(f"{v:.3f}" for v in fdp)
                                                  for name, fdp in res.items()), flush=True)
        print(f"  mean over {len(seeds)} seeds (standard error):")
        for name in results[0]:
            values = np.array([r[name] for r in results])
            mean, se = values.mean(axis=0), standard_error(values)
            print(f"    {name:<9} " + "   ".join(f"{m:.3f} ({e:.3f})" for m, e in zip(mean, se)))


if __name__ == "__main__":
    main()
