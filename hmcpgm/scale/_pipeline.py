"""The chunked pipeline: scores -> likelihoods -> mLPR -> per-object HierRank blocks.

Objects are independent until the global merge, so every stage runs on one chunk
of objects at a time, in this process or on a dask cluster, and memory is bounded
by the chunk size (plus the runs kept for the global decisions, on disk if asked).
"""

import time
from dataclasses import dataclass, replace

import numpy as np

from .._arrays import count
from .._validation import check_hierarchy, class_matrix, is_frame
from ..exceptions import InputError
from ..options import RANK_METHODS, check_choice
from ._execute import is_dask_collection, open_client, ordered_map
from ._ranking import ChunkedRanking
from ._runs import RunStore, rank_chunk

__all__ = ["ModelMlpr", "NetworkMlpr", "row_chunks", "rank_stream", "rank_chunks", "rank_model",
           "predict_stream", "predict_proba", "progress_bar"]


# ---------------------------------------------------------------------- values of a chunk
@dataclass(frozen=True)
class ModelMlpr:
    """Chunk of first-stage scores -> its mLPRs, by a fitted :class:`hmcpgm.MLPR`.

    ``ModelMlpr(model)(scores)`` is ``model.predict_proba(scores)`` as an array
    (``model.calibrated_proba(scores)`` with ``calibrated=True``), with the seconds
    it took; ``first_row`` numbers the rows in messages when ``scores`` is a chunk of
    a larger matrix.

    Attributes
    ----------
    model : MLPR
        Fitted; it goes to every worker (picklable).
    calibrated : bool
        Give the recalibrated mLPRs.
    """

    model: object
    calibrated: bool = False

    def __call__(self, scores, first_row=0):
        t0 = time.perf_counter()
        if first_row:  # a later chunk: its bad cells are named by their row in the whole input
            class_matrix(scores, self.model.hierarchy_, "X", first_row=first_row)
        values = self.model.calibrated_proba(scores) if self.calibrated else self.model.predict_proba(scores)
        return np.asarray(values, dtype=np.float64), {"mlpr": time.perf_counter() - t0}


@dataclass(frozen=True)
class NetworkMlpr:
    """Chunk of likelihoods (m, K, 2) -> its mLPRs, by :func:`hmcpgm.mlpr_from_likelihoods`.

    Attributes
    ----------
    network : LabelNetwork
        The network the mLPRs are computed in.
    version, engine : str
        As in :func:`hmcpgm.mlpr_from_likelihoods`.
    options : tuple of (name, value) pairs
        Further keyword options of :func:`hmcpgm.mlpr_from_likelihoods` (a tuple, so
        the object stays hashable).
    """

    network: object
    version: str = "full"
    engine: str = "auto"
    options: tuple = ()

    def __call__(self, likelihoods):
        from ..inference import mlpr_from_likelihoods

        t0 = time.perf_counter()
        p = mlpr_from_likelihoods(self.network, likelihoods, version=self.version, engine=self.engine,
                                  **dict(self.options))
        return p, {"mlpr": time.perf_counter() - t0}


# ---------------------------------------------------------------------- chunks of rows
def row_chunks(X, chunk_size=None):
    """The row blocks of an array, a DataFrame or a dask array, in order.

    Parameters
    ----------
    X : array-like, DataFrame, dask array or dask DataFrame, shape (M, ...)
        The rows to split.
    chunk_size : int, optional
        Rows per block. A dask array is rechunked to it (all columns in one
        block); without it, a dask array keeps its row chunks and anything else is
        one block. A dask DataFrame's blocks are its partitions (no ``chunk_size``).

    Yields
    ------
    block
        ``X[start:start + chunk_size]`` (a dask array's block stays lazy).

    Examples
    --------
    >>> [b.tolist() for b in row_chunks(np.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    if chunk_size is not None:
        chunk_size = count(chunk_size, "chunk_size", minimum=1)
    if is_dask_collection(X) and hasattr(X, "columns"):  # a dask DataFrame: its partitions are the chunks
        if chunk_size is not None:
            raise InputError("a dask DataFrame is chunked by its partitions: repartition it instead of passing "
                             f"chunk_size={chunk_size}")
        yield from (X.partitions[i] for i in range(X.npartitions))
        return
    if is_dask_collection(X):
        if X.ndim < 1:
            raise InputError(f"X must have rows, got a dask array of shape {X.shape}")
        X = X.rechunk({0: chunk_size or X.chunks[0], **{i: -1 for i in range(1, X.ndim)}})
        yield from (X.blocks[i] for i in range(X.numblocks[0]))  # lazy, with their number of rows
        return
    n = len(X)
    step = chunk_size or max(n, 1)
    for start in range(0, n, step):
        yield X.iloc[start:start + step] if hasattr(X, "iloc") else X[start:start + step]


# ---------------------------------------------------------------------- ranking
def _numbered(payloads):
    """``((chunk, start), payload)`` per chunk: its number and first row (None past a block of unknown length)."""
    start = 0
    for chunk, payload in enumerate(payloads):
        yield (chunk, start), payload
        n = None if start is None else _length(payload)
        start = None if n is None else start + n


def _length(payload):
    """The rows of a chunk, or None when unknown (a dask delayed value, a dask array of unknown length)."""
    if not hasattr(type(payload), "shape"):  # a list of rows; a Delayed answers any attribute lazily
        return None if is_dask_collection(payload) else len(payload)
    return _rows(payload)


def _rank_task(key, payload, hierarchy, to_values, method):
    """One chunk: its values (through ``to_values``), its run and summary (on a worker)."""
    t0 = time.perf_counter()
    timings = {}
    key, start = key
    start = start or 0
    labels = payload.index if is_frame(payload) else None  # a DataFrame's rows name its objects
    values = payload
    if to_values is not None:
        values = to_values(values, first_row=start) if isinstance(to_values, ModelMlpr) else to_values(values)
        if isinstance(values, tuple):
            values, timings = values
        else:
            timings = {"values": time.perf_counter() - t0}
    values = class_matrix(values, hierarchy, "values", first_row=start)
    run, summary = rank_chunk(values, hierarchy, method, chunk=key)
    summary.timings.update(timings)
    return summary, run, labels


def rank_stream(payloads, hierarchy, *, to_values=None, method="auto", scheduler=None, store=None,
                progress=False, n_objects=None, index=None):
    """Rank chunks of objects one at a time; the first pass of every global decision.

    Parameters
    ----------
    payloads : iterable
        One item per chunk, in the objects' order: a value matrix (m, K) (array,
        DataFrame or a block of a dask array), or whatever ``to_values`` takes.
    hierarchy : Hierarchy
        Fixes the column order and the ranking's constraints.
    to_values : callable, optional
        Payload -> (m, K) values, run where the chunk runs (on a worker); it may
        return ``(values, {stage: seconds})``. For example :class:`ModelMlpr`
        (scores -> mLPRs) or :class:`NetworkMlpr` (likelihoods -> mLPRs). Must be
        picklable to run on a cluster.
    method : str
        A :func:`hmcpgm.hier_rank` method (default ``"auto"``), or ``"naive"`` for NaiveSort.
    scheduler : None, "local", str or distributed.Client
        Where the chunks run (see :func:`hmcpgm.scale.open_client`): None for this
        process, ``"local"`` for a new local dask cluster, or a scheduler's address.
    store : None, True, str or Path
        Where the chunks' runs wait for the second pass: None in memory, True in a
        temporary folder, or in the folder given (in a subfolder of this ranking's
        own, so rankings that share the folder at the same time, in one process or
        several, keep their runs apart; see :class:`RunStore`). Each run takes 20
        bytes per event.
    progress : bool
        Show a progress bar (objects done).
    n_objects : int, optional
        The total, for the progress bar.
    index : sequence, optional
        Labels of the objects (``ChunkedRanking.index``). Default: when every
        chunk is a DataFrame (a pandas DataFrame, or a partition of a dask one),
        their row indexes one after the other, as :func:`hmcpgm.hier_rank` keeps
        the row index of the whole DataFrame; else none.

    Returns
    -------
    ChunkedRanking
        The chunks' runs and summaries; close it (or use it in a ``with`` block) to free the store.
    """
    check_hierarchy(hierarchy)
    if method != "naive":
        check_choice(method, "method", RANK_METHODS)
    runs = RunStore(store)
    summaries, labels, start = [], [], 0
    try:
        with progress_bar(progress, n_objects, "rank") as bar:
            client, close = open_client(scheduler)
            try:
                for summary, run, rows in ordered_map(_rank_task, _numbered(payloads), client=client,
                                                      shared=(hierarchy, to_values, method),
                                                      size=lambda result: result[0].n_objects):
                    labels.append(rows)
                    t0 = time.perf_counter()
                    runs.put(summary.chunk, run)
                    timings = {**summary.timings, "store": time.perf_counter() - t0}
                    summaries.append(replace(summary, start=start, timings=timings))
                    start += summary.n_objects
                    bar.update(summary.n_objects)
            finally:
                close()
        if index is None and labels and all(rows is not None for rows in labels):
            index = labels[0].append(labels[1:]) if len(labels) > 1 else labels[0]
        return ChunkedRanking(summaries, runs, hierarchy.classes, method, index=index)
    except BaseException:
        runs.close()
        raise


def _row_index(X):
    """The row index of an in-memory pandas DataFrame (it names the objects), else None."""
    return X.index if is_frame(X) and not is_dask_collection(X) else None


def rank_chunks(values, hierarchy, *, chunk_size=None, **options):
    """Rank a value matrix (e.g. mLPRs) chunk by chunk; see :func:`rank_stream`.

    Parameters
    ----------
    values : array-like, DataFrame, dask array or dask DataFrame (by partitions) of shape (M, K)
        The value of every event, e.g. mLPRs.
    hierarchy : Hierarchy
        Fixes the column order and the ranking's constraints.
    chunk_size : int, optional
        Objects per chunk (a dask array keeps its row chunks without it).
    **options
        ``method``, ``scheduler``, ``store``, ``progress`` of :func:`rank_stream`.

    Returns
    -------
    ChunkedRanking
        Its :meth:`~ChunkedRanking.bayes_cutoff` and :meth:`~ChunkedRanking.top`
        equal those of :func:`hmcpgm.hier_rank` on the whole matrix (``top`` a
        DataFrame labelled by the row index when ``values`` is a DataFrame).

    Examples
    --------
    >>> from hmcpgm import Hierarchy, bayes_cutoff, hier_rank
    >>> h = Hierarchy.from_parents([None, 0, 0])
    >>> p = np.random.default_rng(0).random((50, 3))
    >>> with rank_chunks(p, h, chunk_size=7) as ranked:
    ...     cut = ranked.bayes_cutoff(alpha=0.3)
    ...     same = (ranked.top(cut.rank) == hier_rank(p, h).top(cut.rank)).all()
    >>> cut.rank == bayes_cutoff(hier_rank(p, h), p, alpha=0.3).rank, bool(same)
    (True, True)
    """
    return rank_stream(row_chunks(values, chunk_size), hierarchy, n_objects=_rows(values), index=_row_index(values),
                       **options)


def rank_model(model, X, *, chunk_size=None, calibrated=False, **options):
    """Scores -> mLPRs -> HierRank, chunk by chunk, with a fitted :class:`hmcpgm.MLPR`.

    The mLPRs of a chunk are made and ranked where the chunk runs and are kept
    only in its run.

    Parameters
    ----------
    model : MLPR
        Fitted.
    X : array-like, DataFrame, dask array or dask DataFrame (by partitions) of shape (M, K)
        First-stage scores.
    chunk_size : int, optional
        Objects per chunk (a dask array keeps its row chunks without it).
    calibrated : bool, default False
        Rank the recalibrated mLPRs (``model.calibrated_proba``), whose mean of
        ``1 - value`` estimates the FDR: what the ranking's ``bayes_cutoff`` needs,
        as ``hmcpgm rank --fdr`` ranks the output of ``hmcpgm predict``. The
        default ranks the mLPRs themselves, whose ``bayes_cutoff`` trusts the
        mLPRs as they are.
    **options
        ``method``, ``scheduler``, ``store``, ``progress`` of :func:`rank_stream`.

    Returns
    -------
    ChunkedRanking
        As :func:`rank_stream` returns it; labelled by the row index of ``X`` when
        it is a DataFrame, as ``hier_rank(model.predict_proba(X), ...)`` would be.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    return rank_stream(row_chunks(X, chunk_size), model.hierarchy_, to_values=ModelMlpr(model, calibrated),
                       n_objects=_rows(X), index=_row_index(X), **options)


# ---------------------------------------------------------------------- prediction
#: Cells (objects x classes) that inference works on at once inside a chunk: each object's mLPRs depend on its
#: row alone, so a chunk is computed in row blocks of this many cells, and memory follows the chunk's own size.
BLOCK_CELLS = 1 << 21


def _predict_task(key, scores, model, decisions, calibrated=False):
    _, start = key
    # checked here, so that a message names a bad cell by its row in the whole input and a bad shape or text in one line
    if not hasattr(scores, "iloc"):
        scores = class_matrix(scores, model.hierarchy_, "X", first_row=start or 0)
    elif start:
        class_matrix(scores, model.hierarchy_, "X", first_row=start)
    m, k = scores.shape
    p = np.empty((m, k))
    d = np.empty((m, k), dtype=np.int8) if decisions else None
    step = max(1, BLOCK_CELLS // max(k, 1))
    for start in range(0, m, step):
        rows = slice(start, min(m, start + step))
        block = np.asarray(model.predict_proba(scores[rows]), dtype=np.float64)
        if decisions:
            d[rows] = model.decide(block)  # decisions come from the mLPRs themselves
        if calibrated and model.recalibration_ is not None:
            block = model.second_stage_.calibrate(block)  # what model.calibrated_proba gives
        p[rows] = block
    return p, d


def predict_stream(model, X, *, chunk_size=None, scheduler=None, decisions=False, progress=False,
                   n_objects=None, calibrated=False):
    """mLPRs (and the model's decisions) of new objects, one chunk at a time.

    Parameters
    ----------
    model : MLPR
        Fitted.
    X : array-like, DataFrame, dask array or DataFrame, or an iterable of row blocks
        First-stage scores. An iterable of 2-D blocks (not an array, nor a list
        of rows) is taken as its blocks.
    chunk_size : int, optional
        Objects per chunk.
    scheduler : None, "local", str or distributed.Client
        Where the chunks run (see :func:`rank_stream`).
    decisions : bool
        Also give ``model.predict``'s decisions (HierRank block mean >= threshold).
    progress : bool
        Show a progress bar (objects done).
    n_objects : int, optional
        The total, for the progress bar.
    calibrated : bool
        Give ``model.calibrated_proba`` (the recalibrated mLPRs) instead.

    Yields
    ------
    mlpr : ndarray (m, K)
        The same numbers as ``model.predict_proba`` (or ``calibrated_proba``) on those rows.
    decisions : ndarray of int8 (m, K) or None
        None without ``decisions``.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    if hasattr(X, "shape") and len(X.shape) != 2:
        raise InputError(f"X must be a 2-D array of shape (n_objects, {model.hierarchy_.n_classes}), got "
                         f"{len(X.shape)}-D shape {X.shape}")
    rows = isinstance(X, (list, tuple)) and len(X) > 0 and np.ndim(X[0]) < 2  # a list of rows is a matrix
    if hasattr(X, "shape") or hasattr(X, "iloc") or rows:
        blocks, n_objects = row_chunks(X, chunk_size), _rows(X)
    else:
        blocks = X
    client, close = open_client(scheduler)
    try:
        with progress_bar(progress, n_objects, "predict") as bar:
            for p, d in ordered_map(_predict_task, _numbered(blocks), client=client,
                                    shared=(model, decisions, calibrated), size=lambda result: len(result[0])):
                bar.update(len(p))
                yield p, d
    finally:
        close()


def predict_proba(model, X, *, chunk_size=None, scheduler=None):
    """``model.predict_proba(X)`` computed chunk by chunk (the same numbers), as one array.

    Parameters
    ----------
    model : MLPR
        Fitted.
    X : array-like, DataFrame, dask array or DataFrame, or an iterable of row blocks
        First-stage scores.
    chunk_size : int, optional
        Objects per chunk.
    scheduler : None, "local", str or distributed.Client
        Where the chunks run (see :func:`rank_stream`).

    Returns
    -------
    ndarray of shape (M, K)
        The mLPRs.

    Examples
    --------
    >>> from hmcpgm import Hierarchy, MLPR
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = np.sort(rng.integers(0, 2, (500, 2)), axis=1)[:, ::-1]
    >>> model = MLPR(hierarchy=h).fit(rng.normal(y), y)
    >>> s = rng.normal(size=(9, 2))
    >>> bool((predict_proba(model, s, chunk_size=4) == model.predict_proba(s)).all())
    True
    """
    parts = [p for p, _ in predict_stream(model, X, chunk_size=chunk_size, scheduler=scheduler)]
    return np.concatenate(parts) if parts else np.zeros((0, model.hierarchy_.n_classes))


# ---------------------------------------------------------------------- helpers
def _rows(X):
    try:
        n = X.shape[0]
    except (AttributeError, IndexError):
        return None
    if not isinstance(n, (int, float, np.number)):  # a dask DataFrame's length is lazy
        return None
    return None if n != n else int(n)  # a dask array of unknown length has nan rows


def progress_bar(enabled, total, desc, unit="objects"):
    """A tqdm bar on stderr (off when ``enabled`` is false or stderr is not a terminal)."""
    import sys

    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=True if not enabled else None,
                leave=False, file=sys.stderr)
