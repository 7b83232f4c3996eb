"""Reading and writing the plain files a command-line user works with.

* a **hierarchy file**: one edge a line, ``parent,child`` (comma or tab
  separated, an optional ``parent,child`` header, ``#`` comments); a line with a
  single name adds a class with no parent;
* **matrix files**: CSV with a header of class names, one row per object,
  optionally with an identifier column.

Class names read from files are strings.
"""

import csv
from pathlib import Path

import numpy as np

from .exceptions import HierarchyError, InputError
from ._util import repeated
from .hierarchy import Hierarchy

__all__ = ["read_hierarchy", "write_hierarchy", "read_matrix", "write_matrix"]


def _sniff_delimiter(first_line, path):
    if "\t" in first_line:
        return "\t"
    if "," in first_line:
        return ","
    if ";" in first_line:
        return ";"
    if len(first_line.split()) > 1:
        raise HierarchyError(
            f"{path}: cannot tell the delimiter; expected 'parent,child' or 'parent<TAB>child' lines, "
            f"got {first_line!r}"
        )
    return ","


def read_hierarchy(path):
    """Read a hierarchy from an edge-list file.

    Parameters
    ----------
    path : str or Path
        CSV or TSV, one ``parent,child`` edge a line. A header ``parent,child`` is
        skipped; blank lines and lines starting with ``#`` are ignored; a line with
        one name declares a class with no parent.

    Returns
    -------
    Hierarchy
        Classes in order of first appearance.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "h.csv")
    ...     _ = open(p, "w").write("parent,child\\nA,B\\nA,C\\nD\\n")
    ...     read_hierarchy(p).classes
    ('A', 'B', 'C', 'D')
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"hierarchy file {str(path)!r} does not exist")
    with path.open(newline="", encoding="utf-8") as fh:
        lines = [(i + 1, line) for i, line in enumerate(fh.read().splitlines())]
    lines = [(i, line) for i, line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise HierarchyError(f"{path}: the hierarchy file has no edges")
    delimiter = _sniff_delimiter(lines[0][1], path)
    edges, classes = [], {}
    for number, row in zip((i for i, _ in lines), csv.reader((l for _, l in lines), delimiter=delimiter)):
        row = [field.strip() for field in row]
        if number == lines[0][0] and [f.lower() for f in row] == ["parent", "child"]:
            continue
        if len(row) == 1 or (len(row) == 2 and row[0] == ""):
            classes.setdefault(row[-1], None)
            continue
        if len(row) != 2 or not row[0] or not row[1]:
            raise HierarchyError(
                f"{path}, line {number}: expected 'parent{delimiter}child', got {delimiter.join(row)!r}"
            )
        classes.setdefault(row[0], None)
        classes.setdefault(row[1], None)
        edges.append((row[0], row[1]))
    try:
        return Hierarchy.from_edges(edges, classes=list(classes))
    except HierarchyError as exc:
        raise HierarchyError(f"{path}: {exc}") from None


def write_hierarchy(hierarchy, path):
    """Write ``hierarchy`` as a ``parent,child`` CSV that :func:`read_hierarchy` reads back."""
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["parent", "child"])
        for k in hierarchy.root_indices:
            if len(hierarchy.child_indices[k]) == 0:
                writer.writerow([hierarchy.classes[k]])
        writer.writerows(hierarchy.edges)


def read_matrix(path, hierarchy, name, *, id_column=None):
    """Read a CSV whose header names classes; return ``(ids, matrix)``.

    Columns are put in ``hierarchy.classes`` order. ``id_column`` names a column of
    object identifiers that is carried through (default: row numbers 0..M-1).
    Missing or unknown class columns and non-numeric, NaN or infinite values are
    errors that name the file.
    """
    import pandas as pd

    from ._validation import class_matrix

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{name} file {str(path)!r} does not exist")
    try:
        frame = pd.read_csv(path, sep=None, engine="python", dtype=str)
    except Exception as exc:  # pandas raises many kinds
        raise InputError(f"{name} file {path}: cannot read it as CSV ({exc})") from None
    header = pd.read_csv(path, sep=None, engine="python", header=None, nrows=1, dtype=str).iloc[0].tolist()
    if len(set(header)) != len(header):  # pandas would rename the second 'A' to 'A.1'
        dup = list(dict.fromkeys(repeated(header)))
        raise InputError(f"{name} file {path}: the header names a column twice: {dup}")
    if id_column is not None:
        if id_column not in frame.columns:
            raise InputError(f"{name} file {path}: no id column {id_column!r} (columns: {list(frame.columns)[:5]}...)")
        ids = frame.pop(id_column).to_numpy()
    else:
        ids = np.arange(len(frame))
    numeric = frame.apply(pd.to_numeric, errors="coerce")
    bad = numeric.isna() & frame.notna()  # text that is not a number; empty cells become NaN below
    if bad.to_numpy().any():
        r, c = np.argwhere(bad.to_numpy())[0]
        raise InputError(
            f"{name} file {path}: row {r + 1}, column {frame.columns[c]!r} holds {frame.iat[r, c]!r}, "
            "not a number"
        )
    nonfinite = ~np.isfinite(numeric.to_numpy(dtype=float))
    if nonfinite.any():  # checked here to number rows from 1 like the message above
        r, c = np.argwhere(nonfinite)[0]
        cell = frame.iat[r, c]
        what = "is empty or NaN" if pd.isna(cell) else f"holds {cell!r}"
        raise InputError(
            f"{name} file {path}: row {r + 1}, column {frame.columns[c]!r} {what}; values must be finite "
            f"numbers ({int(nonfinite.sum())} cells are not)"
        )
    try:
        matrix = class_matrix(numeric, hierarchy, name)
    except InputError as exc:
        raise InputError(f"{name} file {path}: {exc}") from None
    return ids, matrix


def write_matrix(path, matrix, hierarchy, *, ids=None, id_column="id"):
    """Write an (M, K) matrix as CSV with a header of class names."""
    import pandas as pd

    frame = pd.DataFrame(np.asarray(matrix), columns=[str(c) for c in hierarchy.classes])
    if ids is not None:
        frame.insert(0, id_column, ids)
    frame.to_csv(path, index=False)
