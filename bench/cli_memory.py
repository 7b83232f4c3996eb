"""Peak resident memory of chunked ``hmcpgm predict`` and ``hmcpgm rank`` against the input size.

Usage (from the repository root)::

    python bench/cli_memory.py                                  # 10^4 .. 2 x 10^5 objects x 499 classes
    python bench/cli_memory.py --classes 99 --sizes 10000 50000 --chunk-size 5000

For each size, a Parquet file of that many objects (one row group, as
``pandas.DataFrame.to_parquet`` writes it) of first-stage scores is written for a
random 499-class tree (a model fitted on 2,000 synthetic training objects), then
``python -m hmcpgm predict MODEL SCORES -o MLPR.parquet --chunk-size N`` and
``python -m hmcpgm rank MLPR.parquet MODEL -o RANKING.parquet --chunk-size N --fdr 0.1``
run under ``/usr/bin/time -v``; its "Maximum resident set size" is printed in MB.
Peak memory should follow the chunk size, not the input size.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's hmcpgm

ROOT = Path(__file__).resolve().parents[1]


def _model(folder, n_classes, seed):
    from hmcpgm import MLPR, Hierarchy
    from hmcpgm.persist import save_model

    rng = np.random.default_rng(seed)
    parents = [None] + [int(rng.integers(0, j)) for j in range(1, n_classes)]
    h = Hierarchy.from_parents(parents)
    y = np.zeros((2000, n_classes), dtype=np.int8)
    y[:, 0] = rng.uniform(size=2000) < 0.9
    for j in range(1, n_classes):
        y[:, j] = y[:, parents[j]] & (rng.uniform(size=2000) < 0.6)
    y[:n_classes, :] = 0
    for j in range(n_classes):  # every class has a positive and a negative
        k = j
        while k is not None:
            y[j, k] = 1
            k = parents[k]
    s = rng.normal(1.5 * y, 1.0)
    model = MLPR(hierarchy=h, version="full", score_model="lpr", tempering=None, recalibrate=False).fit(s, y)
    save_model(model, folder / "model.npz")
    return h


def _scores(path, h, n, seed):
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(0.5, 1.0, size=(n, h.n_classes)), columns=[str(c) for c in h.classes])
    frame.to_parquet(path, index=False)


def _peak_mb(args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "hmcpgm", *map(str, args), "--quiet"],
                         env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(run.stderr[-2000:])
    kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    return kb / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, default=499)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000, 200_000])
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        h = _model(folder, args.classes, args.seed)
        print(f"{args.classes} classes, --chunk-size {args.chunk_size}; peak resident memory (MB)")
        print(f"{'objects':>8} {'predict':>9} {'rank --fdr':>11}")
        for n in args.sizes:
            scores = folder / f"scores{n}.parquet"
            _scores(scores, h, n, args.seed + n)
            mlpr, ranking = folder / "mlpr.parquet", folder / "ranking.parquet"
            predict = _peak_mb(["predict", folder / "model.npz", scores, "-o", mlpr, "--chunk-size", args.chunk_size])
            rank = _peak_mb(["rank", mlpr, folder / "model.npz", "-o", ranking, "--chunk-size", args.chunk_size,
                             "--fdr", "0.1"])
            print(f"{n:>8} {predict:>9.0f} {rank:>11.0f}", flush=True)
            for p in (scores, mlpr, ranking):
                p.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
