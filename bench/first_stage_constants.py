"""Where the class-wise first stage scores a constant: (data set, class, fold) cases of the benchmark data.

A class whose training labels are all 0 (or all 1) in a fold of the out-of-fold
first stage, or on all training rows (the refitted model that scores the
validation and test rows), cannot be fitted and gets a constant score. This
counts those cases on the benchmark's own folds (``KFold(5, shuffle=True,
random_state=0)`` of the training rows, after the seeded 30 % validation carve
of the data sets without a validation file), prints the constant the class-wise
(logistic, ``decision_function``) first stage gives each
(:func:`hmcpgm.first_stage._scorer.constant_scores`), and, when
``--cache-dir`` holds the benchmark's class-wise scores, checks that the cached
out-of-fold scores hold the old constants exactly on those rows (0.0, and 1.0 for
a class all positive in the fold).

Usage (from the repository root)::

    python bench/first_stage_constants.py [--cache-dir /work/cache]
"""

import argparse
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA
SETS = ("cellcycle_FUN", "eisen_FUN", "gasch1_FUN", "ImCLEF07A", "Enron_corr", "cellcycle_GO", "eisen_GO",
        "gasch1_GO")


def main():
    from sklearn.model_selection import KFold

    from hmcpgm.applications import split_validation
    from hmcpgm.datasets import load_hmc_split

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    total = {"fold_none": 0, "fold_all": 0, "refit_none": 0, "refit_all": 0, "rows": 0, "held_out_positive": 0}
    print("data set         K  train  (class, fold) no pos / all pos  classes  rows   refit no pos / all pos  "
          "new constant (no pos, folds)  cached scores")
    for name in SETS:
        split = load_hmc_split(name, args.data_dir)
        train = split.train if split.valid is not None else split_validation(split.train, 0.3, args.seed)[0]
        y = np.asarray(train.labels)
        m, k = y.shape
        none = all_ = rows = 0
        classes, lows, odd = set(), [], []
        held_pos = 0  # (class, fold) cases with no positive to train on but a positive held out
        for tr, te in KFold(args.folds, shuffle=True, random_state=args.seed).split(y):
            p = y[tr].sum(axis=0)
            zero, full = p == 0, p == len(tr)
            none, all_ = none + int(zero.sum()), all_ + int(full.sum())
            held_pos += int((zero & (y[te].sum(axis=0) > 0)).sum())
            hit = np.flatnonzero(zero | full)
            classes.update(hit.tolist())
            rows += len(te) * hit.size
            if zero.any():
                lows.append(float(np.log(0.5 / (len(tr) + 0.5))))
            odd.append((te, hit, full[hit].astype(float)))  # the old constants: 0.0, or 1.0 for all positive
        p_all = y.sum(axis=0)
        r_none, r_all = int((p_all == 0).sum()), int((p_all == m).sum())
        check, below = "", ""
        if args.cache_dir is not None and (args.cache_dir / f"{name}.classwise.npz").exists():
            z = np.load(args.cache_dir / f"{name}.classwise.npz", allow_pickle=True)
            s = z["s_train"]
            ok = s.shape == y.shape and np.array_equal(z["y_train"], y) and all(
                np.all(s[np.ix_(te, hit)] == old) for te, hit, old in odd if hit.size)
            check = "old 0.0 / 1.0 there" if ok else "MISMATCH"
            # classes fitted in some folds and constant (no positive) in others: where the fitted negatives'
            # scores lie against the old constant 0.0 and the new one
            mixed = np.zeros(y.shape, bool)
            for te, hit, old in odd:
                mixed[np.ix_(te, hit[old == 0])] = True
            cols = np.flatnonzero(mixed.any(axis=0) & ~mixed.all(axis=0))
            neg = ~mixed[:, cols] & (y[:, cols] == 0)
            fitted = s[:, cols][neg]
            if fitted.size:
                below = (f"fitted negatives of {cols.size} such classes below 0.0: {np.mean(fitted < 0):.1%}, "
                         f"below the new constant: {np.mean(fitted < max(lows)):.1%}")
        low = f"{min(lows):.2f} .. {max(lows):.2f}" if lows else "-"
        print(f"{name:15s} {k:3d} {m:6d}  {none:14d} / {all_:<7d}  {len(classes):7d}  {rows:5d}  "
              f"{r_none:10d} / {r_all:<7d}  {low:>28s}  {check}")
        print(f"    no positive to train on but one held out: {held_pos} (class, fold) cases. {below}")
        for key, v in (("fold_none", none), ("fold_all", all_), ("refit_none", r_none), ("refit_all", r_all),
                       ("rows", rows), ("held_out_positive", held_pos)):
            total[key] += v
    print("total:", total)


if __name__ == "__main__":
    main()
