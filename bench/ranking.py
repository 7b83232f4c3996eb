"""Benchmark the rankings: HierRank against numpy.argsort, NaiveSort, the DAG method.

Run: python bench/ranking.py [--dag-gap] [--sidney] [--data-dir DIR]

Prints times measured in this run (best of 3 after a warm-up call that also
compiles the numba kernels). With --dag-gap it also measures, on random small
DAGs, CATCH(relaxed) / CATCH(exact) and CATCH(sidney) / CATCH(exact) (worst and
mean; the bound in tests/test_ranking.py is based on these) and how tight the
certificate hier_rank_bound is. With --sidney it compares relaxed and sidney on
GO sub-DAGs and on the full cellcycle_GO hierarchy (time, CATCH, certified ratio).
"""

import argparse
import time
from pathlib import Path

import numpy as np

from hmcpgm import Hierarchy, catch, count_violations, hier_rank, hier_rank_bound, naive_sort

PAPER_PARENTS = [0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14]
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "hmc"
GO_NAME = "cellcycle_GO.train.arff"


def best_of(func, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        func()
        times.append(time.perf_counter() - t)
    return min(times)


def go_hierarchy(path):
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


def dag_bench(go_arff, n_objects=300):
    t = time.perf_counter()
    h = go_hierarchy(go_arff)
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
    ratios = {"relaxed": [], "sidney": []}
    tight, completion = [], []
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
        b = catch(hier_rank(v, h, method="exact"), v)
        if b <= 0:
            continue
        for method in ratios:
            ratios[method].append(catch(hier_rank(v, h, method=method), v) / b)
        tight.append(b / hier_rank_bound(v, h))
        total = (v.size + 1) * v.sum()
        completion.append((total - ratios["sidney"][-1] * b) / (total - b))
    print(f"DAG gap: {len(tight)} random DAGs (2-7 classes, 1-3 objects, values in [0, 1], seed {seed})")
    for method, r in ratios.items():
        r = np.array(r)
        print(f"  CATCH({method}) / CATCH(exact): worst {r.min():.4f}, mean {r.mean():.5f}, "
              f"optimal in {np.mean(r > 1 - 1e-12):.1%}")
    c = np.array(completion)
    print(f"  sum V C (sidney) / sum V C (exact): worst {c.max():.4f} (guarantee: <= 2)")
    t = np.array(tight)
    print(f"  certificate CATCH(exact) / hier_rank_bound: worst {t.min():.4f}, mean {t.mean():.5f}, "
          f"bound exact in {np.mean(t > 1 - 1e-12):.1%}")


def go_values(h, n_objects, rng):
    # values that mostly shrink with depth, with noise, so the hierarchy binds
    v = rng.random((n_objects, h.n_classes)) * 0.5 ** np.asarray(h.depth) * rng.random((n_objects, 1))
    return np.clip(v + 0.05 * rng.random(v.shape), 0, 1)


def sidney_bench(go_arff, sizes=(100, 300), n_objects=(2000, 1300)):
    from hmcpgm.datasets import load_hmc_arff

    full = load_hmc_arff(go_arff).hierarchy
    rng = np.random.default_rng(1)
    for n_pick, m in zip(sizes + (None,), n_objects[:1] * len(sizes) + n_objects[1:]):
        if n_pick is None:
            h = full
        else:
            h = full.subgraph(list(rng.choice(np.array(full.classes, dtype=object), n_pick, replace=False)))
        v = go_values(h, m, rng)
        n_multi = sum(len(p) > 1 for p in h.parent_indices)
        hier_rank(v[:2], h, method="sidney")  # compile
        res = {}
        for method in ("relaxed", "sidney"):
            t = best_of(lambda: hier_rank(v, h, method=method), repeat=2)
            order = hier_rank(v, h, method=method)
            assert count_violations(order, h) == 0
            res[method] = (t, catch(order, v))
        t = time.perf_counter()
        bound = hier_rank_bound(v, h)
        t_bound = time.perf_counter() - t
        name = "full cellcycle_GO" if n_pick is None else f"GO sub-DAG ({n_pick} random classes + ancestors)"
        print(f"{name}: {h.n_classes} classes ({n_multi} with several parents), {m} objects = {v.size:,} events")
        for method, (t, c) in res.items():
            print(f"  {method:8s} {t:8.2f} s ({t / m * 1e3:6.2f} ms/object)  CATCH {c:.8g}  "
                  f"certified ratio CATCH / bound >= {c / bound:.5f}")
        print(f"  sidney / relaxed: time x{res['sidney'][0] / res['relaxed'][0]:.1f}, "
              f"CATCH {res['sidney'][1] / res['relaxed'][1]:.5f}; bound computed in {t_bound:.2f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dag-gap", action="store_true", help="CATCH of the DAG methods against the exact optimum")
    parser.add_argument("--sidney", action="store_true", help="relaxed against sidney on Gene Ontology DAGs")
    parser.add_argument("--data-dir", type=Path, default=DATA,
                        help="the Clus-HMC data (default: shared/data/hmc beside the repository)")
    args = parser.parse_args(argv)
    go_arff = args.data_dir / GO_NAME
    forest_bench()
    if go_arff.is_file():
        dag_bench(go_arff)
    else:
        print(f"{go_arff} absent: the Gene Ontology DAG benchmarks are skipped")
    if args.dag_gap:
        dag_gap()
    if args.sidney and go_arff.is_file():
        sidney_bench(go_arff)


if __name__ == "__main__":
    main()
