"""Does the default's version choice carry over from the training rows to new rows? (issue 19)

The default ``MLPR()`` chooses among indpt, nbh and full by the cross-fitted
micro AU(PRC) of the training rows (HierRank rankings). This script asks, per
run, whether the gain of nbh and full over indpt that the choice sees on the
training rows is also there on the validation rows and on the test rows, where
the benchmark measures the default: for each version it builds the fitted
stage with that version's exponent (the default's score models, ``theta`` and
own-evidence exponent; no max lifting) and prints, as differences to indpt in
AU(PRC) points,

- ``cv``: the cross-fitted training rows the choice was made on (for nbh and
  full on DAGs: their subsample of rows);
- ``valid``: the validation rows (scored by the first stage fitted on all
  training rows, as the test rows are; never seen by the fit);
- ``test``: the test rows.

A choice rule can only follow ``cv`` (or, with held-out rows, ``valid``): where
both favour a version that loses on ``test``, no rule using the data at hand
would have avoided the loss.

Scores: ``<cache-dir>/<data set>.<first stage>.npz`` (``s_train``, ``y_train``,
``s_valid``, ``y_valid``, ``s_test``, ``y_test``, ``evaluated``, ``classes``,
``edges``) when it exists, else computed from
the ARFF files of ``shared/data/hmc/`` (:func:`hmcpgm.datasets.load_hmc_split`) with the benchmark's
first stage (:func:`hmcpgm.applications.clus.run_benchmark`'s: out-of-fold
training scores, the other rows scored by the first stage fitted on all
training rows; minutes) and written there.

Usage (from the repository root)::

    python bench/version_transfer.py --runs Enron_corr.classwise
    python bench/version_transfer.py   # the 10 runs on trees (minutes)
"""

import argparse
import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA, require_data  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
CACHE = Path("/work/cache")
TREES = ("cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "ImCLEF07A", "Enron_corr")
TREE_RUNS = tuple(f"{d}.{f}" for f in ("joint", "classwise") for d in TREES)


def standard_error(values, axis=0):
    """The standard error of the mean of ``values`` along ``axis`` (runs); 0 with fewer than two runs."""
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    return values.std(axis=axis, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(values.mean(axis=axis))


def load_run(name, first_stage, cache_dir, data_dir):
    """Scores, labels, evaluated classes and hierarchy of one run (cached, or made by the benchmark's first stage)."""
    from hmcpgm import Hierarchy

    path = Path(cache_dir) / f"{name}.{first_stage}.npz"
    needed = {"s_train", "y_train", "s_valid", "y_valid", "s_test", "y_test", "evaluated", "classes", "edges"}
    z = _read_complete(path, needed)  # None also for bench/fit_time.py's cache of that name (training rows only)
    if z is None:
        from hmcpgm.applications import first_stage_scores, split_validation
        from hmcpgm.datasets import load_hmc_split

        require_data(data_dir)
        split = load_hmc_split(name, data_dir)
        train, valid, test = split.train, split.valid, split.test
        if valid is None:
            train, valid = split_validation(train, 0.3, 0)
        s_train, (s_valid, s_test) = first_stage_scores(train, (valid, test), first_stage, progress=False)
        h = train.hierarchy
        arrays = {
            "s_train": s_train, "y_train": train.labels, "s_valid": s_valid, "y_valid": valid.labels,
            "s_test": s_test, "y_test": test.labels,
            "evaluated": np.asarray(train.evaluated, bool), "classes": np.asarray(h.classes, dtype=object),
            "edges": np.asarray([(h.classes[p], h.classes[c]) for p, c in h.edge_indices], dtype=object),
        }
        from hmcpgm._atomic import atomic_write

        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, binary=True) as fh:  # a killed run leaves no half-written cache
            np.savez(fh, **arrays)
        z = _read_complete(path, needed)
    h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
    return z, h


def _read_complete(path, needed):
    """Every array of an ``.npz`` file as a dict, or None when the file is missing or lacks one of ``needed``."""
    if not path.exists():
        return None
    with np.load(path, allow_pickle=True) as f:
        return {k: f[k] for k in f.files} if needed <= set(f.files) else None


def auprc(values, labels, hierarchy, evaluated):
    """Micro AU(PRC) (%) of the HierRank ranking, restricted to the evaluated classes (the benchmark's)."""
    from hmcpgm.metrics import average_precision
    from hmcpgm.ranking import hier_rank

    keep = [c for c, e in zip(hierarchy.classes, evaluated) if e]
    ranks = hier_rank(values, hierarchy).restrict(keep).ranks
    return 100 * average_precision(-ranks.astype(float), labels[:, hierarchy.indices(keep)], exclude_roots=False)


def new_rows_auprc(stage, z, hierarchy, evaluated):
    """:func:`auprc` of a fitted stage's values on a run's validation and test rows, as an array of 2."""
    return np.array([auprc(stage.predict_proba(z[f"s_{p}"]), z[f"y_{p}"], hierarchy, evaluated)
                     for p in ("valid", "test")])


def run_arguments(doc, runs=TREE_RUNS, extra=None):
    """The arguments the per-run benches share (``--runs``, ``--cache-dir``, ``--data-dir``); ``args.runs``
    comes back as a list of ``<data set>.<first stage>`` (``all``: the runs of docs/benchmarks.json).
    ``extra(parser)`` adds a script's own options."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--runs", default=",".join(runs),
                        help="comma-separated <data set>.<joint|classwise>, or all (the runs of docs/benchmarks.json)")
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    if args.runs == "all":
        results = json.loads((ROOT / "docs" / "benchmarks.json").read_text())["results"]
        args.runs = [f"{r['dataset']}.{r['first_stage']}" for r in results]
    else:
        args.runs = args.runs.split(",")
    return args


def main():
    from hmcpgm.selection import fit_second_stage_auto

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    print("AU(PRC) points of nbh and full minus indpt, on the rows the choice saw (cv), "
          "the validation rows and the test rows")
    print(f"{'run':<24} {'chosen':<6} {'nbh cv':>7} {'valid':>6} {'test':>6}   {'full cv':>7} {'valid':>6} {'test':>6}")
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        stage, details = fit_second_stage_auto(z["s_train"], z["y_train"], h, allow_empty=True, seed=0,
                                               return_predictions=True)
        found = details["versions"]
        own = found["indpt"]["a"]
        gains, indpt = {}, found["indpt"]["mlpr"]  # indpt: every row, in order
        for version, d in found.items():
            fitted = dataclasses.replace(stage, version=version, a=d["a"], engine=d["engine"],
                                         own=None if version == "indpt" else own, consistency="hierrank")
            y_rows = z["y_train"][d["rows"]]
            gains[version] = np.array([  # cv: minus indpt on the same rows
                auprc(d["mlpr"], y_rows, h, ev) - auprc(indpt[d["rows"]], y_rows, h, ev),
                auprc(fitted.predict_proba(z["s_valid"]), z["y_valid"], h, ev),
                auprc(fitted.predict_proba(z["s_test"]), z["y_test"], h, ev),
            ])
        cells = []
        for version in ("nbh", "full"):
            diff = gains[version] - gains["indpt"] * [0, 1, 1] if version in gains else np.full(3, np.nan)
            cells.append(" ".join(f"{x:+{w}.2f}" for x, w in zip(diff, (7, 6, 6))))
        print(f"{run:<24} {stage.version:<6} {cells[0]}   {cells[1]}", flush=True)


if __name__ == "__main__":
    main()
