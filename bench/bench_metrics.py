"""Time hmcpgm's metrics and cutoffs on a Gene-Ontology-sized matrix.

1,300 objects x 4,100 classes (5.3 million events), like the GO test splits.
Prints wall times and the ratio to scikit-learn's average_precision_score.
Run: python bench/bench_metrics.py
"""

import time

import numpy as np
from sklearn.metrics import average_precision_score

from hmcpgm import average_precision, bayes_cutoff, choose_cutoff, hit_curve, precision_recall_at


def best_of(f, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    rng = np.random.default_rng(0)
    m, k = 1300, 4100
    p = rng.beta(0.3, 3.0, size=(m, k))
    labels = (rng.random((m, k)) < p).astype(np.int8)
    values = np.round(p, 3)  # ties, as in real mLPR output
    order = np.argsort(-values.ravel(), kind="stable")

    t_ours, ap = best_of(lambda: average_precision(values, labels, exclude_roots=False))
    t_sk, ap_sk = best_of(lambda: average_precision_score(labels, values, average="micro"), repeat=1)
    print(f"events: {m * k:,}")
    print(f"average_precision   {t_ours:7.3f} s  AP {ap:.6f}")
    print(f"sklearn micro AP    {t_sk:7.3f} s  AP {ap_sk:.6f}  (ours / sklearn time {t_ours / t_sk:.2f})")
    for name, f in [
        ("hit_curve", lambda: hit_curve(order, labels)),
        ("precision_recall_at", lambda: precision_recall_at(order, labels, [0.05, 0.1, 0.2, 0.3, 0.5])),
        ("choose_cutoff max_f1", lambda: choose_cutoff(order, labels)),
        ("choose_cutoff fdr", lambda: choose_cutoff(order, labels, rule="fdr", alpha=0.1)),
        ("bayes_cutoff fdr", lambda: bayes_cutoff(order, p, alpha=0.1)),
    ]:
        t, _ = best_of(f)
        print(f"{name:20s}{t:7.3f} s")


if __name__ == "__main__":
    main()
