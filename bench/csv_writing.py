"""Writing a large value matrix as CSV: hmcpgm.io.write_matrix beside pandas.DataFrame.to_csv, the same bytes.

Usage (from the repository root)::

    python bench/csv_writing.py                  # 20,000 objects x 200 classes (about 77 MB)
    python bench/csv_writing.py --objects 2000   # a quick run
    python bench/csv_writing.py --objects 1625 --classes 4125   # cellcycle_GO's shape

write_matrix (and the chunked writer of ``hmcpgm predict`` and ``hmcpgm rank``) formats
float cells with Python's ``repr`` instead of pandas' ``astype(str)``
(``hmcpgm/_csvwrite.py``); the files are the same byte for byte, which the script
checks. Times are the best of three runs each, measured in this one run; the ratio is
pandas' time over write_matrix's.
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np
from bench_metrics import best_of  # bench/ is on sys.path when a script runs


def main():
    import pandas as pd

    from hmcpgm import Hierarchy
    from hmcpgm.io import write_matrix

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--classes", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    h = Hierarchy.from_parents([None] + [int(rng.integers(0, k)) for k in range(1, args.classes)])
    values = rng.random((args.objects, args.classes))
    ids = [f"obj{i}" for i in range(args.objects)]
    frame = pd.DataFrame(values, columns=[str(c) for c in h.classes])
    frame.insert(0, "object", ids)
    with tempfile.TemporaryDirectory() as d:
        ours, theirs = Path(d) / "ours.csv", Path(d) / "pandas.csv"
        t_pandas, _ = best_of(lambda: frame.to_csv(theirs, index=False))
        t_ours, _ = best_of(lambda: write_matrix(ours, values, h, ids=ids, id_column="object"))
        same = ours.read_bytes() == theirs.read_bytes()
        size = ours.stat().st_size / 1e6
    print(f"{args.objects} objects x {args.classes} classes, {size:.0f} MB CSV")
    print(f"pandas DataFrame.to_csv   {t_pandas:8.3f} s")
    print(f"hmcpgm write_matrix       {t_ours:8.3f} s   {t_pandas / t_ours:.2f}x faster; same bytes: {same}")
    if not same:
        raise SystemExit("write_matrix's file differs from pandas'")


if __name__ == "__main__":
    main()
