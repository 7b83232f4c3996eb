"""The engines on one core and on every core: time per run and the speed-up, measured in one run.

Usage (from the repository root)::

    python bench/parallel.py            # tree engine on 200,000 objects x the paper's forest,
                                        # loopy BP on 2,000 objects x cellcycle_GO's DAG
    python bench/parallel.py --quick

numba runs the ``prange`` loops of the compiled kernels on ``numba.set_num_threads(n)``
threads; each timing is the best of three after a warm-up call (compilation excluded).
The speed-up is bounded by the cores the machine really gives this process: on a
shared machine other work lowers it.
"""

import argparse
import os
import time
from functools import partial

import numba
import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

DATA = HMC_DATA


def best_of(fn, n=3):
    fn()  # warm-up: compiles, fills caches
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def problem(hierarchy, m, seed=0):
    from hmcpgm import LabelNetwork

    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.05, 0.95, hierarchy.n_classes)
    # mostly weak evidence, as scores of real classifiers give: log-ratios N(0, 1)
    ratio = np.exp(rng.normal(0.0, 1.0, (m, hierarchy.n_classes)))
    lik = np.stack([np.ones_like(ratio), ratio], axis=2)
    return LabelNetwork(hierarchy, theta), lik


def main():
    from hmcpgm import mlpr_from_likelihoods
    from hmcpgm.datasets import load_hmc_arff, paper_forest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller problems")
    args = parser.parse_args()
    cores = numba.config.NUMBA_NUM_THREADS
    cases = [("tree", "paper forest", paper_forest(), 20_000 if args.quick else 200_000)]
    go = DATA / "cellcycle_GO.train.arff"
    if go.is_file():
        cases.append(("loopy", "cellcycle_GO", load_hmc_arff(go).hierarchy, 200 if args.quick else 2_000))
    else:
        print(f"(loopy on cellcycle_GO skipped: {go} not found)")
    print(f"numba threads available: {cores}; os.cpu_count(): {os.cpu_count()}")
    print(
        f"{'engine':<8} {'hierarchy':<14} {'objects':>8} {'1 thread s':>11} "
        f"{f'{cores} threads s':>12} {'speed-up':>9}"
    )
    for engine, name, hierarchy, m in cases:
        network, lik = problem(hierarchy, m)
        timings = {}
        for threads in (1, cores):
            numba.set_num_threads(threads)
            timings[threads] = best_of(partial(mlpr_from_likelihoods, network, lik, engine=engine))
        numba.set_num_threads(cores)
        print(f"{engine:<8} {name:<14} {m:>8} {timings[1]:>11.3f} {timings[cores]:>12.3f} "
              f"{timings[1] / timings[cores]:>8.2f}x")


if __name__ == "__main__":
    main()
