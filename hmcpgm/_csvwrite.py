"""Writing a DataFrame as CSV text, byte for byte as ``DataFrame.to_csv(index=False)`` writes it, about twice as fast.

pandas formats a float column through ``ndarray.astype(str)``, which is slower than
Python's own ``repr`` of the same floats; both give the shortest string that reads
back as the same float (numpy's ``astype(str)`` and ``repr`` agree on every float64,
see tests/test_io.py). The matrices hmcpgm writes (mLPRs, decisions: objects x
classes, an id column first) are mostly float64 cells, and writing them was most of
``hmcpgm predict``'s time (``python bench/csv_writing.py``). Here runs of adjacent
float64 columns are formatted a row at a time, with ``repr``; other columns of
integers, booleans or strings are formatted as pandas formats them (``str``;
strings quoted as the csv module's QUOTE_MINIMAL quotes a field of a row of several
fields). A frame with any other column (float32, categories, dates, objects that
are not all strings, ...), with one column only or with a column name that is not a
string is written by pandas itself, and so is any file that is not a text file.
"""

import csv
import io
import os
import re

import numpy as np

__all__ = ["write_csv"]

_CELLS = 1 << 20  # cells formatted at a time: the text of one piece stays small beside the frame


def _quoted_characters():
    """The characters that make the csv module quote a field (QUOTE_MINIMAL, pandas' line terminator): asked of
    the module itself, whose rule for ``\r`` has changed between Python versions."""
    found = []
    for ch in ',"\r\n\t ':
        out = io.StringIO()
        csv.writer(out, lineterminator=os.linesep).writerow(["a" + ch, "b"])
        if out.getvalue().startswith('"'):
            found.append(ch)
    return found


_NEEDS_QUOTES = re.compile("[" + re.escape("".join(_quoted_characters())) + "]")


def write_csv(frame, out, *, header=True, float_format=None):
    """Write ``frame`` to the text file ``out`` as ``frame.to_csv(out, index=False, header=header,
    float_format=float_format)`` does, but for the quotes of a header name that holds a tab or ';' (or a lone
    name that holds a space), which pandas leaves bare and :func:`hmcpgm.io.read_header` would split.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows; the index is not written.
    out : file object
        Written into, from where it stands; anything but a text file (a binary or
        compressed file, say) is written by pandas.
    header : bool
        Write the column names first.
    float_format : str, optional
        A format for the floats (``"%.6g"``, say): such a frame is written by pandas.
    """
    if header and _header_quoted(frame.columns):  # names read_header would split at a tab, ';' or space
        if not isinstance(out, io.TextIOBase):
            frame.to_csv(out, index=False, header=True, float_format=float_format, quoting=csv.QUOTE_NONNUMERIC)
            return
        out.write(",".join(_quoted(str(c)) for c in frame.columns) + os.linesep)
        header = False
    fast = isinstance(out, io.TextIOBase) and float_format is None  # a binary or other file: pandas knows it
    runs = _runs(frame) if fast else None
    if runs is None:
        frame.to_csv(out, index=False, header=header, float_format=float_format)
        return
    end = os.linesep  # pandas' default line terminator
    if header:
        csv.writer(out, lineterminator=end).writerow([str(c) for c in frame.columns])
    step = max(1, _CELLS // frame.shape[1])
    for start in range(0, len(frame), step):
        parts = [_format_run(frame.iloc[start:start + step, a:b], kind) for a, b, kind in runs]
        rows = parts[0] if len(parts) == 1 else map(",".join, zip(*parts))
        out.write(end.join(rows) + end)


def _header_quoted(columns):
    """Whether a header needs more quotes than pandas gives it: :func:`hmcpgm.io.read_header` takes the one of
    tab, comma and ';' outside quotes that splits the line most as the delimiter (a lone ``x;y`` is two
    fields), and a lone name that holds spaces for several fields."""
    names = [str(c) for c in columns]
    return any("\t" in n or ";" in n for n in names) or (len(names) == 1 and len(names[0].split()) > 1)


def _quoted(name):
    """``name`` in double quotes (its own doubled) when it holds a tab, ';', a space, a line break or what csv
    quotes."""
    if _NEEDS_QUOTES.search(name) or any(ch in name for ch in "\t; \r\n"):
        return '"' + name.replace('"', '""') + '"'
    return name


def _runs(frame):
    """``(first, stop, kind)`` for each run of adjacent columns of one kind, or None where pandas must write."""
    from pandas import StringDtype

    def is_text(column):  # pandas 3 stores strings as str (a StringDtype), pandas 2 as objects
        dtype = column.dtype
        held = isinstance(dtype, StringDtype) or isinstance(dtype, np.dtype) and dtype.kind == "O"
        return held and all(type(v) is str for v in column.to_numpy())  # no missing value, no other object

    if frame.shape[1] < 2 or not all(type(c) is str for c in frame.columns):  # pandas quotes a lone "" field
        return None
    kinds = []
    for _, column in frame.items():
        dtype = column.dtype
        if dtype == np.float64:
            kinds.append("float")
        elif isinstance(dtype, np.dtype) and dtype.kind in "iub":
            kinds.append(dtype.str)  # one run per dtype: to_numpy() of mixed dtypes would cast
        elif is_text(column):
            kinds.append("text")
        else:
            return None
    runs, first = [], 0
    for k in range(1, len(kinds) + 1):
        if k == len(kinds) or kinds[k] != kinds[first] or kinds[k] == "text":
            runs.append((first, k, kinds[first]))
            first = k
    return runs


def _format_run(block, kind):
    """One string per row of ``block``, its cells comma separated as pandas writes them; the columns are of one
    kind: ``"float"`` (float64), ``"text"`` (one column of strings) or the ``dtype.str`` of integers or booleans."""
    if kind == "text":
        return [f'"{v.replace(chr(34), chr(34) * 2)}"' if _NEEDS_QUOTES.search(v) else v
                for v in block.iloc[:, 0].to_numpy()]
    values = block.to_numpy()
    text = [",".join(map(repr if kind == "float" else str, row)) for row in values.tolist()]
    if kind == "float" and np.isnan(values).any():  # pandas writes a NaN as an empty field; repr gives "nan"
        text = [row.replace("nan", "") for row in text]
    return text
