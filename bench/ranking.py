"""Benchmark the rankings: HierRank against numpy.argsort, NaiveSort, the DAG method.

Run: python bench/ranking.py [--dag-gap]

Prints times measured in this run (best of 3 after a warm-up call that also
compiles the numba kernels). With --dag-gap it also measures the worst ratio
CATCH(default DAG method) / CATCH(exact) on random small DAGs (the number the
bound in tests/test_ranking.py is based on).
"""

import sys
import time
from pathlib import Path

import numpy as np

from hmcpgm import Hierarchy, catch, count_violations, hier_rank, naive_sort

PAPER_PARENTS = [0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14]
GO_ARFF = Path("/work/shared/data/hmc/cellcycle_GO.train.arff")


def best_of(func, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        func()
        times.append(time.perf_counter() - t)
    return min(times)


def go_hierarchy(path=GO_ARFF):
    """The GO DAG from the ARFF class attribute line: comma-separated parent/child edges."""
    with open(path) as fh:
        for line in fh:
            words = line.split()
            if len(words) >= 4 and words[0].lower() == "@attribute" and words[2] == "hierarchical":
                spec = words[3]
                edges = [tuple(e.split("/")) for e in spec.split(",")]
                return Hierarchy.from_edges(edges)
    raise ValueError(f"no hierarchical class attribute in {path}")


def forest_bench():
    h = Hierarchy.from_parents([p - 1 if p else None for p in PAPER_PARENTS])
    rng = np.random.default_rng(0)
    v = rng.random((40_000, h.n_classes))
    hier_rank(v[:10], h)  # compile / load the kernels
    t_hier = best_of(lambda: hier_rank(v, h))
    t_sort = best_of(lambda: np.argsort(v.ravel()))
    t_naive = best_of(lambda: naive_sort(v, h))
    order = hier_rank(v, h)
    print(f"forest: {v.shape[0]} objects x {h.n_classes} classes = {v.size:,} events")
    print(f"  hier_rank        {t_hier * 1e3:8.1f} ms")
    print(f"  numpy.argsort    {t_sort * 1e3:8.1f} ms   ratio hier_rank / argsort = {t_hier / t_sort:.2f}")
    print(f"  naive_sort       {t_naive * 1e3:8.1f} ms   ratio naive_sort / argsort = {t_naive / t_sort:.2f}")
    print(f"  violations: hier_rank {count_violations(order, h)}, "
          f"naive_sort {count_violations(naive_sort(v, h), h)}")
    print(f"  CATCH: hier_rank {catch(order, v):.6g}, naive_sort {catch(naive_sort(v, h), v):.6g}")


def dag_bench(n_objects=300):
    t = time.perf_counter()
    h = go_hierarchy()
    t_load = time.perf_counter() - t
    n_multi = sum(len(p) > 1 for p in h.parent_indices)
    rng = np.random.default_rng(0)
    # values that mostly shrink with depth, with noise, so the hierarchy binds
    v = rng.random((n_objects, h.n_classes)) * 0.5 ** np.asarray(h.depth) * rng.random((n_objects, 1))
    v = np.clip(v + 0.05 * rng.random(v.shape), 0, 1)
    hier_rank(v[:2], h)  # warm up (also builds the hierarchy's cached structure)
    t_dag = best_of(lambda: hier_rank(v, h), repeat=2)
    t_sort = best_of(lambda: np.argsort(v.ravel()))
    order = hier_rank(v, h)
    naive = naive_sort(v, h)
    print(f"DAG: cellcycle_GO hierarchy, {h.n_classes} classes, {n_multi} with several parents, "
          f"depth {int(np.max(h.depth))} (parsed in {t_load:.2f} s); {n_objects} objects = {v.size:,} events")
    print(f"  hier_rank (auto = relaxed)  {t_dag * 1e3:8.1f} ms   numpy.argsort {t_sort * 1e3:.1f} ms")
    print(f"  violations: hier_rank {count_violations(order, h)}, naive_sort {count_violations(naive, h)}")
    print(f"  CATCH: hier_rank {catch(order, v):.6g}, naive_sort (inconsistent) {catch(naive, v):.6g}")


def dag_gap(n_trials=4000, seed=0):
    rng = np.random.default_rng(seed)
    worst, ratios = 1.0, []
    for _ in range(n_trials):
        k = int(rng.integers(2, 8))
        parents = [
            sorted(rng.choice(i, size=rng.integers(0, min(i, 3) + 1), replace=False).tolist()) if i else []
            for i in range(k)
        ]
        h = Hierarchy.from_parents([p if p else None for p in parents])
        m = int(rng.integers(1, 4))
        if rng.random() < 0.5:
            v = rng.random((m, k))
        else:
            v = rng.choice([0.0, 0.1, 0.25, 0.5, 0.9, 1.0], size=(m, k))
        a = catch(hier_rank(v, h), v)
        b = catch(hier_rank(v, h, method="exact"), v)
        if b > 0:
            ratios.append(a / b)
    ratios = np.array(ratios)
    print(f"DAG gap: {len(ratios)} random DAGs (2-7 classes, 1-3 objects, values in [0, 1])")
    print(f"  CATCH(relaxed) / CATCH(exact): worst {ratios.min():.4f}, "
          f"mean {ratios.mean():.4f}, optimal in {np.mean(ratios > 1 - 1e-12):.1%}")


if __name__ == "__main__":
    forest_bench()
    dag_bench()
    if "--dag-gap" in sys.argv:
        dag_gap()
