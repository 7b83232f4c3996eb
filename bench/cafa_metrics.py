"""Time CAFA's metrics (hmcpgm.metrics) on a Gene Ontology benchmark matrix, and cafaeval on the same data.

Usage (from the repository root; needs ../shared/data/hmc/eisen_GO.test.arff)::

    python bench/cafa_metrics.py [--cafaeval]

Scores are the test labels plus Gaussian noise (clipped to [0, 1]); the numbers are
timings, not a result about any method. With ``--cafaeval`` the same matrices are
written as CAFA files and timed through ``cafaeval.evaluation.cafa_eval`` (1 thread),
and the Fmax of both is printed.
"""

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

from hmcpgm.datasets import load_hmc_arff
from hmcpgm.metrics import cafa_metrics, fmax, information_accretion, smin, weighted_fmax

DATA = HMC_DATA / "eisen_GO.test.arff"


def main():
    data = load_hmc_arff(DATA)
    h, y = data.hierarchy, data.labels
    s = np.clip(0.5 * y + np.random.default_rng(0).normal(0.2, 0.2, y.shape), 0, 1).round(3)
    print(f"{DATA.name}: {y.shape[0]} targets x {h.n_classes} terms, {len(h.edges)} edges")
    ia = information_accretion(y, h)
    for name, call in [("fmax", lambda: fmax(s, y, h)), ("weighted_fmax", lambda: weighted_fmax(s, y, h, ia=ia)),
                       ("smin", lambda: smin(s, y, h, ia=ia))]:
        start = time.perf_counter()
        result = call()
        print(f"{name:>14}: {result.value:.6f} at tau {result.threshold:.2f}  {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    cafa_metrics(s, y, h, ia=ia)
    print(f"{'cafa_metrics':>14}: all three  {time.perf_counter() - start:.2f} s")
    if "--cafaeval" in sys.argv:
        from cafaeval.evaluation import cafa_eval

        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            terms = [f"T{k}" for k in range(h.n_classes)]
            name = {c: t for c, t in zip(h.classes, terms)}
            obo = ["format-version: 1.2", ""]
            for c in h.classes:
                obo += ["[Term]", f"id: {name[c]}", "namespace: ns"] + [f"is_a: {name[p]}" for p in h.parents(c)] + [""]
            (d / "o.obo").write_text("\n".join(obo))
            (d / "gt.tsv").write_text("".join(f"P{i}\t{terms[k]}\n" for i, k in zip(*np.nonzero(y))))
            (d / "pred").mkdir()
            (d / "pred" / "p.tsv").write_text("".join(f"P{i}\t{terms[k]}\t{s[i, k]}\n"
                                                      for i, k in zip(*np.nonzero(s))))
            start = time.perf_counter()
            _, best = cafa_eval(str(d / "o.obo"), str(d / "pred"), str(d / "gt.tsv"), n_cpu=1)
            f = best["f"].iloc[0]
            print(f"cafaeval (parse + evaluate, 1 thread): fmax {f['f']:.6f} at tau {f.name[2]:.2f}  "
                  f"{time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
