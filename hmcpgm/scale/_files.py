"""Matrix and ranking files at scale: CSV or Parquet (by suffix), read and written in chunks.

A matrix file has one column per class (named by the class) and optionally an id
column, as :func:`hmcpgm.io.read_matrix` reads it; every cell is checked as
there, and messages number rows as the whole file has them. Parquet needs pyarrow
(``pip install "hmcpgm[scale]"``).
"""

import contextlib
from collections import deque
from pathlib import Path

import numpy as np

from .._arrays import count
from .._atomic import AtomicFile, check_distinct, commit_all, name_output
from .._csvwrite import write_csv
from ..exceptions import InputError
from ..io import PARQUET, check_output, frame_matrix, matrix_frame, matrix_layout, read_matrix
from ..ranking._ranking import id_column_name
from ._execute import import_optional
from ._pipeline import BLOCK_CELLS, predict_stream, progress_bar, rank_stream

__all__ = ["read_matrix_chunks", "read_matrix_file", "TableWriter", "CafaWriter", "matrix_frame", "predict_files",
           "rank_files", "is_parquet", "DEFAULT_CHUNK_SIZE"]

#: Objects per chunk of ``hmcpgm predict`` when no ``--chunk-size`` is given: memory stays bounded on any file.
DEFAULT_CHUNK_SIZE = 2000


def is_parquet(path):
    """True when ``path`` names a Parquet file (``.parquet`` or ``.pq``)."""
    return Path(path).suffix.lower() in PARQUET


def _parquet(what):
    return import_optional("pyarrow.parquet", f"reading and writing Parquet files ({what})")


def read_matrix_chunks(path, hierarchy, name, *, chunk_size=None, id_column=None):
    """Read a CSV or Parquet matrix file ``chunk_size`` rows at a time.

    Parameters
    ----------
    path : str or Path
        ``.parquet`` / ``.pq`` for Parquet, anything else CSV (as
        :func:`hmcpgm.io.read_matrix` reads it).
    hierarchy : Hierarchy
        Its classes fix the column order (columns matched by name).
    name : str
        What the file holds, for messages (``"scores"``).
    chunk_size : int, optional
        Rows per chunk (default: the whole file at once).
    id_column : str, optional
        A column of object identifiers (strings, each once in the whole file).

    Yields
    ------
    ids : ndarray of str or None
    values : ndarray of float, shape (m, K)
    """
    if chunk_size is not None:
        chunk_size = count(chunk_size, "chunk_size", minimum=1)
    if is_parquet(path):
        blocks, layout = _parquet_frames(path, hierarchy, name, chunk_size, id_column)
    else:
        blocks, layout = _csv_frames(path, hierarchy, name, chunk_size, id_column)
    seen, first_row = {}, 0
    for frame in blocks:
        if len(frame) == 0:  # a header-only file: pandas gives its columns no numeric dtype; refused below
            continue
        ids, values = frame_matrix(frame, layout, first_row=first_row)
        if ids is not None:
            for i, key in enumerate(ids):
                if key in seen:
                    raise layout.repeated_id(key, seen[key], first_row + i)
                seen[key] = first_row + i
        first_row += len(values)
        yield ids, values
    if first_row == 0:
        raise InputError(f"{layout.what} {layout.path} has no data rows, only a header")


def _csv_frames(path, hierarchy, name, chunk_size, id_column):
    import pandas as pd

    layout = matrix_layout(path, hierarchy, name, id_column=id_column)

    def frames():
        try:
            layout.check_first_line()  # a first row with a field too many: see width_error
            reader = pd.read_csv(layout.path, chunksize=chunk_size or 1 << 62, **layout.csv_options())
            with reader:
                yield from reader
        except UnicodeDecodeError:
            read_matrix(layout.path, hierarchy, name, id_column=id_column)  # raises the one-line error
            raise
        except pd.errors.ParserError as exc:
            raise layout.parser_error(exc) from None

    return frames(), layout


def _parquet_frames(path, hierarchy, name, chunk_size, id_column):
    pq = _parquet(path)
    import pyarrow as pa

    what = f"{name} file"
    if Path(path).is_file():
        try:
            source = pq.ParquetFile(path)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{what} {path} is not a Parquet file ({exc})") from None
        header = list(source.schema_arrow.names)
    else:
        header = []
    layout = matrix_layout(path, hierarchy, name, id_column=id_column, header=header)

    def frames():
        size = chunk_size or max(source.metadata.num_rows, 1)
        numeric = all(_is_number(source.schema_arrow.field(c).type) for c in layout.class_columns)
        for g in range(source.num_row_groups):
            rows = source.metadata.row_group(g).num_rows
            if numeric and rows > 1:  # pyarrow decodes a whole row group at once: read it a few columns at a time
                yield from _row_group_by_columns(source, g, rows, size, layout.class_columns, id_column)
                continue
            for batch in source.iter_batches(batch_size=size, row_groups=[g]):
                frame = batch.to_pandas()
                if id_column is not None:
                    frame[id_column] = _text_ids(frame[id_column])
                yield frame

    return frames(), layout


def _is_number(kind):
    import pyarrow as pa

    return pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)


def _text_ids(ids):
    return np.where(ids.isna(), None, ids.astype(str)).astype(object)


def _row_group_by_columns(source, group, rows, size, columns, id_column):
    """The frames of ``size`` rows of one large row group, read a few columns at a time.

    pyarrow decodes every column of a row group at once, so a file written in one
    row group (``DataFrame.to_parquet``) would be held whole in memory. Here the
    class columns are read about half a chunk's worth of cells at a time into a
    temporary file (float64, one column after the other), whose rows are then read
    back ``size`` at a time: memory follows the chunk size, the disk holds the row
    group (plain reads and writes, no memory map, so resident memory stays small).
    """
    import os
    import tempfile

    import pandas as pd

    width = max(1, size * len(columns) // (2 * rows))
    ids = None
    if id_column is not None:
        ids = _text_ids(source.read_row_group(group, columns=[id_column]).column(0).to_pandas())
    with tempfile.TemporaryFile(prefix="hmcpgm-rowgroup-") as fh:
        fd = fh.fileno()
        for start in range(0, len(columns), width):
            block = columns[start:start + width]
            table = source.read_row_group(group, columns=block)
            for j, name in enumerate(block):
                values = np.ascontiguousarray(table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)
                os.pwrite(fd, values.tobytes(), (start + j) * rows * 8)
            del table
        for start in range(0, rows, size):
            m = min(size, rows - start)
            block = np.empty((m, len(columns)))
            for j in range(len(columns)):
                block[:, j] = np.frombuffer(os.pread(fd, m * 8, (j * rows + start) * 8), dtype=np.float64)
            frame = pd.DataFrame(block, columns=columns, copy=False)
            if ids is not None:
                frame.insert(0, id_column, ids[start:start + m])
            yield frame


def read_matrix_file(path, hierarchy, name, *, id_column=None):
    """``(ids, matrix)`` of a whole CSV or Parquet matrix file (see :func:`read_matrix_chunks`).

    Parameters
    ----------
    path : str or Path
        ``.parquet`` / ``.pq`` for Parquet, anything else CSV.
    hierarchy : Hierarchy
        Its classes fix the column order (columns matched by name).
    name : str
        What the file holds, for messages (``"scores"``).
    id_column : str, optional
        A column of object identifiers.

    Returns
    -------
    ids : ndarray of str or None
        None without ``id_column``.
    matrix : ndarray of float, shape (M, K)
        The file's rows, columns in ``hierarchy.classes`` order.
    """
    if not is_parquet(path):
        return read_matrix(path, hierarchy, name, id_column=id_column)
    parts = list(read_matrix_chunks(path, hierarchy, name, id_column=id_column))
    ids = None if parts[0][0] is None else np.concatenate([i for i, _ in parts])
    return ids, np.concatenate([v for _, v in parts])


class _PutInPlace:
    """A writer used as a context manager: :meth:`close` puts its file in place on success, :meth:`abort` on an
    exception leaves the path as it was."""

    def __enter__(self):
        return self

    def __exit__(self, kind, *exc):
        if kind is None:
            self.close()
        else:
            self.abort()

    @contextlib.contextmanager
    def _named_errors(self):
        """A write that fails for want of room (a full disk) names this output."""
        try:
            yield
        except OSError as exc:
            name_output(exc, self.path, None)  # the AtomicFile names its own errors (opening, renaming)
            raise


class TableWriter(_PutInPlace):
    """Write DataFrames one after the other into one CSV or Parquet file (by suffix).

    CSV pieces are appended under one header, as ``DataFrame.to_csv`` writes them
    (so a file written in pieces is the file written at once). Parquet pieces
    become row groups of one file; text columns are stored as strings, object
    columns of integers as int64. The pieces go to a hidden file of a name unique
    to the run beside ``path``, renamed to ``path`` by :meth:`close`; :meth:`abort`
    (or leaving a ``with`` block by an exception) removes it, so a failed run
    leaves no partial output (see :class:`hmcpgm._atomic.AtomicFile`; ``-``, a pipe
    or a device is written through).

    Parameters
    ----------
    path : str or Path
        The file to write: Parquet for ``.parquet`` / ``.pq``, else CSV. Its folder
        must exist; the file is replaced by :meth:`close`.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "t.csv")
    ...     with TableWriter(path) as w:
    ...         w.write(pd.DataFrame({"a": [1, 2]}))
    ...         w.write(pd.DataFrame({"a": [3]}))
    ...     open(path).read().split()
    ['a', '1', '2', '3']
    """

    def __init__(self, path):
        self.path = check_output(path)
        self.parquet = is_parquet(path)
        if self.parquet:
            _parquet(path)
        self._file = None
        self._out = None
        self._header = True
        self.rows = 0

    def write(self, frame):
        """Append the rows of ``frame`` (the same columns each time).

        Parameters
        ----------
        frame : pandas.DataFrame
            The rows to append; its index is not written.
        """
        with self._named_errors():
            if self.parquet:
                import pyarrow as pa

                frame = _arrow_ready(frame)
                if self._out is None:
                    pq = _parquet(self.path)
                    self._schema = pa.Schema.from_pandas(frame, preserve_index=False)
                    self._file = AtomicFile(self.path, binary=True)
                    self._out = pq.ParquetWriter(self._file.file, self._schema)
                self._out.write_table(pa.Table.from_pandas(frame, schema=self._schema, preserve_index=False))
            else:
                if self._out is None:
                    self._file = AtomicFile(self.path)
                    self._out = self._file.file
                write_csv(frame, self._out, header=self._header)  # as DataFrame.to_csv writes it, faster
                self._header = False
        self.rows += len(frame)

    def finish(self):
        """Finish the file (Parquet's footer, flushed and synced) without putting it in place.

        Returns
        -------
        AtomicFile or None
            The file to put in place (None when nothing was written).
        """
        if self._out is not None:
            with self._named_errors():
                if self.parquet:
                    self._out.close()  # writes the footer into the file object, which stays open
            self._out = None
        if self._file is not None:
            self._file.finish()
        return self._file

    def close(self):
        """Finish the file and put it in place."""
        if self.finish() is not None:
            self._file.commit()
            self._file = None

    def abort(self):
        """Drop what was written; ``path`` is left as it was."""
        self._out = None
        if self._file is not None:
            self._file.abort()
            self._file = None


class CafaWriter(_PutInPlace):
    """Write value matrices one after the other as CAFA ``target<TAB>term<TAB>score`` lines of one file.

    The lines go to a hidden file beside ``path``, put in place by :meth:`close`
    and removed by :meth:`abort` (as :class:`TableWriter`), so a file written in
    pieces is the file :func:`hmcpgm.ontology.write_cafa_predictions` writes at once.

    Parameters
    ----------
    path : str or Path
        The text file to write (not Parquet).
    hierarchy : Hierarchy
        Names the terms (columns in ``hierarchy.classes`` order).

    Examples
    --------
    >>> import tempfile, os
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("GO:1", "GO:2")])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "pred.tsv")
    ...     with CafaWriter(path, h) as w:
    ...         w.write([[0.9, 0.25]])
    ...         w.write([[0.5, 0.5]])
    ...     print(open(path).read().replace(chr(9), " "), end="")   # targets numbered across pieces
    1 GO:1 0.9
    1 GO:2 0.25
    2 GO:1 0.5
    2 GO:2 0.5
    """

    def __init__(self, path, hierarchy):
        if is_parquet(path):
            raise InputError(f"CAFA predictions are text lines; {path} names a Parquet file (give another suffix)")
        self.path = check_output(path)
        self.hierarchy = hierarchy
        self._file = None
        self.rows = 0

    def write(self, values, ids=None):
        """Append the lines of ``values`` (M, K), one target per row.

        Parameters
        ----------
        values : array-like of shape (M, K)
            Scores in [0, 1].
        ids : sequence of str, optional
            The targets (default: row numbers from 1, counted over every piece).
        """
        from ..ontology import write_cafa_predictions

        if self._file is None:
            self._file = AtomicFile(self.path)
        if ids is None:
            ids = [str(i) for i in range(self.rows + 1, self.rows + len(values) + 1)]
        with self._named_errors():
            write_cafa_predictions(self._file.file, values, self.hierarchy, ids)
        self.rows += len(values)

    def finish(self):
        """Flush and sync the file without putting it in place.

        Returns
        -------
        AtomicFile
            The file to put in place.
        """
        if self._file is None:
            self._file = AtomicFile(self.path)
        self._file.finish()
        return self._file

    def close(self):
        """Finish the file and put it in place."""
        self.finish().commit()
        self._file = None

    def abort(self):
        """Drop what was written; ``path`` is left as it was."""
        if self._file is not None:
            self._file.abort()
            self._file = None


def _arrow_ready(frame):
    """Object columns as strings, or as int64 when they hold only integers."""
    import pandas as pd

    changed = {}
    for c in frame.columns:
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype):
            kind = pd.api.types.infer_dtype(frame[c], skipna=False)
            changed[c] = frame[c].astype("int64") if kind == "integer" else frame[c].astype(str)
    return frame.assign(**changed) if changed else frame  # numbers are not copied


# ---------------------------------------------------------------------- the two commands
def predict_files(model, scores, output, *, decisions=None, id_column=None, chunk_size=None,
                  scheduler=None, progress=False, calibrated=False, cafa=False):
    """``hmcpgm predict`` on files, chunk by chunk: mLPRs (and decisions) of a scores file.

    Each chunk runs inference once (``model.predict_proba``); its decisions
    (``model.decide``) and recalibrated values come from those mLPRs.

    Parameters
    ----------
    model : MLPR
        Fitted.
    scores, output : str or Path
        CSV or Parquet (by suffix): the scores to read and the mLPRs to write.
    decisions : str or Path, optional
        Also write the model's 0/1 decisions (block mean >= its threshold) here.
    id_column : str, optional
        The scores' id column, carried to the outputs.
    chunk_size : int, optional
        Objects per chunk (default: the whole file at once; the command line
        uses :data:`DEFAULT_CHUNK_SIZE`).
    scheduler : None, "local", str or distributed.Client
        Where the chunks run (see :func:`hmcpgm.scale.rank_stream`).
    progress : bool
        Show a progress bar.
    calibrated : bool
        Write the recalibrated mLPRs (``model.calibrated_proba``) instead of the mLPRs.
    cafa : bool
        Write ``output`` as CAFA ``target term score`` lines (:class:`CafaWriter`)
        instead of a matrix; the decisions stay a matrix.

    Returns
    -------
    (int, int or None)
        The number of objects, and of positive decisions (None without ``decisions``).

    Raises
    ------
    InputError
        ``output`` or ``decisions`` is the scores file (under any spelling), or both name one file.
    """
    check_distinct({"the scores file": scores}, {"output": output, "decisions": decisions})
    h = model.hierarchy_
    writers = [CafaWriter(output, h) if cafa else TableWriter(output)]
    writers += [TableWriter(decisions)] if decisions else []
    ids = deque()

    def blocks():
        for block_ids, values in read_matrix_chunks(scores, h, "scores", chunk_size=chunk_size,
                                                    id_column=id_column):
            ids.append(block_ids)
            yield values

    n, positives = 0, 0
    try:
        for p, d in predict_stream(model, blocks(), scheduler=scheduler, decisions=bool(decisions),
                                   progress=progress, calibrated=calibrated):
            block_ids = ids.popleft()
            if cafa:
                writers[0].write(p, block_ids)
            else:
                writers[0].write(matrix_frame(p, h, ids=block_ids, id_column=id_column or "id"))
            if decisions:
                writers[1].write(matrix_frame(d, h, ids=block_ids, id_column=id_column or "id"))
                positives += int(d.sum())
            n += len(p)
        # -o and --decisions replaced together: both finished (synced) before either is renamed
        commit_all([f for f in (w.finish() for w in writers) if f is not None])
    except BaseException:
        for w in writers:
            w.abort()
        raise
    return n, positives if decisions else None


def rank_files(values, hierarchy, output, *, fdr=None, method="hierrank", id_column=None, chunk_size=None,
               scheduler=None, store=True, batch=1_000_000, progress=False, names=None):
    """``hmcpgm rank`` on files, chunk by chunk: the ranking of every event, and FDR decisions.

    The ranking is written best first, ``batch`` events at a time, merged from the
    chunks' runs (an external merge: memory is bounded by the batch and the chunk).

    Parameters
    ----------
    values : str or Path
        CSV or Parquet matrix of values (mLPRs), one column per class.
    hierarchy : Hierarchy
        Its classes fix the column order (columns matched by name).
    output : str or Path
        CSV or Parquet: one row per event (``rank``, the object's id or row number
        from 1, ``class``, ``value``, ``block_mean`` and, with ``fdr``, ``positive``).
    fdr : float in (0, 1), optional
        Label positive the longest prefix whose estimated FDR is at most ``fdr``.
    method : {"hierrank", "naive"}
        HierRank (``hier_rank`` with ``method="auto"``) or NaiveSort.
    id_column : str, optional
        The values' id column; its name and ids label the objects in ``output``.
    chunk_size : int, optional
        Objects per chunk (default: the whole file at once).
    scheduler : None, "local", str or distributed.Client
        Where the chunks run (see :func:`hmcpgm.scale.rank_stream`).
    store : True, str or Path
        Where the chunks' runs wait (True: a temporary folder), 20 bytes per event.
    batch : int
        Events per piece of the ranking written.
    progress : bool
        Show progress bars.
    names : dict, optional
        Class -> name (e.g. GO term names): written in a ``name`` column after
        ``class`` ("" for a class it does not name).

    Returns
    -------
    (int, Cutoff or None)
        The number of events ranked and the cutoff.

    Raises
    ------
    InputError
        ``output`` is the values file (under any spelling).
    """
    check_distinct({"the values file": values}, {"output": output})
    object_column = id_column_name(id_column, names=names is not None)
    writer = TableWriter(output)
    ids = []

    def blocks():
        step = max(1, BLOCK_CELLS // max(hierarchy.n_classes, 1))  # a ranking of each piece: memory follows it
        for block_ids, block in read_matrix_chunks(values, hierarchy, "values", chunk_size=chunk_size,
                                                   id_column=id_column):
            ids.append(block_ids)
            for start in range(0, len(block), step):
                yield block[start:start + step]

    ranked = rank_stream(blocks(), hierarchy, method="naive" if method == "naive" else "auto",
                         scheduler=scheduler, store=store, progress=progress)
    try:
        low, high = ranked.value_range
        if fdr is not None and ranked.n_events and (low < 0 or high > 1):
            raise InputError(f"fdr needs values that are probabilities (mLPRs in [0, 1]); {values} holds values "
                             f"from {float(low)!r} to {float(high)!r}")
        ranked.index = np.concatenate(ids) if ids and ids[0] is not None else np.arange(1, ranked.n_objects + 1)
        cut = None if fdr is None else ranked.bayes_cutoff(fdr)
        with writer, progress_bar(progress, ranked.n_events, "write", "events") as bar:
            for frame in ranked.iter_frames(batch, positives=None if cut is None else cut.rank):
                if names is not None:
                    frame.insert(list(frame.columns).index("class") + 1, "name",
                                 frame["class"].map(lambda c: names.get(c, "")))
                writer.write(frame.rename(columns={"object": object_column}))
                bar.update(len(frame))
    finally:
        ranked.close()
    return ranked.n_events, cut
