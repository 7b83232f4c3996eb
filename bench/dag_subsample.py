"""What ``dag_rows`` costs: the default's fit on a DAG with the rows it keeps and with a fixed 300 rows.

On a DAG the default cross-fits nbh and full on a seeded subsample of the training
rows (``hmcpgm.selection.dag_rows``: as many rows as ``DAG_CELLS`` events hold, at
least 300), where it used a fixed 300 rows. This script draws a DAG of
``--classes`` classes (each class's parents among the 50 before it, 40% of classes
with two), labels from its network (a root positive with probability 0.9, a class
with 0.7 when all its parents are), scores ``N(1.5 y, 1)`` for ``--rows`` rows, and
fits :func:`hmcpgm.selection.fit_second_stage_auto` with its defaults and with
``max_rows=300, screen_rows=100``, in this one run. It prints each fit's seconds,
the version chosen and the rows and seconds of each version's search.

Usage (from the repository root)::

    python bench/dag_subsample.py                        # 500 classes, 3,000 rows, about 2 minutes
    python bench/dag_subsample.py --classes 60 --rows 900
"""

import argparse
import time
import warnings

import numpy as np


def main():
    from hmcpgm import Hierarchy
    from hmcpgm.selection import dag_rows, fit_second_stage_auto

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=500)
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    k, n = args.classes, args.rows
    edges = [(f"c{p}", f"c{c}") for c in range(1, k)
             for p in set(rng.integers(max(0, c - 50), c, size=1 + int(rng.random() < 0.4)).tolist())]
    h = Hierarchy.from_edges(edges)
    y = np.zeros((n, h.n_classes), int)
    for c in h.topological_order:
        parents = list(h.parent_indices[c])
        gate = np.all(y[:, parents] == 1, axis=1) if parents else np.ones(n, bool)
        y[:, c] = gate & (rng.random(n) < (0.7 if parents else 0.9))
    s = rng.normal(size=y.shape) + 1.5 * y
    print(f"a DAG of {h.n_classes} classes, {n} training rows; dag_rows keeps {min(n, dag_rows(h.n_classes, 300))}")
    for name, options in (("300 rows", {"max_rows": 300, "screen_rows": 100}), ("dag_rows", {})):
        t0 = time.perf_counter()
        stage = fit_second_stage_auto(s, y, h, **options)
        seconds = time.perf_counter() - t0
        table = stage.cv_table
        searches = ", ".join(f"{v} {r} rows {t:.1f} s" for v, r, t in zip(table["version"], table["rows"],
                                                                          table["seconds"]))
        print(f"  {name:<9} fit {seconds:6.1f} s, chose {stage.version}; {searches}", flush=True)


if __name__ == "__main__":
    main()
