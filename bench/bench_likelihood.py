"""Timings of the score models (not part of the test suite).

Run: python bench/bench_likelihood.py
Prints fit and evaluation times of each score model on the paper's 25-class
synthetic design (50,000 training objects, 100,000 objects scored) and on a
wide FunCat-sized design (499 classes, 1,600 training objects), and the speed-up
of the grid read-out over evaluating statsmodels' KDE directly at each score.
The 'precision' model's fit is dominated by the smoothing spline's GCV search.
"""

import time
from functools import partial

import numpy as np

from hmcpgm import Hierarchy
from hmcpgm.likelihood import SCORE_MODELS, fit_score_model


def timed(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def design(rng, k, m_train, m_test):
    h = Hierarchy.from_parents([None] * k)
    y = (rng.random((m_train, k)) < rng.uniform(0.05, 0.5, k)).astype(int)
    eta = rng.choice([2.0, 4.0, 5.5], k)
    s = np.where(y == 1, rng.beta(3.5, eta, (m_train, k)), rng.beta(eta, 3.5, (m_train, k)))
    test = rng.random((m_test, k))
    return h, s, y, test


def main():
    rng = np.random.default_rng(0)
    h, s, y, _ = design(rng, 2, 100, 10)
    fit_score_model(s, y, h)  # warm imports
    for k, m_train, m_test in [(25, 50_000, 100_000), (499, 1_600, 1_300)]:
        h, s, y, test = design(rng, k, m_train, m_test)
        for kind in SCORE_MODELS:
            t_fit, model = timed(partial(fit_score_model, s, y, h, kind=kind), repeat=1)
            t_lik, _ = timed(partial(model.likelihoods, test))
            print(
                f"K={k:4d} M_train={m_train:6d} {kind:9s}: fit {t_fit:7.3f} s, "
                f"likelihoods of {m_test} x {k} scores {t_lik:7.3f} s"
            )

    from statsmodels.nonparametric.kde import KDEUnivariate

    h, s, y, test = design(rng, 1, 50_000, 100_000)
    model = fit_score_model(s, y, h, kind="kde")
    kde = KDEUnivariate(s[y[:, 0] == 0, 0])
    kde.fit(bw="silverman", fft=True)  # evaluate() below sums the kernel over every training score
    sub = test[:500, 0]
    t_direct, direct = timed(lambda: kde.evaluate(sub), repeat=1)
    t_grid, grid = timed(lambda: model.densities(test[:500]))
    err = np.max(np.abs(grid[:, 0, 0] - direct) / direct)
    print(f"grid read-out vs direct KDE (same bandwidth): max relative difference {err:.4f}")
    print(
        f"one class, 500 scores: statsmodels KDE.evaluate {t_direct:.3f} s, grid read-out "
        f"{t_grid * 1e3:.2f} ms, ratio {t_direct / t_grid:.0f}x"
    )


if __name__ == "__main__":
    main()
