"""Seconds of each classic correction (hmcpgm.corrections) on real test rows.

Usage (from the repository root)::

    python bench/corrections.py                       # cellcycle_FUN and cellcycle_GO
    python bench/corrections.py --data cellcycle_GO --rows 300

Per data set: the default joint first stage (ridge, :func:`hmcpgm.fit_first_stage`)
is fitted on the train rows and scores the train and test rows; a per-class
isotonic calibration is fitted on the train scores (in-sample: this script times,
it does not evaluate) and applied to the test scores. Then each correction of
``hmcpgm.corrections.CORRECTIONS`` (and the TPR-DAG variants) runs on the
calibrated test rows. Printed per correction: the first call (numba compilation,
or loading it from the on-disk cache), the median of ``--repeats`` further calls
in wall seconds and in CPU seconds of this process (all threads; less sensitive to
other load on a shared machine), and whether the output respects the hierarchy. For ``gpav`` also: the seconds of
GPAV's pooling alone (a heuristic on DAGs, as HEMDAG's, in one children-first
order), the classes left to recursive partitioning, and how far the pooling is
from the exact optimum (share of objects, total squared error).

The machine is shared: compare numbers within one run.
"""

import argparse
import time
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA

VARIANTS = [
    ("flat", {}),
    ("htd", {}),
    ("gpav", {}),
    ("tpr_dag", {}),
    ("tpr_dag", {"bottomup": "threshold", "t": 0.5}),
    ("tpr_dag", {"bottomup": "weighted_threshold_free", "w": 0.5}),
    ("tpr_dag", {"bottomup": "weighted_threshold", "t": 0.5, "w": 0.5}),
    ("iso_tpr", {}),
    ("descens", {}),
    ("descens", {"bottomup": "tau", "t": 0.5}),
    ("obozinski", {"method": "max"}),
    ("obozinski", {"method": "and"}),
    ("obozinski", {"method": "or"}),
    ("mcm", {}),
]


CPU = {}


def timed(func, repeats):
    """(output, seconds of the first call, median wall seconds of ``repeats`` more); the median CPU
    seconds (all threads of this process) go to ``CPU["last"]``."""
    start = time.perf_counter()
    out = func()
    first = time.perf_counter() - start
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        func()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    CPU["last"] = float(np.median(cpus)) if cpus else float("nan")
    return out, first, float(np.median(walls)) if walls else float("nan")


def line(label, median, first=None, extra=""):
    first = "" if first is None else f"  first call {first:7.3f} s"
    print(f"  {label:50s} {median:8.3f} s  cpu {CPU['last']:8.3f} s{first}{extra}")


def run(name, rows, repeats):
    from hmcpgm import fit_first_stage, load_hmc_split, predict_scores
    from hmcpgm.corrections import CORRECTIONS, dag_passes, fit_calibration, maxnorm, qnorm
    from hmcpgm.corrections._isotonic import isotonic_rows_report  # bench only: the partition statistics
    from hmcpgm.corrections._pooling import gpav_rows

    split = load_hmc_split(name, DATA)
    h = split.hierarchy
    test = split.test
    m = len(test.labels) if rows is None else min(rows, len(test.labels))
    print(f"\n{name}: {h.n_classes} classes, {len(h.edge_indices)} edges ({h.kind}), {m} test rows")
    t0 = time.perf_counter()
    model = fit_first_stage(split.train.features, split.train.labels, progress=False)
    s_train = predict_scores(model, split.train.features)
    s_test = predict_scores(model, test.features[:m])
    print(f"  first stage fit + scores: {time.perf_counter() - t0:.2f} s")
    _, first, median = timed(lambda: dag_passes.__wrapped__(h), repeats)
    line("DAG passes (once per hierarchy)", median)
    cal, first, median = timed(lambda: fit_calibration(s_train, split.train.labels), repeats)
    line("isotonic calibration fit (train rows)", median, first)
    _, first, median = timed(lambda: fit_calibration(s_train, split.train.labels, method="platt"), repeats)
    line("Platt calibration fit (train rows)", median, first)
    p, first, median = timed(lambda: cal.transform(s_test), repeats)
    line("isotonic calibration apply (test rows)", median, first)
    for label, func in (("maxnorm", maxnorm), ("qnorm", qnorm)):
        _, first, median = timed(lambda func=func: func(p), repeats)
        line(label, median, first)
    e = h.edge_indices
    for key, options in VARIANTS:
        entry = CORRECTIONS[key]
        out, first, median = timed(lambda entry=entry, options=options: entry(p, h, **options), repeats)
        ok = bool(np.all(out[:, e[:, 1]] <= out[:, e[:, 0]] + 1e-12))
        label = key + ("(" + ", ".join(f"{k}={v}" for k, v in options.items()) + ")" if options else "")
        line(label, median, first, f"  consistent={ok}")
    passes = dag_passes(h)
    w = np.ones_like(p)
    _, first, median = timed(lambda: gpav_rows(p, w, passes.down, passes.child_ptr, passes.child_idx), repeats)
    line("GPAV pooling alone (children first; exact on forests)", median)
    exact, n_left = isotonic_rows_report(np.ascontiguousarray(p), None, h)
    pooled = gpav_rows(p, w, passes.down, passes.child_ptr, passes.child_idx)
    loss_exact = ((exact - p) ** 2).sum(axis=1)
    loss_pooled = ((pooled - p) ** 2).sum(axis=1)
    worse = loss_pooled > loss_exact * (1 + 1e-9) + 1e-12
    print(f"  {'  classes in a violation, partitioned (mean/object)':50s} {n_left.mean():8.0f} of {h.n_classes}")
    print(f"  {'  objects where pooling is not optimal':50s} {worse.mean():8.1%}")
    excess = (loss_pooled.sum() - loss_exact.sum()) / max(loss_exact.sum(), 1e-300)
    print(f"  {'  pooling: squared error above the optimum':50s} {excess:8.2%}")
    print(f"  {'  exact: a child above a parent (max)':50s} {np.max(exact[:, e[:, 1]] - exact[:, e[:, 0]]):8.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["cellcycle_FUN", "cellcycle_GO"])
    parser.add_argument("--rows", type=int, default=None, help="test rows (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for name in args.data:
        run(name, args.rows, args.repeats)


if __name__ == "__main__":
    main()
