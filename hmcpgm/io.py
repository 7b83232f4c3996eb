"""Reading and writing the plain files a command-line user works with.

* a **hierarchy file**: one edge a line, ``parent,child`` (comma, tab or semicolon
  separated, an optional ``parent,child`` header, ``#`` comments); a line with a
  single name adds a class with no parent;
* **matrix files**: CSV with a header of class names, one row per object,
  optionally with an identifier column.

Files are UTF-8, with or without the byte-order mark that spreadsheet programs
write; another encoding is refused with a message that says how to save the file.
Names are stripped of surrounding spaces in hierarchy files and headers alike, and
read as strings. Rows are numbered as a user sees them: ``row 1`` is the first
data row under the header, which is line 2 of the file; messages give both.
"""

import csv
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._arrays import first_true
from ._atomic import atomic_write, is_stream
from ._textfile import check_input_file, not_utf8, open_text, plain_text_encoding, utf8_text
from ._util import preview, repeated
from .exceptions import HierarchyError, InputError
from .hierarchy import Hierarchy

__all__ = ["read_hierarchy", "write_hierarchy", "read_matrix", "read_header", "write_matrix", "check_output",
           "MatrixLayout", "matrix_layout", "frame_matrix", "open_text", "utf8_text", "PARQUET"]

_DELIMITERS = ("\t", ",", ";")

#: The cells pandas reads as missing by default (its documented ``na_values``): a class column's such cell is
#: named as empty, with or without an id column (which turns pandas' NA parsing off).
_MISSING = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
            "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]

#: File name suffixes read and written as Parquet (every other name is CSV).
PARQUET = (".parquet", ".pq")


def _text_lines(path, what):
    """The lines of a UTF-8 text file, or a one-line InputError for another encoding."""
    try:
        return path.read_text(encoding=plain_text_encoding(path, what)).splitlines()
    except UnicodeDecodeError as exc:
        raise not_utf8(what, path, exc.object[exc.start], path.read_bytes()[: exc.start].count(b"\n") + 1) \
            from None


def _delimiter(first_line, what, path, error=InputError):
    unquoted = re.sub(r'"[^"]*"', "", first_line)  # a quoted name may hold any delimiter: '"root, A";b'
    found = [d for d in _DELIMITERS if d in unquoted]
    if found:  # the one that splits the line most (a name with a tab in a comma-separated header), tab first
        return max(found, key=unquoted.count)
    if len(unquoted.split()) > 1:
        raise error(
            f"{what} {path}: cannot tell the delimiter of the first line {first_line!r}; separate "
            "fields with commas, tabs or semicolons (a single name that holds a space goes in double quotes)"
        )
    return ","


def read_hierarchy(path):
    """Read a hierarchy from an edge-list file.

    Parameters
    ----------
    path : str or Path
        One ``parent,child`` edge a line (comma, tab or semicolon). A header
        ``parent,child`` is skipped; blank lines and lines starting with ``#`` are
        ignored; a line with one name declares a class (one with neither parent nor
        child, or its place in the class order: its edges may follow).

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
    what = "hierarchy file"
    path = check_input_file(path, what)
    lines = [(i + 1, line) for i, line in enumerate(_text_lines(path, what))]
    lines = [(i, line) for i, line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise HierarchyError(f"{what} {path} has no edges")
    if "\x00" in lines[0][1]:
        raise HierarchyError(f"{what} {path} is not a text file (it holds NUL bytes); expected 'parent,child' lines")
    # from the first line with a delimiter: the first line may be a lone class ("0", then "1<TAB>3"), and a
    # comma guessed from it read every tab-separated edge as one class name
    probe = next((text for _, text in lines if any(d in re.sub(r'"[^"]*"', "", text) for d in _DELIMITERS)),
                 lines[0][1])
    delimiter = _delimiter(probe, what, path, HierarchyError)
    edges, edge_lines, classes, first_line = [], [], {}, {}
    numbers = [i for i, _ in lines]
    for number, row in _csv_rows((text for _, text in lines), delimiter, what, path, numbers, HierarchyError):
        row = [field.strip() for field in row]
        if number == lines[0][0] and [f.lower() for f in row] == ["parent", "child"]:
            continue
        if len(row) == 1 or (len(row) == 2 and row[0] == ""):
            classes.setdefault(row[-1], None)
            continue
        if len(row) != 2 or not row[0] or not row[1]:
            got = delimiter.join(row)
            got = repr(got) if len(got) <= 80 else f"{got[:77]!r}... ({len(row)} fields)"  # a wide matrix file
            raise HierarchyError(f"{what} {path}, line {number}: expected 'parent{delimiter}child', got {got}")
        edge = (row[0], row[1])
        if edge in first_line:
            raise HierarchyError(f"{what} {path}, lines {first_line[edge]} and {number}: the edge {row[0]!r} -> "
                                 f"{row[1]!r} is listed twice")
        first_line[edge] = number
        classes.setdefault(row[0], None)
        classes.setdefault(row[1], None)
        edges.append(edge)
        edge_lines.append(number)
    try:
        return Hierarchy.from_edges(edges, classes=list(classes))
    except HierarchyError as exc:
        raise HierarchyError(f"{what} {path}: {exc}{_cycle_lines(edges, edge_lines)}") from None


def _csv_rows(texts, delimiter, what, path, numbers=None, error=InputError):
    """``(line number, row)`` of ``csv.reader``'s rows of ``texts``; its errors (a field over the csv
    module's size limit) one line naming the line.

    ``numbers``: the file's line number of each text (default: counted from 1).
    """
    reader = csv.reader(texts, delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            row, detail = None, str(exc)
            if "field limit" in detail:
                detail = f"a field is longer than {csv.field_size_limit()} characters (the csv module's limit)"
        number = numbers[reader.line_num - 1] if numbers is not None else reader.line_num
        if row is None:
            raise error(f"{what} {path}, line {number}: {detail}")
        yield number, row


def _blank(row):
    """Whether a ``csv.reader`` row is a blank line (pandas skips them: they are no data row)."""
    return not row or len(row) == 1 and not row[0].strip()


def _cycle_lines(edges, lines):
    """`` (lines 3, 7, 9)``: where the edges of a cycle are, when the edges have one."""
    import networkx as nx

    try:
        cycle = nx.find_cycle(nx.DiGraph(edges))
    except nx.NetworkXNoCycle:
        return ""
    line_of = dict(zip(edges, lines))
    return " (lines " + ", ".join(str(line_of[e]) for e in cycle if e in line_of) + ")"


def write_hierarchy(hierarchy, path):
    """Write ``hierarchy`` as a ``parent,child`` CSV that :func:`read_hierarchy` reads back.

    Parameters
    ----------
    hierarchy : Hierarchy
        Its edges are written one a line, after a line per class with neither parent nor
        child. When these lines would give another class order (the column order of every
        matrix) to :func:`read_hierarchy`, each class is introduced in turn instead (by an
        edge from a parent already named, or to its child that comes next, else alone on
        its line), before the other edges.
    path : str, Path or text file object
        The file written (UTF-8; replaced, all at once, if it exists; ``-`` is
        standard output), or an open file to write into.

    Raises
    ------
    InputError
        Two classes whose names are one text (``1`` and ``"1"``, ``"a"`` and
        ``" a"``: read back as stripped strings, they would be one class), or a
        name that is empty as text.
    """
    if hasattr(path, "write"):
        _write_edges(hierarchy, path)
        return
    with atomic_write(path) as fh:
        _write_edges(hierarchy, fh)


def _write_edges(hierarchy, fh):
    as_text = {}
    for name in hierarchy.classes:  # read_hierarchy reads names back as stripped strings
        text = str(name).strip()
        if not text:
            raise InputError(f"class {name!r} has an empty name as text: read_hierarchy would drop its lines; "
                             "rename it")
        if text in as_text:
            raise InputError(f"classes {as_text[text]!r} and {name!r} are both written {text!r}: read back, they "
                             "would be one class; rename one")
        as_text[text] = name
    plain, quoted = csv.writer(fh), csv.writer(fh, quoting=csv.QUOTE_ALL)

    def write(row):  # a line starting with '#' is a comment to read_hierarchy: quote a name that starts so
        (quoted if str(row[0]).lstrip().startswith("#") else plain).writerow(row)

    plain.writerow(["parent", "child"])
    classes = hierarchy.classes
    rows = [[classes[k]] for k in hierarchy.root_indices if len(hierarchy.child_indices[k]) == 0]
    rows += [list(edge) for edge in hierarchy.edges]
    if tuple(dict.fromkeys(name for row in rows for name in row)) != tuple(classes):
        rows = _rows_in_class_order(hierarchy)  # read back, these rows would give another column order
    for row in rows:
        write(row)


def _rows_in_class_order(hierarchy):
    """Lines whose names first appear in the class order: each class in turn, by an edge from a parent already
    named, else by its edge to the next class when it is that class's parent, else alone on its line; then the
    other edges."""
    classes, parents, seen, rows = hierarchy.classes, hierarchy.parent_indices, set(), []
    k = 0
    while k < len(classes):
        parent = next((p for p in parents[k] if p in seen), None)
        if parent is not None:
            rows.append([classes[parent], classes[k]])
        elif k + 1 < len(classes) and k in parents[k + 1]:  # a root, say, and its first child: one edge
            rows.append([classes[k], classes[k + 1]])
            seen.add(k)
            k += 1
        else:
            rows.append([classes[k]])
        seen.add(k)
        k += 1
    written = {tuple(row) for row in rows if len(row) == 2}
    return rows + [list(edge) for edge in hierarchy.edges if edge not in written]


def _header(path, what, fits=None):
    """The stripped column names of a CSV file and its delimiter.

    ``fits(names)``: whether the names are those expected. When the first delimiter of the
    line does not give such names and another does (a ';' file with a comma in a class
    name), the other is the delimiter.
    """
    with path.open("rb") as fh:
        first = fh.readline()
    try:
        text = first.decode(plain_text_encoding(path, what))
    except UnicodeDecodeError:
        _text_lines(path, what)  # raises the one-line encoding error
        raise
    if "\x00" in text:
        raise InputError(f"{what} {path} is not a text file (it holds NUL bytes); expected a CSV file")
    text = re.split(r"\r\n|\r|\n", text, maxsplit=1)[0]  # CR alone ends a line too (old Mac files)
    if not text.strip():
        raise InputError(f"{what} {path} is empty: expected a header line of class names")
    delimiter = _delimiter(text, what, path)

    def split(d):
        return [name.strip() for name in next(_csv_rows([text], d, what, path))[1]]

    if fits is not None and not fits(split(delimiter)):
        delimiter = next((d for d in _DELIMITERS if d != delimiter and d in text and fits(split(d))), delimiter)
    names = split(delimiter)
    dup = repeated(names)
    if dup:
        raise InputError(f"{what} {path}: the header names a column twice: {preview(dict.fromkeys(dup))}")
    if any(not name for name in names):
        raise InputError(f"{what} {path}: column {names.index('') + 1} of the header has no name")
    return names, delimiter


def read_header(path, what="file"):
    """The column names of a CSV file's header, as :func:`read_matrix` reads them.

    Parameters
    ----------
    path : str or Path
        A CSV file (comma, tab or semicolon separated, UTF-8).
    what : str, default "file"
        What messages call the file.

    Returns
    -------
    list of str
        The stripped names, in file order.

    Raises
    ------
    InputError
        An empty or binary file, a header naming a column twice or leaving one
        unnamed, in one line naming the file.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "s.csv")
    ...     _ = open(p, "w").write("GO:0009987\\n0.5\\n")
    ...     read_header(p)
    ['GO:0009987']
    """
    return _header(check_input_file(path, what), what)[0]


def read_matrix(path, hierarchy, name, *, id_column=None, binary=False, allow_empty=False):
    """Read a CSV whose header names classes; return ``(ids, matrix)``.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV (comma, tab or semicolon separated) with a header of class names.
    hierarchy : Hierarchy
        Its classes fix the column order of the matrix (headers matched by name).
    name : str
        What the file holds (``"scores"``, ``"labels"``), for messages.
    id_column : str, optional
        A column of object identifiers: read as strings, carried through, and
        refused when one repeats or is empty.
    binary : bool
        The cells must be 0 or 1 (labels).
    allow_empty : bool
        Accept a file with a header and no data rows.

    Returns
    -------
    ids : ndarray of str, or None
        None without ``id_column``.
    matrix : ndarray of float, shape (M, K)
        The file's rows, columns in ``hierarchy.classes`` order.

    Raises
    ------
    InputError
        Missing or unknown class columns, non-numeric, empty, NaN or infinite
        cells (named by row and column), a repeated id, another encoding.
    """
    import pandas as pd

    layout = matrix_layout(path, hierarchy, name, id_column=id_column)
    try:
        layout.check_first_line()
        frame = pd.read_csv(layout.path, **layout.csv_options())
    except UnicodeDecodeError:
        _text_lines(layout.path, layout.what)  # raises the one-line encoding error
        raise
    except pd.errors.ParserError as exc:
        raise layout.parser_error(exc) from None
    if not allow_empty and len(frame) == 0:
        raise InputError(f"{layout.what} {layout.path} has no data rows, only a header")
    return frame_matrix(frame, layout, binary=binary)


@dataclass(frozen=True)
class MatrixLayout:
    """Where a matrix file's class columns are: checked once, before any row is read.

    Attributes
    ----------
    path, what : Path, str
        The file, and what messages call it (e.g. ``"scores file"``).
    header, class_columns : list of str
        The file's columns, and those that name classes (all but the id column).
    positions : list of int
        Puts ``class_columns`` in the hierarchy's order.
    id_column, delimiter : str
        The column of object identifiers (or None), and the CSV delimiter.
    lines : bool
        Rows have text line numbers (CSV: row 1 is line 2).
    """

    path: Path
    what: str
    header: list
    class_columns: list
    positions: list
    id_column: str = None
    delimiter: str = ","
    lines: bool = True

    def csv_options(self, **extra):
        """The ``pandas.read_csv`` options that read this CSV file.

        Parameters
        ----------
        **extra
            Further options, which override these.

        Returns
        -------
        dict
            Keyword arguments of ``pandas.read_csv``.
        """
        # index_col=False: a row with one field too many must not turn its first field into an index and
        # shift the others (width_error refuses it)
        options = dict(sep=self.delimiter, header=0, names=self.header, encoding="utf-8-sig", engine="c",
                       index_col=False)
        if self.id_column:  # an id is text as written: 'NA' or 'None' names an object (an empty cell is refused)
            # no NA parsing at all: a class column holding 'NA' or '' is then text, which frame_matrix names
            # as an empty cell, as it would name NaN. na_values per class column cost pandas half of reading
            # a Gene Ontology file (4,125 columns: 4.4 s against 1.2 s, audit26)
            options["dtype"] = {self.id_column: str}
            options["na_filter"] = False
        return {**options, **extra}

    def width_error(self, first_only=False):
        """The error for the first data line whose number of fields is not the header's, or None.

        pandas reads a first row with a field too many as an index and the rest
        shifted (or, with ``index_col=False``, drops the last field with a warning),
        so the first data line is checked before reading, and the others when pandas
        stops on one.

        Parameters
        ----------
        first_only : bool
            Check the first non-blank data line only.

        Returns
        -------
        InputError or None
            The error naming the line and its number of fields, or None when every
            checked line has the header's width (or the file has no text lines).
        """
        if not self.lines:
            return None
        with open(self.path, encoding="utf-8-sig", newline="") as fh:
            reader = _csv_rows(fh, self.delimiter, self.what, self.path)
            next(reader, None)
            for number, row in reader:
                if _blank(row):  # blank lines are skipped
                    continue
                if len(row) != len(self.header):
                    columns = "a class or the id column" if self.id_column else "a class"
                    return InputError(f"{self.what} {self.path}, line {number}: {len(row)} fields, but the "
                                      f"header names {len(self.header)} columns; every column must be {columns}")
                if first_only:
                    return None
        return None

    def check_first_line(self):
        """Refuse a first data line whose number of fields is not the header's (see :meth:`width_error`),
        before pandas reads the file.

        Raises
        ------
        InputError
            Naming the line and its number of fields.
        """
        error = self.width_error(first_only=True)
        if error is not None:
            raise error

    def parser_error(self, exc):
        """The error for pandas' ``ParserError`` ``exc`` on this file: the line of another width, if any.

        Parameters
        ----------
        exc : pandas.errors.ParserError
            What pandas raised.

        Returns
        -------
        InputError
            One line naming the file.
        """
        return self.width_error() or InputError(f"{self.what} {self.path}: cannot read it as CSV "
                                                f"({str(exc).strip()})")

    def repeated_id(self, key, first, second):
        """The error for the id ``key`` found on data rows ``first`` and ``second`` (from 0).

        Parameters
        ----------
        key : str
            The repeated id.
        first, second : int
            The two rows' indices among the data rows, from 0.

        Returns
        -------
        InputError
            One line naming the file, the id column and both rows with their lines.
        """
        return InputError(f"{self.what} {self.path}: the id {key!r} of column {self.id_column!r} repeats "
                          f"({self.row(first)} and {self.row(second)}); ids must name each object once")

    def row(self, r):
        """How a message names data row ``r`` (from 0): ``row 3 (line 4)``, or ``row 3``.

        Parameters
        ----------
        r : int
            The row's index among the data rows, from 0.

        Returns
        -------
        str
            ``row r+1``, with the file line when the file has lines (found by reading
            the file again: blank lines do not count as rows).
        """
        if not self.lines:
            return f"row {r + 1}"
        return f"row {r + 1} (line {self.locate(r)[1]})"

    def locate(self, r):
        """Where data row ``r`` (from 0) is in the file, by reading it again: blank lines are no rows.

        Parameters
        ----------
        r : int
            The row's index among the data rows, from 0.

        Returns
        -------
        (int, int)
            Its record (from 0, the header's 0; every blank line and every quoted
            multi-line record counts one, as ``pandas.read_csv``'s ``skiprows``
            counts them) and the file line it ends on; ``(r + 1, r + 2)`` when the
            file has fewer rows.
        """
        with open(self.path, encoding="utf-8-sig", newline="") as fh:
            reader = enumerate(_csv_rows(fh, self.delimiter, self.what, self.path))
            next(reader, None)
            data_rows = ((record, number) for record, (number, row) in reader if not _blank(row))
            return next(itertools.islice(data_rows, r, None), (r + 1, r + 2))


def matrix_layout(path, hierarchy, name, *, id_column=None, header=None):
    """Check a matrix file's header against the hierarchy; return its :class:`MatrixLayout`.

    Parameters
    ----------
    path : str or Path
        The matrix file.
    hierarchy : Hierarchy
        Its classes must each have a column.
    name : str
        What the file holds (``"scores"``, ``"labels"``), for messages.
    id_column : str, optional
        A column of object identifiers (not a class name).
    header : list of str, optional
        The column names of a file that is not CSV (e.g. Parquet); without it the
        CSV header line of ``path`` is read.

    Returns
    -------
    MatrixLayout
        The checked columns and where they go.
    """
    from ._validation import column_positions

    what = f"{name} file"
    path = check_input_file(path, what)
    delimiter, lines = ",", header is None
    if lines:
        wanted = {str(c) for c in hierarchy.classes}
        header, delimiter = _header(path, what, fits=lambda names: wanted <= set(names))
    if id_column is not None and id_column in {str(c) for c in hierarchy.classes}:
        raise InputError(f"the id column {id_column!r} is the name of a class of the hierarchy; the ids need a "
                         "column of their own")
    if id_column is not None and id_column not in header:
        raise InputError(f"{what} {path}: no id column {id_column!r} (the header has {preview(header)})")
    class_columns = [c for c in header if c != id_column]
    try:  # the columns are matched to the classes before the data are read
        positions = column_positions(class_columns, hierarchy, name)
    except InputError as exc:
        raise InputError(f"{what} {path}: {exc}") from None
    return MatrixLayout(path, what, list(header), class_columns, positions, id_column, delimiter, lines)


def frame_matrix(frame, layout, *, binary=False, first_row=0):
    """``(ids, matrix)`` from a DataFrame of a matrix file's rows, every cell checked.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the file, with its columns (``layout.header``).
    layout : MatrixLayout
        The file's checked columns.
    binary : bool
        The cells must be 0 or 1 (labels).
    first_row : int
        The number (from 0) of the frame's first row in the file, so that
        messages name rows as the file has them when it is read in chunks.

    Returns
    -------
    ids : ndarray of str, or None
        None without an id column.
    matrix : ndarray of float, shape (M, K)
        Columns in the hierarchy's order.
    """
    import pandas as pd

    what, path, class_columns = layout.what, layout.path, layout.class_columns
    if len(frame) == 0:  # a header alone (read_matrix's allow_empty): pandas reads its empty columns as text
        ids = None if layout.id_column is None else np.empty(0, dtype=object)
        return ids, np.zeros((0, len(class_columns)))
    text_columns = [c for c in class_columns if frame[c].dtype.kind not in "fiub"]
    if text_columns:  # text in a column: name the cell
        # the cells that are no finite number in the columns read as numbers (booleans too: True is 1)
        not_finite = {c: ~np.isfinite(frame[c].to_numpy(dtype=float)) for c in class_columns if c not in text_columns}
        if layout.lines:  # the chunk's rows again, as text; blank lines before them count for skiprows
            start = layout.locate(first_row)[0] if first_row else 1
            frame = pd.read_csv(path, **layout.csv_options(dtype=str, keep_default_na=False,
                                                           skiprows=range(1, start), nrows=len(frame)))
        _raise_first_bad_cell(frame.astype(str), text_columns, layout, first_row, not_finite)
    ids = None
    if layout.id_column is not None:  # stripped, as the header's names are
        ids = frame[layout.id_column]
        ids = (ids.str.strip() if pd.api.types.is_string_dtype(ids) else ids).to_numpy(dtype=object)
        _check_ids(ids, layout, first_row)
    values = frame[class_columns].to_numpy(dtype=float)
    bad = first_true(~np.isfinite(values))
    if bad:
        raise InputError(
            f"{what} {path}: {layout.row(first_row + bad[0])}, column {class_columns[bad[1]]!r} is empty, "
            f"NaN or infinite; values must be finite numbers ({int((~np.isfinite(values)).sum())} cells are not)"
        )
    if binary:
        bad = first_true((values != 0) & (values != 1))
        if bad:
            raise InputError(
                f"{what} {path}: {layout.row(first_row + bad[0])}, column {class_columns[bad[1]]!r} holds "
                f"{values[bad]:g}; labels must be 0 or 1"
            )
    return ids, values[:, layout.positions]


def _raise_first_bad_cell(frame, columns, layout, first_row, not_finite):
    """Raise the error of the first bad cell: text that is no number in ``columns`` (the class columns read as
    text), else the first missing or non-finite cell in the file's order (``not_finite``: the other class
    columns' bad cells), else the column's type."""
    import pandas as pd

    missing = sorted({m.lower() for m in _MISSING})
    for c in columns:
        text = frame[c].str.strip()
        numbers = pd.to_numeric(text, errors="coerce")
        bad = numbers.isna() & ~text.str.lower().isin(missing)
        if bad.any():
            r = int(np.flatnonzero(bad.to_numpy())[0])
            cell = frame[c].iat[r]
            raise InputError(
                f"{layout.what} {layout.path}: {layout.row(first_row + r)}, column {c!r} holds "
                f"{cell if len(cell) <= 60 else cell[:60] + '...'!r}, not a number"
            )
    # every text cell is a number or missing by now (a cell of spaces alone is text to pandas, and no number):
    # name the first cell that is missing or not finite, in the file's order, and count them, as the numeric path
    classes = layout.class_columns
    bad = np.column_stack([not_finite[c] if c in not_finite else
                           ~np.isfinite(pd.to_numeric(frame[c].str.strip(), errors="coerce")) for c in classes])
    if bad.any():
        r, j = first_true(bad)
        raise InputError(f"{layout.what} {layout.path}: {layout.row(first_row + r)}, column {classes[j]!r} is empty, "
                         f"NaN or infinite; values must be finite numbers ({int(bad.sum())} cells are not)")
    if not layout.lines:  # a Parquet column of text that reads as numbers: its type is the fault
        raise InputError(f"{layout.what} {layout.path}: column {columns[0]!r} is stored as text, not as numbers; "
                         "store it as a float column")
    raise InputError(f"{layout.what} {layout.path}: column {columns[0]!r} cannot be read as 64-bit numbers "
                     "(e.g. an integer beyond 64 bits); write its values as decimals")


def _check_ids(ids, layout, first_row=0):
    what, path, id_column = layout.what, layout.path, layout.id_column
    empty = np.flatnonzero(np.asarray([not isinstance(i, str) or not i.strip() for i in ids]))
    if len(empty):
        raise InputError(f"{what} {path}: {layout.row(first_row + int(empty[0]))} has no value in the id column "
                         f"{id_column!r}")
    dup = repeated(ids)
    if dup:
        a, b = np.flatnonzero(ids == dup[0])[:2]
        raise layout.repeated_id(dup[0], first_row + int(a), first_row + int(b))


def align_by_id(ids, reference, what, reference_what):
    """Row positions that put ``ids`` in the order of ``reference`` (both without repeats).

    Raises
    ------
    InputError
        When an id of one file is missing from the other.
    """
    position = {i: n for n, i in enumerate(ids)}
    missing = [i for i in reference if i not in position]
    extra = [i for i in ids if i not in set(reference)] if len(ids) != len(reference) or missing else []
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} ids of the {reference_what} are not in the {what} (first: {missing[0]!r})")
        if extra:
            parts.append(f"{len(extra)} ids of the {what} are not in the {reference_what} (first: {extra[0]!r})")
        raise InputError("; ".join(parts) + "; every object needs a row in both files")
    return np.array([position[i] for i in reference], dtype=np.intp)


def write_matrix(path, matrix, hierarchy, *, ids=None, id_column="id", float_format=None):
    """Write an (M, K) matrix as CSV with a header of class names (and an id column first).

    Parameters
    ----------
    path : str, Path or text file object
        The file written (replaced, all at once, only when the whole matrix is
        written; ``-`` is standard output), or an open file to write into.
    matrix : array-like of shape (M, K)
        Columns in ``hierarchy.classes`` order.
    hierarchy : Hierarchy
        Names the columns.
    ids : sequence of str, optional
        Object identifiers, written as the first column.
    id_column : str
        The header of the id column (not a class name).
    float_format : str, optional
        Format of the numbers (``pandas.DataFrame.to_csv``).
    """
    from ._csvwrite import write_csv

    frame = matrix_frame(matrix, hierarchy, ids=ids, id_column=id_column)
    if hasattr(path, "write"):
        write_csv(frame, path, float_format=float_format)
        return
    with atomic_write(path) as fh:
        write_csv(frame, fh, float_format=float_format)


def matrix_frame(matrix, hierarchy, *, ids=None, id_column="id"):
    """The DataFrame that :func:`write_matrix` writes: class columns, ids first."""
    import pandas as pd

    frame = pd.DataFrame(np.asarray(matrix), columns=[str(c) for c in hierarchy.classes])
    if ids is not None:
        if id_column in frame.columns:
            raise InputError(f"the id column {id_column!r} has the name of a class; choose another --id-column")
        frame.insert(0, id_column, ids)
    return frame


def check_output(path, what="output"):
    """Refuse, before any work, an output path whose folder is missing or not writable.

    Parameters
    ----------
    path : str or Path
        The output file.
    what : str
        What the output is called in messages (e.g. an option name).

    Returns
    -------
    Path
        ``path`` as a Path.
    """
    import os

    if is_stream(path):  # "-", a pipe or a device (/dev/null): written through, in no folder of ours
        return Path(path)
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(f"{what} {str(path)!r} is a directory; give a file name")
    if not folder.is_dir():
        raise InputError(f"{what} {str(path)!r}: the folder {str(folder)!r} does not exist")
    if path.is_symlink():  # the file written is the link's target, in the target's folder
        target = Path(os.path.realpath(path))
        if not target.parent.is_dir():
            raise InputError(f"{what} {str(path)!r} is a link to {os.readlink(path)!r}, whose folder "
                             f"{str(target.parent)!r} does not exist")
        folder = target.parent
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"{what} {str(path)!r} cannot be written (no permission)")
    return path
