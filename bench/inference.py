"""Benchmark of the mLPR engines (run: python bench/inference.py; about 2 minutes).

1. Batched exact tree engine on the paper's 25-class forest (SPEC section 9), M = 10,000
   objects with likelihoods from the paper's Beta score model, against pgmpy exact
   inference (VariableElimination, one object and one class at a time) on 20 of them.
2. Junction-tree and loopy BP engines on a random 400-class DAG with two-parent classes:
   events (object x class) per second and their largest disagreement.
3. The real cellcycle_GO hierarchy (4,125 classes, 1,477 multi-parent classes), skipped
   when the shared data folder beside the repository (../shared/data/hmc) is absent: the junction tree's largest min-fill clique,
   full mLPR by loopy BP (time, iterations, converged fraction) and nbh mLPR (exact) for
   1,300 objects, likelihood ratios exp(N(1.5 (2Y - 1), 1)) from the training labels.
"""

import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from hmcpgm import ConvergenceWarning, Hierarchy, loopy_belief_propagation, mlpr_from_likelihoods
from hmcpgm.inference._junction import _min_fill_cliques, compile_junction_tree

GO_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "hmc" / "cellcycle_GO.train.arff"

PARENTS = [0, 0, 0, 2, 3, 3, 4, 4, 4, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13, 13, 14]
ETA = [5.5, 5.5, 5.5, 5.5, 4, 4, 2, 2, 2, 4, 2, 5.5, 5.5, 2, 5.5, 4, 5.5, 4, 4, 2, 5.5, 4, 4, 5.5, 4]


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def paper_problem(m, rng):
    h = Hierarchy.from_parents([p - 1 for p in PARENTS])
    theta = rng.uniform(0.2, 1.0, size=25)
    y = np.zeros((m, 25), dtype=bool)
    for k in h.topological_order:
        on = np.ones(m, bool) if not len(h.parent_indices[k]) else y[:, h.parent_indices[k][0]]
        y[:, k] = on & (rng.uniform(size=m) < theta[k])
    eta = np.array(ETA)
    scores = np.where(y, rng.beta(3.5, eta, size=(m, 25)), rng.beta(eta, 3.5, size=(m, 25)))
    lik = np.stack([stats.beta.pdf(scores, eta, 3.5), stats.beta.pdf(scores, 3.5, eta)], axis=2)
    return h, theta, lik


def random_dag(k, rng, window=30, p_two=0.15):
    parents = [None] * 4
    for j in range(4, k):
        lo = max(0, j - window)
        if rng.uniform() < p_two:
            parents.append([int(v) for v in rng.choice(np.arange(lo, j), size=2, replace=False)])
        else:
            parents.append(int(rng.integers(lo, j)))
    return Hierarchy.from_parents(parents)


def main():
    rng = np.random.default_rng(2024)
    m = 10_000
    h, theta, lik = paper_problem(m, rng)
    mlpr_from_likelihoods(h, theta, lik[:10])  # warm caches
    t_tree, out = best_of(lambda: mlpr_from_likelihoods(h, theta, lik))
    print(f"tree engine, paper forest (K=25), M={m}: {t_tree * 1e3:.1f} ms (best of 5)")

    n_ref = 20
    mlpr_from_likelihoods(h, theta, lik[:1], engine="pgmpy")  # import pgmpy outside the timing
    t = time.perf_counter()
    ref = mlpr_from_likelihoods(h, theta, lik[:n_ref], engine="pgmpy")
    per_obj = (time.perf_counter() - t) / n_ref
    print(f"pgmpy VariableElimination: {per_obj * 1e3:.0f} ms per object (mean of {n_ref})")
    print(f"  max |tree - pgmpy| on those {n_ref} objects: {np.abs(out[:n_ref] - ref).max():.2e}")
    print(f"  speed-up of the batched tree engine: {per_obj * m / t_tree:,.0f}x "
          f"(pgmpy per-object time x {m} / batched time)")

    k = 400
    dag = random_dag(k, rng)
    t = time.perf_counter()
    jt = compile_junction_tree(dag)
    t_compile = time.perf_counter() - t
    n_multi = sum(len(p) > 1 for p in dag.parent_indices)
    print(f"\nrandom DAG: K={k}, {n_multi} two-parent classes; junction tree compiled in "
          f"{t_compile:.2f} s, {len(jt.cliques)} cliques, largest {jt.max_clique_size} classes")
    theta = rng.uniform(0.3, 0.95, size=k)
    m_dag = 1000
    lik = rng.uniform(0.05, 1.0, size=(m_dag, k, 2))
    t_j, exact = best_of(lambda: mlpr_from_likelihoods(dag, theta, lik, engine="junction"), repeat=1)
    print(f"junction engine, M={m_dag}: {t_j:.2f} s, {m_dag * k / t_j:,.0f} events/s")
    m_l = 200
    loopy_belief_propagation(dag, theta, lik[:1])  # compile (or load) the kernel outside the timing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t = time.perf_counter()
        approx, report = loopy_belief_propagation(dag, theta, lik[:m_l])
        t_l = time.perf_counter() - t
    print(f"loopy engine (defaults), M={m_l}: {t_l:.2f} s, "
          f"{m_l * k / t_l:,.0f} events/s; {report}")
    if caught:
        print(f"  warning: {caught[0].message}")
    err = np.abs(approx - exact[:m_l])
    print(f"  |junction - loopy|: max {err.max():.3g}, mean {err.mean():.2e}, "
          f"99.9% quantile {np.quantile(err, 0.999):.3g}")

    gene_ontology()


def gene_ontology(m=1300):
    if not GO_FILE.exists():
        print(f"\n{GO_FILE} absent: Gene Ontology benchmark skipped")
        return
    from hmcpgm import estimate_theta
    from hmcpgm.datasets import load_hmc_arff

    data = load_hmc_arff(GO_FILE)
    h = data.hierarchy
    n_multi = sum(len(p) > 1 for p in h.parent_indices)
    t = time.perf_counter()
    widest = max(len(c) for _, c in _min_fill_cliques(h, h.n_classes))
    print(f"\ncellcycle_GO: K={h.n_classes}, {len(h.edge_indices)} edges, {n_multi} multi-parent "
          f"classes; largest min-fill clique {widest} classes (treewidth <= {widest - 1}; "
          f"triangulated in {time.perf_counter() - t:.1f} s): junction tree infeasible")
    rng = np.random.default_rng(7)
    y = data.labels[:m].astype(float)
    theta = estimate_theta(data.labels, h)
    ratio = np.exp(rng.normal(1.5 * (2 * y - 1), 1.0))
    lik = np.stack([np.ones_like(ratio), ratio], axis=2)
    loopy_belief_propagation(h, theta, lik[:2])  # compile the kernel outside the timing
    t = time.perf_counter()
    _, report = loopy_belief_propagation(h, theta, lik)
    t_l = time.perf_counter() - t
    print(f"loopy full mLPR, M={m}: {t_l:.1f} s; {report.converged.mean():.1%} converged, "
          f"iterations median {np.median(report.n_iter):.0f}, mean {report.n_iter.mean():.1f}, "
          f"max {report.n_iter.max()}")
    t = time.perf_counter()
    mlpr_from_likelihoods(h, theta, lik, version="nbh")
    print(f"nbh mLPR (exact), M={m}: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
