"""Fit time of the default ``MLPR()`` against the paper's fixed model, timed in one run (issue 19, part 4).

For each data set (default cellcycle_FUN and cellcycle_GO) the script takes the
out-of-fold joint first-stage scores of the training rows, fits

- the paper's fixed model: ``MLPR(hierarchy=h, version="full", score_model="lpr",
  tempering=None, recalibrate=False, allow_empty=True)``;
- the default: ``MLPR(hierarchy=h, allow_empty=True)``;

``--repeats`` times each, alternating (after one untimed warm-up fit of the fixed
model, which pays the imports and numba's first loads), and prints the best wall
time of each and their ratio, then the steps of the fastest default fit (its
``second_stage_.seconds``: score models, each version's exponents, the choices,
...), each also in units of the fixed fit. With ``--candidates`` it also times, per candidate
of ``AUTO_CANDIDATES``, one 5-fold ``cross_validated_lpr`` and one
``fit_score_model`` (best of ``--repeats``), and how many fixed-model fits the
candidates' cross-validation alone costs (a floor of the default's fit while it
chooses each class's score model by 5-fold cross-validation). With ``--base`` (a folder holding
an older ``hmcpgm`` package, or a git revision, exported with ``git archive`` by
``bench/_baseline.py``) the same fits (and, with ``--candidates``, the same
candidate timings) are measured in a subprocess on that package, after this
checkout's, so that before and after come from the same run.

Scores: ``<cache-dir>/<data set>.joint.npz`` (arrays ``s_train``, ``y_train``,
``classes``, ``edges``) when it exists, else made there by the benchmark's first
stage (``version_transfer.load_run``: out of fold on the benchmark's training
rows; a data set without a validation file, such as Enron_corr, loses 30% of its
training rows to validation, as in ``bench/benchmarks_table.py``; minutes).

Usage (from the repository root)::

    python bench/fit_time.py
    python bench/fit_time.py --datasets cellcycle_FUN --repeats 3 --candidates
    python bench/fit_time.py --repeats 2 --datasets cellcycle_FUN --base df213cb   # before and after
    git archive <old commit> hmcpgm | tar -x -C /tmp/base   # an older package to compare with
    python bench/fit_time.py --candidates --base /tmp/base
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs
from version_transfer import load_run

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
CACHE = Path("/work/cache")
FIXED = {"version": "full", "score_model": "lpr", "tempering": None, "recalibrate": False}  # the paper's fixed model


def load(name, cache_dir, data_dir):
    """Scores, labels and hierarchy of the training rows of one data set."""
    from hmcpgm import Hierarchy

    path = Path(cache_dir) / f"{name}.joint.npz"
    if path.exists():
        z = np.load(path, allow_pickle=True)
        h = Hierarchy.from_edges([tuple(e) for e in z["edges"]], classes=list(z["classes"]))
        return np.asarray(z["s_train"], float), np.asarray(z["y_train"]), h
    z, h = load_run(name, "joint", cache_dir, data_dir)  # the benchmark's first stage, its run cached
    return np.asarray(z["s_train"], float), np.asarray(z["y_train"]), h


def best_of(func, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


def time_candidates(name, cache_dir, data_dir, repeats):
    """{candidate: (seconds of one cross_validated_lpr, seconds of one fit_score_model)} on one data set."""
    from hmcpgm.likelihood import AUTO_CANDIDATES, cross_validated_lpr, fit_score_model

    s, y, h = load(name, cache_dir, data_dir)
    cross_validated_lpr(s[:200], y[:200], h, AUTO_CANDIDATES, cv=2)  # imports and compiled kernels
    out = {}
    for kind in AUTO_CANDIDATES:
        cv = best_of(lambda kind=kind: cross_validated_lpr(s, y, h, (kind,)), repeats)
        fit = best_of(lambda kind=kind: fit_score_model(s, y, h, kind=kind, allow_empty=True), repeats)
        out[kind] = (cv, fit)
    return out


def time_fits(name, cache_dir, data_dir, repeats):
    from hmcpgm import MLPR

    s, y, h = load(name, cache_dir, data_dir)

    def fixed():
        MLPR(hierarchy=h, allow_empty=True, **FIXED).fit(s, y)

    steps = []

    def default():
        model = MLPR(hierarchy=h, allow_empty=True).fit(s, y)
        steps.append(getattr(getattr(model, "second_stage_", None), "seconds", None))  # older packages: None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed()  # warm-up: imports, numba loads
        t_fixed, t_default = [], []
        for _ in range(repeats):
            t_fixed.append(best_of(fixed, 1))
            t_default.append(best_of(default, 1))
    return min(t_fixed), min(t_default), s.shape, steps[int(np.argmin(t_default))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="cellcycle_FUN,cellcycle_GO")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--candidates", action="store_true", help="also time each candidate score model")
    parser.add_argument("--base", help="an older package's folder, or a git revision: its timings, in a subprocess")
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--candidates-json", action="store_true", help=argparse.SUPPRESS)  # subprocess modes
    parser.add_argument("--fits-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = [d for d in args.datasets.split(",") if d]
    if not (args.candidates_json or args.fits_json):  # this checkout's (the subprocess gets --base's by PYTHONPATH)
        sys.path.insert(0, str(ROOT))
    if args.candidates_json:
        print(json.dumps({n: time_candidates(n, args.cache_dir, args.data_dir, args.repeats) for n in names}))
        return
    if args.fits_json:
        print(json.dumps({n: time_fits(n, args.cache_dir, args.data_dir, args.repeats) for n in names}))
        return
    import hmcpgm

    base = None
    if args.base:
        base = Path(args.base)
        if not (base / "hmcpgm" / "__init__.py").is_file():  # a revision: its package, exported once
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from _baseline import export_baseline

            commit, base = export_baseline(args.base)
            print(f"base {args.base} = {commit[:12]} in {base}")

    def in_base(mode):
        cmd = [sys.executable, str(Path(__file__).resolve()), mode, "--datasets", args.datasets,
               "--repeats", str(args.repeats), "--cache-dir", str(args.cache_dir), "--data-dir", str(args.data_dir)]
        env = {**os.environ, "PYTHONPATH": str(base.resolve())}
        done = subprocess.run(cmd, env=env, cwd=base, capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    print(f"hmcpgm from {Path(hmcpgm.__file__).parent}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'data set':<22}{'rows x classes':>16}{'fixed fit s':>13}{'default fit s':>15}{'ratio':>8}")
    fits = {}
    for name in names:
        fixed, default, shape, _ = fits[name] = time_fits(name, args.cache_dir, args.data_dir, args.repeats)
        print(f"{name:<22}{f'{shape[0]} x {shape[1]}':>16}{fixed:>13.2f}{default:>15.2f}{default / fixed:>8.1f}",
              flush=True)
    if base is not None:
        for name, (fixed, default, shape, _) in in_base("--fits-json").items():
            print(f"{name + ' (base)':<22}{f'{shape[0]} x {shape[1]}':>16}{fixed:>13.2f}{default:>15.2f}"
                  f"{default / fixed:>8.1f}   default fit {default / fits[name][1]:.2f}x faster now", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}")
    for name, (fixed, _, _, steps) in fits.items():  # where the default's time goes, in fixed fits
        if steps:
            print(f"{name}: the fastest default fit's steps, in seconds (in fixed fits): "
                  + ", ".join(f"{k} {v:.2f} ({v / fixed:.1f})" for k, v in steps.items()))
    if not args.candidates:
        return
    rows = {"this": {n: time_candidates(n, args.cache_dir, args.data_dir, args.repeats) for n in names}}
    if base is not None:
        rows["base"] = in_base("--candidates-json")
    print("\nper candidate, seconds of one 5-fold cross_validated_lpr / one fit_score_model (best of "
          f"{args.repeats})")
    for name in names:
        for kind, (cv, fit) in rows["this"][name].items():
            line = f"{name:<15}{kind:<10} this {cv:7.2f} / {fit:5.2f}"
            if "base" in rows:
                b_cv, b_fit = rows["base"][name][kind]
                line += f"   base {b_cv:7.2f} / {b_fit:5.2f}   speed-up {b_cv / cv:5.1f}x / {b_fit / fit:4.1f}x"
            print(line, flush=True)
    # what the default's per-class choice of score model costs before any inference: a floor of its fit
    for name in names:
        cvs = [cv for cv, _ in rows["this"][name].values()]
        print(f"{name}: the {len(cvs)} candidates' 5-fold cross-validation alone takes {sum(cvs):.2f} s, "
              f"{sum(cvs) / fits[name][0]:.1f}x the fixed model's fit; the cheapest candidate's alone "
              f"{min(cvs) / fits[name][0]:.1f}x", flush=True)


if __name__ == "__main__":
    main()
