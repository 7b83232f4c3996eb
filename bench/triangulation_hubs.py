"""Greedy triangulation on hubs: the plan and the sparse engine on a star of N leaves with one diamond.

Run: python bench/triangulation_hubs.py [N ...]  (default 250 500 1000)

A class with N children (a Gene Ontology root has hundreds) plus one class under two
of them makes the hierarchy a DAG, so ``engine="auto"`` triangulates its moral graph
(min-fill for the dense junction tree, weighted min-fill for the sparse one). Prints
the seconds of ``inference_plan`` (both triangulations) and of
``mlpr_from_likelihoods(engine="sparse")`` on 3 objects.
"""

import sys
import time

import numpy as np

from hmcpgm import Hierarchy, LabelNetwork, inference_plan, mlpr_from_likelihoods


def star_with_a_diamond(n):
    edges = [("r", f"c{i}") for i in range(n)] + [("c0", "x"), ("c1", "x")]
    return Hierarchy.from_edges(edges, classes=[f"c{i}" for i in range(n)] + ["r", "x"])


def main(sizes):
    rng = np.random.default_rng(0)
    for n in sizes:
        h = star_with_a_diamond(n)
        t = time.perf_counter()
        inference_plan(h)
        plan = time.perf_counter() - t
        lik = rng.uniform(0.01, 1.0, (3, h.n_classes, 2))
        t = time.perf_counter()
        mlpr_from_likelihoods(LabelNetwork(h, np.full(h.n_classes, 0.3)), lik, engine="sparse")
        print(f"N={n}: inference_plan {plan:.2f} s, sparse on 3 objects {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [250, 500, 1000])
