"""restrict_hierarchy on large synthetic DAGs: the loop it replaced against the library's, in one run.

Run: python bench/restrict_hierarchy.py [N ...]  (default 50000)

A Gene-Ontology-like DAG of N classes: class i has 1 to 3 parents drawn among
classes 0 .. i-1 (one root; on 50,000 classes the longest path has 28 edges and
a class has 55.1 ancestors on average), columns in a random order. Both versions
keep a random half of the classes, then all of them. Then a deep DAG of N / 2.5
classes (each class's 1 or 2 parents among the two before it: on 20,000 classes
a longest path of 16,038 edges, 9,277 ancestors per class on average)
restricted to 2% of its classes, where a walk per kept class was cheap. The
script prints the seconds of each version, the seconds of building the result
(``Hierarchy.from_edges``, part of both), and checks that they give the same
hierarchy (classes and edges, in the same order).
``before`` is the code restrict_hierarchy had until the change: per kept class,
its ancestors by a walk over the whole hierarchy (``Hierarchy.ancestors``: a
(K,) array per call), then a test of every pair of kept ancestors.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's hmcpgm

from hmcpgm import Hierarchy  # noqa: E402
from hmcpgm.ontology import restrict_hierarchy  # noqa: E402


def synthetic_dag(n, seed=0):
    """N classes; class i has 1 to 3 parents drawn uniformly among 0 .. i-1; columns shuffled."""
    rng = np.random.default_rng(seed)
    edges = []
    for i in range(1, n):
        k = 1 + int(rng.random() < 0.3) + int(rng.random() < 0.1)
        edges.extend((f"t{p}", f"t{i}") for p in sorted(set(rng.integers(0, i, size=k).tolist())))
    return Hierarchy.from_edges(edges, classes=[f"t{i}" for i in rng.permutation(n)])


def before(hierarchy, classes):
    """restrict_hierarchy as it was (hmcpgm.ontology before the change), without its argument check."""
    classes = list(classes)
    kept = set(classes)
    ancestors = {c: set(hierarchy.ancestors(c)) & kept for c in classes}
    edges = []
    for c in classes:
        above = ancestors[c]
        for a in above:
            if not any(a in ancestors[b] for b in above if b != a):
                edges.append((a, c))
    position = {c: k for k, c in enumerate(classes)}
    return Hierarchy.from_edges(sorted(edges, key=lambda e: (position[e[1]], position[e[0]])), classes=classes)


def timed(func, *args):
    t = time.perf_counter()
    out = func(*args)
    return time.perf_counter() - t, out


def deep_dag(n, seed=0):
    """N classes; class i has 1 or 2 parents among i-2 and i-1 (a chain with shortcuts)."""
    rng = np.random.default_rng(seed)
    edges = [(f"d{p}", f"d{i}") for i in range(1, n)
             for p in sorted(set(rng.integers(max(0, i - 2), i, size=2).tolist()))]
    return Hierarchy.from_edges(edges)


def compare(name, h, kept):
    t_old, old = timed(before, h, kept)
    t_new, new = timed(restrict_hierarchy, h, kept)
    t_build, _ = timed(Hierarchy.from_edges, list(new.edges), kept)
    same = old == new and old.edges == new.edges
    print(f"  {name} ({len(kept)}): before {t_old:.2f} s, now {t_new:.2f} s ({t_old / t_new:.1f}x; building the "
          f"result {t_build:.2f} s of it); {old.graph.number_of_edges()} edges; same hierarchy: {same}")


def main(sizes):
    for n in sizes:
        t, h = timed(synthetic_dag, n)
        print(f"{h}: built in {t:.1f} s")
        rng = np.random.default_rng(1)
        compare("half of the classes", h, [h.classes[i] for i in np.sort(rng.choice(n, n // 2, replace=False))])
        compare("every class", h, list(h.classes))
        deep = deep_dag(int(n / 2.5))
        print(f"{deep}, longest path {int(np.max(deep.depth))} edges")
        kept = [deep.classes[i] for i in np.sort(rng.choice(deep.n_classes, deep.n_classes // 50, replace=False))]
        compare("2% of the classes", deep, kept)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [50000])
