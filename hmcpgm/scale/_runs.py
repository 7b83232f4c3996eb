"""One chunk of objects, ranked on its own: a *run* of its events and their histogram.

A chunk's HierRank ranking lists its events by block mean, descending; that list is
the chunk's *run*. Objects are independent, so the global ranking of all objects is
the merge of the runs by block mean, ties kept in chunk order (the chunks follow
the objects' order). Each run is summarised by a histogram over block-mean bins
(event counts and sums of values per bin), which is all the first pass of a global
decision needs.

Bins are fixed for every chunk and every machine: the top :data:`N_BITS` bits of
an order-preserving 64-bit integer key of the float64 block mean, numbered from the
largest values down (bin 0 holds the largest). So the bins of a run never decrease
along it, a bin is a contiguous slice of every run, and a bin's width is a fixed
fraction (1/256) of its binade: the histogram adapts to values near 1, near 0 or
of any scale, with no range to choose.
"""

import os
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InputError
from ..ranking import hier_rank, naive_sort

__all__ = ["N_BITS", "N_BINS", "ChunkSummary", "RunStore", "descending_bins", "rank_chunk"]

#: Bits of the bin number: 2**20 bins, 256 per binade of float64 values.
N_BITS = 20
N_BINS = 1 << N_BITS

_SIGN = np.uint64(1 << 63)


def descending_bins(values):
    """The bin of each float64 value, 0 for the largest: a monotone, machine-independent map.

    ``-0.0`` and ``0.0`` share a bin, as they are equal. NaN is not binned (the
    values ranked are finite).

    Parameters
    ----------
    values : array-like of float
        The values to bin (any shape).

    Returns
    -------
    ndarray of int64
        The bin of each value, in ``[0, N_BINS)``; a larger value never has a larger bin.

    Examples
    --------
    >>> descending_bins([1.0, 0.75, 0.5, 0.0, -0.0, -1.0]).tolist()
    [262399, 262527, 262655, 524287, 524287, 786176]
    """
    x = np.asarray(values, dtype=np.float64) + 0.0  # -0.0 + 0.0 is +0.0
    u = x.view(np.uint64)
    key = np.where(u & _SIGN, ~u, u | _SIGN)
    return (N_BINS - 1) - (key >> np.uint64(64 - N_BITS)).astype(np.int64)


@dataclass(frozen=True, eq=False)
class ChunkSummary:
    """What the first pass keeps of a chunk: where it is and its histogram.

    Attributes
    ----------
    chunk : int
        The chunk's number (0 for the first objects).
    start : int
        Its first object's row in the whole matrix.
    n_objects : int
    bins : ndarray of int64
        The bins that hold events of the chunk, increasing (= block means decreasing).
    counts : ndarray of int64
        Events per bin, in the run's order: a bin is a slice of the run.
    sums : ndarray of float64
        Sum of the values of the events per bin.
    value_range : (float, float)
        The smallest and largest value of the chunk.
    timings : dict
        Seconds spent per stage on this chunk.
    """

    chunk: int
    start: int
    n_objects: int
    bins: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    value_range: tuple
    timings: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "_ends", np.concatenate(([0], np.cumsum(self.counts))))

    def offset(self, b):
        """The number of the run's events in bins before ``b`` (where bin ``b`` starts).

        Parameters
        ----------
        b : int
            A bin number.

        Returns
        -------
        int
            Where the events of bin ``b`` (or of the chunk's next bin after it) start in the run.
        """
        return int(self._ends[np.searchsorted(self.bins, b)])


def run_dtype(n_events, tie):
    """The record of a run's event: block mean, value, event number in the chunk (and tie key)."""
    fields = [("mean", "<f8"), ("value", "<f8"), ("event", "<i4" if n_events < 2**31 else "<i8")]
    return np.dtype(fields + ([("tie", "<i4")] if tie else []))


def rank_chunk(values, hierarchy, method, *, chunk=0, start=0):
    """Rank one chunk of objects on its own: its run and its :class:`ChunkSummary`.

    Parameters
    ----------
    values : ndarray of shape (m, K)
        Finite values of the chunk's events, in ``hierarchy.classes`` order.
    hierarchy : Hierarchy
    method : str
        ``"naive"`` for NaiveSort, else a :func:`hmcpgm.hier_rank` method.
    chunk, start : int
        The chunk's number and its first object's row.

    Returns
    -------
    run : structured ndarray, shape (m * K,)
        The chunk's events in its ranking's order: ``mean`` (block mean), ``value``,
        ``event`` (``row * K + class`` inside the chunk) and, for NaiveSort,
        ``tie`` (the class depth, NaiveSort's tie-breaker).
    summary : ChunkSummary
    """
    t0 = time.perf_counter()
    if method == "naive":
        ranking = naive_sort(values, hierarchy)
    else:
        ranking = hier_rank(values, hierarchy, method=method)
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    order = ranking.order
    tie = method == "naive"
    run = np.empty(order.size, dtype=run_dtype(order.size, tie))
    run["mean"] = ranking.block_means.reshape(-1)[order] + 0.0
    run["value"] = values[order]
    run["event"] = order
    if tie:
        run["tie"] = np.asarray(hierarchy.depth)[order % hierarchy.n_classes]
    bins = descending_bins(run["mean"])
    first = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]]) if bins.size else np.zeros(0, np.intp)
    summary = ChunkSummary(
        chunk=chunk,
        start=start,
        n_objects=ranking.n_objects,
        bins=bins[first],
        counts=np.diff(np.r_[first, bins.size]).astype(np.int64),
        sums=np.add.reduceat(run["value"], first) if bins.size else np.zeros(0),
        value_range=(float(values.min()), float(values.max())) if values.size else (np.inf, -np.inf),
        timings={"rank": time.perf_counter() - t0},
    )
    return run, summary


class RunStore:
    """The runs of every chunk between the two passes: in memory, or one ``.npy`` file each.

    Parameters
    ----------
    directory : str, Path, True or None
        None keeps the runs in memory (small problems, tests). A folder keeps
        them on disk there, read back by slices through memory maps, in a
        subfolder of their own (``hmcpgm-runs-XXXXXXXX``, a unique name made
        with ``tempfile.mkdtemp``): runs that share a folder at the same time,
        in one process or several, never read or remove each other's files.
        :meth:`close` removes the subfolder; one left by a process that was
        killed holds nothing another run reads and can be deleted. True makes
        a temporary folder that :meth:`close` removes.

    Attributes
    ----------
    directory : str or None
        The folder the run files are in (the subfolder of the folder given).
    """

    def __init__(self, directory=None):
        self._memory = {}
        if directory is True:
            directory = tempfile.mkdtemp(prefix="hmcpgm-runs-")
        elif directory is not None:
            folder = os.fspath(directory)
            try:
                os.makedirs(folder, exist_ok=True)
                directory = tempfile.mkdtemp(prefix="hmcpgm-runs-", dir=folder)
            except OSError as exc:
                raise InputError(f"store folder {folder!r} cannot hold the runs: {exc.strerror or exc}") from None
        self.directory = directory
        self.nbytes = 0

    def _path(self, chunk):
        return os.path.join(self.directory, f"run-{chunk:07d}.npy")

    def put(self, chunk, run):
        """Keep the run of chunk number ``chunk``.

        Parameters
        ----------
        chunk : int
            The chunk's number.
        run : structured ndarray
            The chunk's run (see :func:`rank_chunk`).
        """
        self.nbytes += run.nbytes
        if self.directory is None:
            self._memory[chunk] = run
            return
        try:
            np.save(self._path(chunk), run)
        except OSError as exc:  # a full disk: numpy says "N requested and M written", naming no file
            raise InputError(f"the ranking's temporary files in {self.directory!r} cannot be written "
                             f"({exc.strerror or exc}); free room there or set TMPDIR to a folder that has it "
                             f"(they need {run.dtype.itemsize} bytes per event)") from None

    def read(self, chunk, lo, hi):
        """Events ``lo:hi`` of a run (a structured array).

        Parameters
        ----------
        chunk : int
            The chunk's number.
        lo, hi : int
            The slice of the run.

        Returns
        -------
        structured ndarray or None
            None for an empty slice; a copy when the runs are on disk, a view in memory.
        """
        if hi <= lo:
            return None
        if self.directory is None:
            return self._memory[chunk][lo:hi]
        return np.array(np.load(self._path(chunk), mmap_mode="r")[lo:hi])

    def close(self):
        """Forget the runs and remove their folder (the store made it); closing again does nothing."""
        self._memory.clear()
        if self.directory is not None and os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                if name.startswith("run-") and name.endswith(".npy"):
                    os.remove(os.path.join(self.directory, name))
            os.rmdir(self.directory)
