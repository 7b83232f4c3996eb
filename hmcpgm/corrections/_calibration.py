"""Per-class calibration of first-stage scores (isotonic or Platt), fitted on scores and labels.

The classic corrections expect probabilities; :func:`fit_calibration` learns one
increasing map per class from training scores and 0/1 labels and
:meth:`Calibration.transform` applies it to new scores.
"""

from dataclasses import dataclass

import numpy as np
from numba import prange

from .._arrays import binary_matrix, finite_array
from .._numba import jit, jit_parallel
from .._validation import as_pandas, column_positions, is_frame, rows_aligned
from ..exceptions import InputError
from ._inputs import within_limit

__all__ = ["CALIBRATIONS", "Calibration", "calibrate", "fit_calibration"]

CALIBRATIONS = ("isotonic", "platt", "none")


@jit
def _isotonic_knots(s, y, order):
    """Per column: sklearn's isotonic fit (ties in s pooled, PAV, clip outside) as knots (CSR)."""
    m, k = s.shape
    ptr = np.zeros(k + 1, dtype=np.int64)
    kx = np.empty(m * k)
    ky = np.empty(m * k)
    bx = np.empty(m)  # per block: (value sum, weight, first x, last x)
    bs = np.empty(m)
    bw = np.empty(m)
    bl = np.empty(m)
    n_out = 0
    for c in range(k):
        n = 0
        i = 0
        while i < m:  # unique x with the mean label of its ties, pooled left to right (PAV)
            x0 = s[order[i, c], c]
            tot = 0.0
            cnt = 0.0
            while i < m and s[order[i, c], c] == x0:
                tot += y[order[i, c], c]
                cnt += 1.0
                i += 1
            bx[n] = x0
            bl[n] = x0
            bs[n] = tot
            bw[n] = cnt
            n += 1
            while n > 1 and bs[n - 2] / bw[n - 2] >= bs[n - 1] / bw[n - 1]:
                bs[n - 2] += bs[n - 1]
                bw[n - 2] += bw[n - 1]
                bl[n - 2] = bl[n - 1]
                n -= 1
        for b in range(n):  # a knot at each end of each block: interpolation between blocks, flat inside
            v = bs[b] / bw[b]
            kx[n_out] = bx[b]
            ky[n_out] = v
            n_out += 1
            if bl[b] != bx[b]:
                kx[n_out] = bl[b]
                ky[n_out] = v
                n_out += 1
        ptr[c + 1] = n_out
    return ptr, kx[:n_out].copy(), ky[:n_out].copy()


@jit
def _interpolate(s, ptr, kx, ky):
    m, k = s.shape
    out = np.empty((m, k))
    for c in range(k):
        out[:, c] = np.interp(s[:, c], kx[ptr[c]:ptr[c + 1]], ky[ptr[c]:ptr[c + 1]])
    return out


@jit_parallel
def _platt_newton(zt, yt, pos, neg, max_iter, tol):
    """Per column, ``(a, b)`` maximising the likelihood of Platt's targets under
    ``P(y = 1) = 1 / (1 + exp(-(a + b z)))``: Newton steps with backtracking (Lin, Lin & Weng 2007).

    ``zt`` and ``yt`` are the scores and labels transposed, ``(K, M)`` and C-contiguous: each class
    reads its own row."""
    k, m = zt.shape
    out = np.zeros((k, 2))
    for c in prange(k):
        t = np.empty(m)
        hi = (pos[c] + 1.0) / (pos[c] + 2.0)
        lo = 1.0 / (neg[c] + 2.0)
        for i in range(m):
            t[i] = hi if yt[c, i] > 0 else lo
        a = np.log((pos[c] + 1.0) / (neg[c] + 1.0))
        b = 0.0
        fval = 0.0
        for i in range(m):
            f = a + b * zt[c, i]
            fval += np.log1p(np.exp(-abs(f))) + max(f, 0.0) - t[i] * f
        for _ in range(max_iter):
            g1 = 0.0
            g2 = 0.0
            h11 = 1e-12
            h22 = 1e-12
            h21 = 0.0
            for i in range(m):
                f = a + b * zt[c, i]
                p = 1.0 / (1.0 + np.exp(-f)) if f >= 0 else np.exp(f) / (1.0 + np.exp(f))
                d = p * (1.0 - p)
                g1 += p - t[i]
                g2 += (p - t[i]) * zt[c, i]
                h11 += d
                h22 += d * zt[c, i] * zt[c, i]
                h21 += d * zt[c, i]
            if abs(g1) < tol * m and abs(g2) < tol * m:
                break
            det = h11 * h22 - h21 * h21
            da = -(h22 * g1 - h21 * g2) / det
            db = -(-h21 * g1 + h11 * g2) / det
            gd = g1 * da + g2 * db
            step = 1.0
            while step >= 1e-10:
                na = a + step * da
                nb = b + step * db
                nf = 0.0
                for i in range(m):
                    f = na + nb * zt[c, i]
                    nf += np.log1p(np.exp(-abs(f))) + max(f, 0.0) - t[i] * f
                if nf < fval + 1e-4 * step * gd:
                    a, b, fval = na, nb, nf
                    break
                step /= 2.0
            if step < 1e-10:
                break
        out[c, 0] = a
        out[c, 1] = b
    return out


@dataclass(frozen=True, eq=False)
class Calibration:
    """Fitted per-class maps from scores to probabilities (see :func:`fit_calibration`).

    Attributes
    ----------
    method : str
        ``"isotonic"``, ``"platt"`` or ``"none"`` (the identity).
    classes : tuple
        The column names the maps were fitted on (a DataFrame's columns, else
        ``0 .. K-1``); :meth:`transform` aligns DataFrames by them.
    params : dict
        The maps: isotonic knots (``ptr``, ``x``, ``y``: class ``k``'s knots are
        ``x[ptr[k]:ptr[k + 1]]``) or Platt's ``(a_k, b_k)`` (``coef``, on the
        raw scores).
    positives, negatives : ndarray of int
        Training positives and negatives per class.
    """

    method: str
    classes: tuple
    params: dict
    positives: np.ndarray
    negatives: np.ndarray

    def transform(self, scores):
        """Apply each class's map to new scores.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            Columns in ``classes`` order, or a DataFrame with those column names.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            Probabilities in [0, 1] (a DataFrame with ``scores``' index and columns
            when ``scores`` is one).
        """
        scores = as_pandas(scores)
        s = _scores(scores, "scores", self.classes, limited=self.method == "platt")
        if self.method == "isotonic":
            out = _interpolate(s, self.params["ptr"], self.params["x"], self.params["y"])
        elif self.method == "platt":
            coef = self.params["coef"]
            out = 1.0 / (1.0 + np.exp(-(coef[:, 0] + coef[:, 1] * s)))
        else:
            out = s.copy()
        if not is_frame(scores):
            return out
        import pandas as pd

        frame = np.empty_like(out)
        frame[:, column_positions(scores.columns, self.classes, "scores")] = out
        return pd.DataFrame(frame, index=scores.index, columns=scores.columns)


def _scores(values, name, classes=None, *, limited=False):
    """(M, K) finite float64 scores (a DataFrame's columns in ``classes`` order); ``limited``: within
    +-VALUE_LIMIT, for Platt's squares (the isotonic maps only compare scores)."""
    if is_frame(values):
        if classes is not None:
            values = values.iloc[:, column_positions(values.columns, classes, name)]
        values = values.to_numpy()
    s = finite_array(values, name)
    if s.ndim != 2:
        raise InputError(f"{name} must be a 2-D (n_objects, n_classes) array, got shape {s.shape}")
    if classes is not None and s.shape[1] != len(classes):
        raise InputError(f"{name} has {s.shape[1]} columns but the calibration was fitted on {len(classes)}")
    s = np.ascontiguousarray(s, dtype=np.float64)
    return within_limit(s, classes, name) if limited else s


def fit_calibration(scores, labels, *, method="isotonic"):
    """Fit one increasing map per class from training scores to the probability of a positive label.

    ``"isotonic"``: scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``
    per class: tied scores pooled, the pool-adjacent-violators fit, linear
    interpolation between the ends of its blocks, constant beyond the training
    range. ``"platt"``: ``1 / (1 + exp(-(a_k + b_k s)))`` fitted by maximum
    likelihood on Platt's smoothed targets ``(N+ + 1) / (N+ + 2)`` and
    ``1 / (N- + 2)``. ``"none"``: the identity (scores already probabilities).

    A class without positive (or without negative) training labels gets a constant
    map: 0 (or 1) with isotonic, ``1 / (N + 2)`` (or ``(N + 1) / (N + 2)``) with Platt.

    Parameters
    ----------
    scores : array-like or DataFrame of shape (M, K)
        Training scores (e.g. out-of-fold first-stage scores).
    labels : array-like or DataFrame of shape (M, K)
        0/1 labels; a DataFrame is aligned to a DataFrame ``scores`` by column name
        and row index. With array ``scores`` its column names name the classes (the
        maps), and the scores' columns are read in its column order.
    method : {"isotonic", "platt", "none"}
        The family of the maps.

    Returns
    -------
    Calibration
        The fitted maps; apply them with :meth:`Calibration.transform`.

    Examples
    --------
    >>> cal = fit_calibration([[0.1], [0.4], [0.35], [0.8]], [[0], [0], [1], [1]])
    >>> cal.transform([[0.0], [0.375], [0.6], [2.0]]).tolist()
    [[0.0], [0.5], [0.75], [1.0]]
    """
    if method not in CALIBRATIONS:
        raise InputError(f"method must be one of {', '.join(map(repr, CALIBRATIONS))}; got {method!r}")
    scores, labels = as_pandas(scores), as_pandas(labels)  # a pyarrow or polars table: by name, as a DataFrame
    named_by = "scores" if is_frame(scores) else "labels" if is_frame(labels) else None
    classes = None if named_by is None else tuple((scores if named_by == "scores" else labels).columns)
    if classes is not None:
        column_positions(classes, classes, named_by)  # names every map: refuse duplicates now, not at transform
    s = _scores(scores, "scores", limited=method == "platt")
    if is_frame(labels) and named_by == "scores":
        labels = rows_aligned(labels, scores.index, "labels", "scores")  # by the row index, as MLPR pairs them
        labels = labels.iloc[:, column_positions(labels.columns, classes, "labels")].to_numpy()
    y = binary_matrix(labels.to_numpy() if is_frame(labels) else labels, "labels", classes).astype(np.float64)
    if y.shape != s.shape:
        raise InputError(f"labels has shape {y.shape} but scores has shape {s.shape}")
    classes = classes if classes is not None else tuple(range(s.shape[1]))
    pos = y.sum(axis=0).astype(np.int64)
    neg = (len(y) - pos).astype(np.int64)
    if len(s) == 0:
        raise InputError("scores must have at least one row to fit a calibration")
    if method == "isotonic":
        order = np.argsort(s, axis=0, kind="stable")
        ptr, kx, ky = _isotonic_knots(s, y, order)
        params = {"ptr": ptr, "x": kx, "y": ky}
    elif method == "platt":
        params = {"coef": _platt(s, y, pos, neg)}
    else:
        params = {}
    return Calibration(method, classes, params, pos, neg)


def _platt(s, y, pos, neg):
    """Platt's (a_k, b_k) on the raw scores, fitted on standardised scores for stable Newton steps."""
    centre = s.mean(axis=0)
    scale = s.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    theta = _platt_newton(np.ascontiguousarray(((s - centre) / scale).T), np.ascontiguousarray(np.asarray(y).T),
                          pos.astype(np.float64), neg.astype(np.float64), 100, 1e-12)
    b = theta[:, 1] / scale
    return np.column_stack([theta[:, 0] - b * centre, b])


def calibrate(scores, labels, new_scores=None, *, method="isotonic"):
    """Fit per-class calibration on ``(scores, labels)`` and apply it to ``new_scores`` (default: ``scores``).

    Parameters
    ----------
    scores, labels : array-like or DataFrame of shape (M, K)
        Training scores and 0/1 labels.
    new_scores : array-like or DataFrame of shape (N, K), optional
        Scores to calibrate; default the training scores.
    method : {"isotonic", "platt", "none"}
        The family of the maps.

    Returns
    -------
    ndarray or DataFrame of shape (N, K)
        Calibrated probabilities (a DataFrame with ``new_scores``' index and columns
        when it is one).

    Examples
    --------
    >>> calibrate([[0.1], [0.4], [0.35], [0.8]], [[0], [0], [1], [1]]).tolist()
    [[0.0], [0.5], [0.5], [1.0]]
    """
    model = fit_calibration(scores, labels, method=method)
    return model.transform(scores if new_scores is None else new_scores)
