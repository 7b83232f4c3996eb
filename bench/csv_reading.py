"""Reading a large score CSV: hmcpgm.io.read_matrix beside pandas.read_csv on the same file.

Usage (from the repository root)::

    python bench/csv_reading.py                 # 20,000 objects x 200 classes (about 77 MB)
    python bench/csv_reading.py --objects 2000  # a quick run
    python bench/csv_reading.py --objects 1625 --classes 4125   # cellcycle_GO's shape

read_matrix does more than pandas' reader (header checks, finite and column checks,
reordering columns to the hierarchy), so its time is printed as a ratio to
pandas.read_csv's, best of three runs each, measured in this one run.
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def best_of(n, fn):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    import pandas as pd

    from hmcpgm import Hierarchy
    from hmcpgm.io import read_matrix, write_matrix

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--classes", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None] + [int(rng.integers(0, k)) for k in range(1, args.classes)])
    values = rng.random((args.objects, args.classes))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "scores.csv"
        write_matrix(path, values, h, ids=[f"obj{i}" for i in range(args.objects)], id_column="object")
        size = path.stat().st_size / 1e6
        t_pandas = best_of(3, lambda: pd.read_csv(path))
        t_ours = best_of(3, lambda: read_matrix(path, h, "scores", id_column="object"))
        _, again = read_matrix(path, h, "scores", id_column="object")
        assert np.array_equal(again, values)
    print(f"{args.objects} objects x {args.classes} classes, {size:.0f} MB CSV")
    print(f"pandas.read_csv        {t_pandas:8.3f} s")
    print(f"hmcpgm read_matrix     {t_ours:8.3f} s   ratio {t_ours / t_pandas:.2f}x pandas")


if __name__ == "__main__":
    main()
