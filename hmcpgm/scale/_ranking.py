"""The global ranking of chunked objects, and decisions on it without a global sort.

:class:`ChunkedRanking` holds each chunk's run (its events in its own HierRank
order) and the histogram of block means over all chunks. Decisions need the
global order only near the cutoff, so they take two passes:

1. the histogram (event counts and sums of values per block-mean bin), summed
   over the chunks, locates the bin where the cutoff falls;
2. only the events of the bins up to it are read back from the runs and merged
   in the global order (block mean descending; ties by chunk, then by the chunk's
   own order, exactly as HierRank's Chain-Merge orders them).

The decisions are the same as :func:`hmcpgm.bayes_cutoff` and
:meth:`hmcpgm.Ranking.top` on the ranking of all objects at once: the same rank,
the same events, to the last float (the estimated FDR is accumulated over the
same events in the same order).
"""

import numpy as np

from .._arrays import count
from .._util import warn
from ..decision import Cutoff, bayes_cutoff
from ..exceptions import CutoffWarning, InputError
from ..ranking import Ranking
from ..ranking._ranking import labelled_matrix, object_labels
from ._runs import N_BINS

__all__ = ["ChunkedRanking"]

_EPS = 2.0**-53  # unit roundoff of float64


class ChunkedRanking:
    """A ranking of all (object, class) events, kept as per-chunk runs and a histogram.

    Made by :func:`hmcpgm.scale.rank_chunks` and :func:`hmcpgm.scale.rank_stream`;
    close it (or use it in a ``with`` block) to free the runs.

    Parameters
    ----------
    summaries : list of ChunkSummary
        One per chunk, in the objects' order.
    store : RunStore
        The chunks' runs.
    classes : sequence
        The class names (``K``).
    method : str
        The ranking method of every chunk.
    index : sequence, optional
        Labels of the objects (a ranked DataFrame's row index): :meth:`top` then
        gives a DataFrame, and :meth:`iter_frames` names the objects by them.
    """

    def __init__(self, summaries, store, classes, method, index=None):
        self.summaries = sorted(summaries, key=lambda s: s.chunk)
        self.store = store
        self.classes = tuple(classes)
        self.method = method
        expected = 0
        for s in self.summaries:
            if s.start != expected:
                raise InputError(f"chunk {s.chunk} starts at object {s.start}, expected {expected}: chunks must "
                                 "follow each other in the objects' order")
            expected += s.n_objects
        self.n_objects = expected
        if index is not None and len(index) != expected:
            raise InputError(f"index must name the {expected} objects, got {len(index)} labels")
        self.index = index
        self.counts = np.zeros(N_BINS, dtype=np.int64)
        self.sums = np.zeros(N_BINS)
        for s in self.summaries:
            np.add.at(self.counts, s.bins, s.counts)
            np.add.at(self.sums, s.bins, s.sums)

    # -- bookkeeping --------------------------------------------------------
    @property
    def n_classes(self):
        """int: ``K``."""
        return len(self.classes)

    @property
    def shape(self):
        """(int, int): ``(M, K)``."""
        return (self.n_objects, self.n_classes)

    @property
    def n_events(self):
        """int: ``M * K``."""
        return self.n_objects * self.n_classes

    @property
    def timings(self):
        """dict: seconds per stage, summed over the chunks (work time, not wall time)."""
        out = {}
        for s in self.summaries:
            for stage, seconds in s.timings.items():
                out[stage] = out.get(stage, 0.0) + seconds
        return out

    @property
    def value_range(self):
        """(float, float): the smallest and largest value ranked."""
        lows, highs = zip(*(s.value_range for s in self.summaries)) if self.summaries else ((np.inf,), (-np.inf,))
        return min(lows), max(highs)

    def __repr__(self):
        return f"ChunkedRanking({self.n_objects} objects x {self.n_classes} classes, {len(self.summaries)} chunks)"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Free the runs (remove their files when the store made its folder)."""
        self.store.close()

    # -- the second pass: events of a range of bins, in the global order ----
    def _gather(self, lo, hi):
        """The events of bins ``lo <= bin < hi`` in the global order: a dict of arrays."""
        parts, chunks, starts = [], [], []
        for s in self.summaries:
            a, b = s.offset(lo), s.offset(hi)
            run = self.store.read(s.chunk, a, b)
            if run is not None:
                parts.append(run)
                chunks.append(np.full(b - a, s.chunk, dtype=np.int64))
                starts.append(s.start)
        if not parts:
            return {"mean": np.zeros(0), "value": np.zeros(0), "flat": np.zeros(0, np.int64)}
        mean = np.concatenate([p["mean"] for p in parts])
        k = self.n_classes
        flat = np.concatenate([p["event"].astype(np.int64) + start * k for p, start in zip(parts, starts)])
        # the concatenation is in (chunk, run position) order; a stable sort on the block
        # mean (then NaiveSort's depth) keeps that order on ties, as Chain-Merge does
        if "tie" in parts[0].dtype.names:
            order = np.lexsort((np.concatenate([p["tie"] for p in parts]), -mean))
        else:
            order = np.argsort(-mean, kind="stable")
        return {"mean": mean[order], "value": np.concatenate([p["value"] for p in parts])[order],
                "flat": flat[order]}

    def _tied_pieces(self, b, batch):
        """The events of bin ``b`` in the global order, about ``batch`` at a time, when they share one block mean.

        Their order is then known without a sort: NaiveSort's tie key (class depth), then
        the chunks' order, then each run's (each run holds a bin's events of one tie key
        together, in its own order). A bin of exact ties (0s or 1s, a plateau of the
        recalibration map) is so written without holding it whole. None when the bin
        holds more than one block mean (it is then sorted whole, by :meth:`_gather`).
        """
        spans = []
        for s in self.summaries:
            a, e = s.offset(b), s.offset(b + 1)
            if e > a:
                spans.append((s, a, e))
        firsts = [self.store.read(s.chunk, a, a + 1) for s, a, _ in spans]
        ends = [f["mean"][0] for f in firsts] + [self.store.read(s.chunk, e - 1, e)["mean"][0] for s, _, e in spans]
        if len(set(ends)) != 1:
            return None
        groups = [(None, spans)]
        if "tie" in firsts[0].dtype.names:  # NaiveSort: each run's span split where its tie key changes,
            # the keys in increasing order
            by_key = {}
            for s, a, e in spans:
                keys = self.store.read(s.chunk, a, e)["tie"]
                cuts = np.r_[0, np.flatnonzero(keys[1:] != keys[:-1]) + 1, keys.size]
                for i, j in zip(cuts[:-1], cuts[1:]):
                    by_key.setdefault(int(keys[i]), []).append((s, a + int(i), a + int(j)))
            groups = sorted(by_key.items())
        return self._pieces(groups, batch)

    def _pieces(self, groups, batch):
        k = self.n_classes
        for _, spans in groups:
            for s, a, e in spans:
                for x in range(a, e, batch):
                    run = self.store.read(s.chunk, x, min(x + batch, e))
                    yield {"mean": run["mean"], "value": run["value"],
                           "flat": run["event"].astype(np.int64) + s.start * k}

    # -- decisions -------------------------------------------------------------
    def bayes_cutoff(self, alpha=0.1):
        """The Bayesian FDR cutoff: the largest ``r`` whose estimated FDR is at most ``alpha``.

        The same :class:`~hmcpgm.Cutoff` as ``hmcpgm.bayes_cutoff(ranking, values,
        rule="fdr", alpha=alpha)`` on the ranking of all objects at once: the same
        ``rank``, ``precision`` and ``threshold``; ``recall`` and ``f1`` divide by the
        sum of all values, added here in another order (equal to rounding).

        The histogram gives, for the end of each bin, the estimated FDR of the
        prefix of the ranking that ends there. That FDR never decreases from one
        block to the next (block means decrease along the ranking and no prefix of
        a block has a larger mean than the block), so past the first bin whose FDR
        exceeds ``alpha`` (by more than the rounding error of either sum) no
        prefix qualifies. The events up to that bin are merged in the global order
        and the cutoff is chosen on them by :func:`hmcpgm.bayes_cutoff` itself.

        Parameters
        ----------
        alpha : float in (0, 1)
            Target false discovery rate; the values must be probabilities (mLPRs).

        Returns
        -------
        Cutoff
            The chosen ``rank`` with its estimated precision, recall and F1.
        """
        try:
            a = float(alpha)
        except (TypeError, ValueError):
            raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
        if not 0 < a < 1:
            raise InputError(f"alpha must lie in (0, 1) (a target false discovery rate), got {alpha!r}")
        low, high = self.value_range
        if self.n_events and (low < 0 or high > 1):
            raise InputError(f"mlpr must hold posterior probabilities in [0, 1], got {low if low < 0 else high}")
        n = self.n_events
        if n == 0:
            return bayes_cutoff(np.zeros(0, dtype=np.intp), np.zeros(0), alpha=a)
        cum_n = np.cumsum(self.counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            fdr = (cum_n - np.cumsum(self.sums)) / cum_n
        # rounding of a sum of n terms in [0, 1]: at most n * eps relative, for the
        # histogram's sums and for bayes_cutoff's running sum alike
        margin = 4 * (n + self.n_classes + 4) * _EPS
        past = np.flatnonzero((self.counts > 0) & (fdr > a + 1e-12 + margin))
        last = int(np.flatnonzero(self.counts)[-1])
        hi = int(past[0]) if past.size else last
        # the events in the global order, one bin at a time (memory: one bin, not the whole prefix), with
        # bayes_cutoff's own arithmetic: the running sum added in order, the same test on (r - tp) / r
        r_best, hits_best, mean_best = 0, 0.0, float("inf")
        seen, tp_last, b = 0, 0.0, 0
        low, low_rank = float("inf"), 0
        while True:
            for bin_ in (np.flatnonzero(self.counts[b:hi + 1]) + b).tolist():  # the non-empty bins only
                events = self._gather(bin_, bin_ + 1)
                v = events["value"]
                if not v.size:
                    continue
                tp = np.cumsum(np.concatenate(([tp_last], v)))[1:]
                r_all = np.arange(seen + 1, seen + v.size + 1)
                fdr_here = (r_all - tp) / r_all
                low = min(low, float(fdr_here.min()))
                tied = np.flatnonzero(fdr_here <= low + 1e-12)  # the longest prefix within rounding of the smallest
                if tied.size:
                    low_rank = int(r_all[tied[-1]])
                ok = np.flatnonzero(fdr_here <= a + 1e-12)
                if ok.size:
                    r_best, hits_best, mean_best = int(r_all[ok[-1]]), float(tp[ok[-1]]), float(events["mean"][ok[-1]])
                seen, tp_last = seen + v.size, float(tp[-1])
            b = hi + 1
            # check the bound on the events themselves; extend if it did not hold
            if hi >= last or (seen - tp_last) / seen > a + 1e-12 + margin / 2:
                break
            hi = int(np.flatnonzero(self.counts[hi + 1:])[0]) + hi + 1
        # the smallest estimated FDR: exact over the scanned events, at the bin ends beyond them
        ends = np.flatnonzero(self.counts > 0)
        ends = ends[cum_n[ends] > seen]
        if ends.size and np.nanmin(fdr[ends]) < low:
            low = float(np.nanmin(fdr[ends]))
        tied = ends[fdr[ends] <= low + 1e-12]  # the longest prefix that has it, as bayes_cutoff counts it
        if tied.size:
            low_rank = int(cum_n[tied[-1]])
        if r_best == 0:
            warn(f"no prefix of the ranking has an estimated false discovery rate <= alpha={a}; the "
                 f"smallest estimated FDR is {low:.2g} at {low_rank} events; the cutoff labels no event "
                 "positive", CutoffWarning)
        total = float(self.sums.sum())
        r = r_best
        return Cutoff(
            rule="fdr", source="posterior", alpha=a, rank=r, n_events=n,
            precision=hits_best / r if r else float("nan"),
            recall=hits_best / total if total > 0 else float("nan"),
            f1=2 * hits_best / (r + total) if r + total > 0 else float("nan"),
            threshold=mean_best if r else float("inf"),
            min_fdr=low, min_fdr_rank=low_rank,
        )

    def _top_bin(self, r):
        """The bin of the ``r``-th event and the events of the bin that are among the first ``r``."""
        r = count(r, "r")
        if r > self.n_events:
            raise InputError(f"r must be at most the number of events {self.n_events}, got {r}")
        if r == 0:
            return 0, np.zeros(0, np.int64)
        cum = np.cumsum(self.counts)
        b = int(np.searchsorted(cum, r))
        before = int(cum[b - 1]) if b else 0
        return b, self._gather(b, b + 1)["flat"][: r - before]

    def iter_top(self, r):
        """The decisions of the top ``r`` events, one chunk at a time.

        Parameters
        ----------
        r : int
            How many events are positive, from 0 to ``n_events``.

        Yields
        ------
        start : int
            The chunk's first object.
        decisions : ndarray of int8, shape (m, K)
            1 for the chunk's events among the first ``r`` of the global ranking.
        """
        b, extra = self._top_bin(r)
        k = self.n_classes
        for s in self.summaries:
            out = np.zeros(s.n_objects * k, dtype=np.int8)
            run = self.store.read(s.chunk, 0, s.offset(b))
            if run is not None:
                out[run["event"]] = 1
            mine = extra[(extra >= s.start * k) & (extra < (s.start + s.n_objects) * k)]
            out[mine - s.start * k] = 1
            yield s.start, out.reshape(s.n_objects, k)

    def top(self, r):
        """The (M, K) 0/1 decisions that label the first ``r`` events positive.

        The same matrix as :meth:`hmcpgm.Ranking.top` on the ranking of all objects
        at once; only the bin of the ``r``-th event is sorted.

        Parameters
        ----------
        r : int
            How many events are positive, from 0 to ``n_events``.

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            1 for the first ``r`` events of the global ranking. A DataFrame (columns
            named by class, rows by ``index``) when the ranking has an ``index``,
            as :meth:`hmcpgm.Ranking.top` gives one for a ranked DataFrame.
        """
        parts = [d for _, d in self.iter_top(r)]
        return self.labelled(np.concatenate(parts) if parts else np.zeros((0, self.n_classes), dtype=np.int8))

    def labelled(self, matrix):
        """An (M, K) matrix of the ranking's events, as a DataFrame when the ranking has an ``index``.

        The same as :meth:`hmcpgm.Ranking.labelled`: rows named by ``index``,
        columns by class (in ``classes`` order); without an ``index`` the matrix
        comes back as it is.

        Parameters
        ----------
        matrix : ndarray of shape (M, K)
            One entry per event, columns in ``classes`` order.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            ``matrix`` itself, or a DataFrame of it labelled by ``index`` and ``classes``.
        """
        return labelled_matrix(matrix, self.shape, self.index, self.classes)

    # -- the full ranking, when asked: an external merge by bins -----------------
    def iter_frames(self, batch=1_000_000, *, values=True, positives=None):
        """The ranking, best first, as DataFrames of about ``batch`` rows each.

        The columns are those of :meth:`hmcpgm.Ranking.to_frame` (``rank``,
        ``object``, ``class``, ``value``, ``block_mean``), plus ``positive`` (1 for
        the first ``positives`` events) when ``positives`` is given. Each frame
        holds whole bins, so a frame is larger than ``batch`` when a single bin is,
        unless that bin's events share one block mean (exact ties, such as 0s): it
        then comes in frames of at most ``batch`` events, in the same order.

        Parameters
        ----------
        batch : int
            About how many events (rows) per frame.
        values : bool
            Include the ``value`` column.
        positives : int, optional
            Add the ``positive`` column: 1 for the first ``positives`` events.

        Yields
        ------
        pandas.DataFrame
            The next events of the ranking, one row each.
        """
        import pandas as pd

        batch = count(batch, "batch", minimum=1)
        cum = np.cumsum(self.counts)
        names = np.asarray(self.classes, dtype=object)
        labels = None if self.index is None else object_labels(self.index)
        k = self.n_classes
        big = np.flatnonzero(self.counts > batch)  # bins of more than a frame: each comes alone
        lo, done = 0, 0
        while done < self.n_events:
            pieces = None
            if self.counts[lo] > batch:
                hi = lo + 1
                pieces = self._tied_pieces(lo, batch)
            else:  # whole bins up to about batch events, stopping before a big bin
                after = big[np.searchsorted(big, lo):]
                hi = int(np.searchsorted(cum, done + batch)) + 1
                hi = min(hi, int(after[0])) if after.size else hi
            for sel in pieces if pieces is not None else [self._gather(lo, hi)]:
                rows = np.arange(done + 1, done + sel["flat"].size + 1)
                objects = sel["flat"] // k
                table = {"rank": rows, "object": objects if labels is None else labels[objects],
                         "class": names[sel["flat"] % k]}
                if values:
                    table["value"] = sel["value"]
                table["block_mean"] = sel["mean"]
                if positives is not None:
                    table["positive"] = (rows <= positives).astype(int)
                yield pd.DataFrame(table)
                done += rows.size
            lo = hi

    def to_ranking(self):
        """The whole ranking as one :class:`hmcpgm.Ranking` (for problems that fit in memory).

        Returns
        -------
        Ranking
            The ranking of all objects, with its block means.
        """
        sel = self._gather(0, N_BINS)
        means = np.empty(self.n_events)
        means[sel["flat"]] = sel["mean"]
        return Ranking(sel["flat"], self.n_objects, self.classes, block_means=means.reshape(self.shape),
                       method=self.method, index=self.index)
