"""Benchmark of the mLPR engines (run: python bench/inference.py; about 8 minutes, 5 of them for the GO section).

1. Batched exact tree engine on the paper's 25-class forest (SPEC section 9), M = 10,000
   objects with likelihoods from the paper's Beta score model, against pgmpy exact
   inference (VariableElimination, one object and one class at a time) on 20 of them.
2. Junction-tree and loopy BP engines on a random 400-class DAG with two-parent classes:
   events (object x class) per second and their largest disagreement.
3. The real cellcycle_GO hierarchy (4,125 classes, 1,477 multi-parent classes), skipped
   when the shared data folder is absent (HMCPGM_HMC_DATA overrides its place): the
   inference plan (each engine's states, bytes, estimated seconds per object); EXACT
   full mLPRs of 200 objects by the sparse junction tree (compile time, run time, peak
   resident memory of the process from resource.getrusage, states), Proposition 1 on
   them and loopy BP's error against them; full mLPR by loopy BP (time, iterations,
   converged fraction) and nbh mLPR (exact) for 1,300 objects. Likelihood ratios
   exp(N(1.5 (2Y - 1), 1)) from the training labels.

Wall-clock times on the shared 2-core machine are noisy (other jobs run at the same
time): compare within one run. ``python bench/inference.py go`` runs section 3 only,
``python bench/inference.py dag`` section 2 only.
"""

import resource
import sys
import time
import warnings

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs
from scipy import stats

from hmcpgm import (
    ConvergenceWarning,
    Hierarchy,
    LabelNetwork,
    inference_plan,
    loopy_belief_propagation,
    mlpr_from_likelihoods,
)
from hmcpgm.inference._junction import compile_junction_tree
from hmcpgm.inference._sparse_junction import compile_sparse_junction_tree

HMC = HMC_DATA
GO_FILE = HMC / "cellcycle_GO.train.arff"


def peak_rss_gib():
    """Peak resident memory of this process so far (resource.getrusage; Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

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
    mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:10])  # warm caches
    t_tree, out = best_of(lambda: mlpr_from_likelihoods(LabelNetwork(h, theta), lik))
    print(f"tree engine, paper forest (K=25), M={m}: {t_tree * 1e3:.1f} ms (best of 5)")

    n_ref = 20
    mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:1], engine="pgmpy")  # import pgmpy outside the timing
    t = time.perf_counter()
    ref = mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:n_ref], engine="pgmpy")
    per_obj = (time.perf_counter() - t) / n_ref
    print(f"pgmpy VariableElimination: {per_obj * 1e3:.0f} ms per object (mean of {n_ref})")
    print(f"  max |tree - pgmpy| on those {n_ref} objects: {np.abs(out[:n_ref] - ref).max():.2e}")
    print(f"  speed-up of the batched tree engine: {per_obj * m / t_tree:,.0f}x "
          f"(pgmpy per-object time x {m} / batched time)")

    random_dag_section(rng)
    gene_ontology()


def random_dag_section(rng):
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
    t_j, exact = best_of(lambda: mlpr_from_likelihoods(LabelNetwork(dag, theta), lik, engine="junction"), repeat=1)
    print(f"junction engine, M={m_dag}: {t_j:.2f} s, {m_dag * k / t_j:,.0f} events/s "
          f"(plan estimate {inference_plan(dag)['junction'].seconds_per_object * m_dag:.2f} s)")
    mlpr_from_likelihoods(LabelNetwork(dag, theta), lik[:2], engine="sparse")  # compile (or load) the kernel
    t_s, sparse = best_of(lambda: mlpr_from_likelihoods(LabelNetwork(dag, theta), lik, engine="sparse"), repeat=1)
    print(f"sparse engine, M={m_dag}: {t_s:.2f} s, {m_dag * k / t_s:,.0f} events/s (plan estimate "
          f"{inference_plan(dag)['sparse'].seconds_per_object * m_dag:.2f} s on one core); "
          f"max |sparse - junction| {np.abs(sparse - exact).max():.1e}; auto runs {inference_plan(dag).engine!r}")
    m_l = 200
    loopy_belief_propagation(LabelNetwork(dag, theta), lik[:1])  # compile (or load) the kernel outside the timing
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t = time.perf_counter()
        approx, report = loopy_belief_propagation(LabelNetwork(dag, theta), lik[:m_l])
        t_l = time.perf_counter() - t
    print(f"loopy engine (defaults), M={m_l}: {t_l:.2f} s, "
          f"{m_l * k / t_l:,.0f} events/s; {report}")
    if caught:
        print(f"  warning: {caught[0].message}")
    err = np.abs(approx - exact[:m_l])
    print(f"  |junction - loopy|: max {err.max():.3g}, mean {err.mean():.2e}, "
          f"99.9% quantile {np.quantile(err, 0.999):.3g}")


def exact_gene_ontology(data, m):

    h = data.hierarchy
    rng = np.random.default_rng(11)
    y = data.labels[:m].astype(float)
    theta = LabelNetwork.from_labels(data.labels, h).theta
    ratio = np.exp(rng.normal(1.5 * (2 * y - 1), 1.0))
    lik = np.stack([np.ones_like(ratio), ratio], axis=2)
    # compile (or load) the kernel outside the timing
    mlpr_from_likelihoods(LabelNetwork(h, theta), lik[:2], engine="sparse")
    t = time.perf_counter()
    exact = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
    t_exact = time.perf_counter() - t
    jt = compile_sparse_junction_tree(h)
    print(f"EXACT full mLPR (sparse junction tree), M={m} objects x {h.n_classes} classes: {t_exact:.0f} s "
          f"({t_exact / m:.2f} s per object, 2 threads); peak resident memory of the process "
          f"{peak_rss_gib():.2f} GiB (resource.getrusage); {jt.total_states:,} feasible clique states "
          f"(dense: {jt.dense_states:.3g}); the plan estimated "
          f"{inference_plan(h)['sparse'].seconds_per_object:.2f} s per object on one core")
    edges = np.asarray(h.edge_indices)
    slack = (exact[:, edges[:, 1]] - exact[:, edges[:, 0]]).max()
    print(f"  Proposition 1 on these results: max over (object, edge) of child - parent mLPR = {slack:.2e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        approx, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    err = np.abs(approx - exact)
    print(f"  loopy BP on the same objects ({report.converged.mean():.0%} converged): |error| max "
          f"{err.max():.3g}, 99.9% quantile {np.quantile(err, 0.999):.3g}, mean {err.mean():.2e}")


def gene_ontology(m=1300, m_exact=200):
    if not GO_FILE.exists():
        print(f"\n{GO_FILE} absent: Gene Ontology benchmark skipped")
        return
    from hmcpgm.datasets import load_hmc_arff

    data = load_hmc_arff(GO_FILE)
    h = data.hierarchy
    n_multi = sum(len(p) > 1 for p in h.parent_indices)
    print(f"\ncellcycle_GO: K={h.n_classes}, {len(h.edge_indices)} edges, {n_multi} multi-parent classes")
    t = time.perf_counter()
    plan = inference_plan(h)
    print(f"{plan}\n(plan computed in {time.perf_counter() - t:.1f} s)")
    t = time.perf_counter()
    jt = compile_sparse_junction_tree(h)
    t_compile = time.perf_counter() - t
    cand = ", ".join(f"{c}: {v['states']:.3g} states (largest clique {v['max_clique_size']} classes, "
                     f"{v['max_states']:.3g} states)" for c, v in jt.candidates.items())
    print(f"sparse junction tree compiled in {t_compile:.1f} s (after the plan's triangulations): {jt}; "
          f"triangulations tried: {cand}; {jt.n_separator_states:,} separator states; structure "
          f"{jt.structure_bytes / 2**30:.2f} GiB, working memory {jt.object_bytes / 2**20:.0f} MiB per object")
    exact_gene_ontology(data, m_exact)
    rng = np.random.default_rng(7)
    y = data.labels[:m].astype(float)
    theta = LabelNetwork.from_labels(data.labels, h).theta
    ratio = np.exp(rng.normal(1.5 * (2 * y - 1), 1.0))
    lik = np.stack([np.ones_like(ratio), ratio], axis=2)
    loopy_belief_propagation(LabelNetwork(h, theta), lik[:2])  # compile the kernel outside the timing
    t = time.perf_counter()
    _, report = loopy_belief_propagation(LabelNetwork(h, theta), lik)
    t_l = time.perf_counter() - t
    print(f"loopy full mLPR, M={m}: {t_l:.1f} s; {report.converged.mean():.1%} converged, "
          f"iterations median {np.median(report.n_iter):.0f}, mean {report.n_iter.mean():.1f}, "
          f"max {report.n_iter.max()}")
    t = time.perf_counter()
    mlpr_from_likelihoods(LabelNetwork(h, theta), lik, version="nbh")
    print(f"nbh mLPR (exact), M={m}: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    if sys.argv[1:] == ["go"]:
        gene_ontology()
    elif sys.argv[1:] == ["dag"]:  # section 2 alone (the generator's state as in a full run)
        rng = np.random.default_rng(2024)
        paper_problem(10_000, rng)
        random_dag_section(rng)
    else:
        main()
