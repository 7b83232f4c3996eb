"""Closing labels upward on an ontology-sized DAG: Hierarchy.close_labels against its per-call formulation.

``close_labels`` multiplies the labels by the sparse ancestor closure, which the
hierarchy builds once (``Hierarchy._ancestor_csr``). Before, every call converted
the dense K x K ancestor matrix to a sparse one, which dominated on a large
ontology (``hmcpgm evaluate`` closes labels several times per run). This script
draws a DAG of ``--classes`` classes (40% with two parents), 1,500 rows of sparse
labels, and prints the best of three calls of each, measured in this one run,
after a first call that builds the cached closure (timed too), with the check that
both give the same matrix.

Usage (from the repository root)::

    python bench/close_labels.py                  # 20,000 classes, about a minute
    python bench/close_labels.py --classes 5000
"""

import argparse
import time

import numpy as np
from bench_metrics import best_of  # bench/ is on sys.path when a script runs


def main():
    from scipy import sparse

    from hmcpgm import Hierarchy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=1500)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    k = args.classes
    edges = [(f"c{p}", f"c{c}") for c in range(1, k)
             for p in set(rng.integers(max(0, c - 2000), c, size=1 + int(rng.random() < 0.4)).tolist())]
    h = Hierarchy.from_edges(edges)
    y = (rng.random((args.rows, h.n_classes)) < 0.002).astype(np.int8)
    _ = h.ancestor_matrix  # the dense closure both use, built once

    def per_call():
        labels = y.astype(bool)
        reach = sparse.csr_matrix(labels, dtype=np.int32) @ sparse.csr_matrix(h.ancestor_matrix, dtype=np.int32)
        return (labels | (reach.toarray() > 0)).astype(np.int8)

    t0 = time.perf_counter()
    first = h.close_labels(y)
    t_first = time.perf_counter() - t0
    t_cached, closed = best_of(lambda: h.close_labels(y))
    t_per_call, again = best_of(per_call)
    assert np.array_equal(closed, again) and np.array_equal(first, closed)
    print(f"{args.rows} rows x {h.n_classes} classes, {len(edges)} edges")
    print(f"close_labels, first call (builds the closure)  {t_first:7.2f} s")
    print(f"close_labels, later calls                      {t_cached:7.2f} s")
    print(f"the closure made sparse on every call          {t_per_call:7.2f} s   ratio {t_per_call / t_cached:.1f}x")


if __name__ == "__main__":
    main()
