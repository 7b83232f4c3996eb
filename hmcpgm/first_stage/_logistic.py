"""One L2-penalised logistic regression per label column, all fitted at once.

The class-wise first stage fits the same binary model to every column of the
label matrix on the same features. Fitted one column at a time (a clone of
``LogisticRegression`` per class, at its default tolerance) the 3,179 classes of
cellcycle_GO that have positives and negatives cost about 230 s for five folds;
here every column is solved together, to a tighter tolerance, in about 45 s
(``python bench/bench_first_stage.py``, one run), by a truncated Newton method
whose work is matrix products over all columns:

* objective of column k: ``0.5 * ||w_k||^2 + C * sum_i log(1 + exp(-s_ik (x_i . w_k + b_k)))``
  with ``s = 2 y - 1``, the intercept not penalised (``LogisticRegression``'s
  objective);
* Newton direction by preconditioned conjugate gradients (Jacobi), Hessian
  products ``X^T (W * (X V))`` for all columns at once, inexact to a forcing
  tolerance ``min(0.5, sqrt(|g|)) |g|``;
* a backtracking (Armijo) line search per column, and columns leave the active
  set once their gradient is below ``tol`` (sup norm, scaled by ``C * n``);
* columns are solved in blocks of at most 2^24 / n_rows, so the working memory
  stays a few arrays of 128 MB however many classes there are.

A column whose labels are all 0 or all 1 has no finite optimum: it gets weight 0
and intercept -inf or +inf (its decision function is that constant).
"""

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .._arrays import count
from .._util import warn
from ..exceptions import InputError

_BLOCK_EVENTS = 2**24  # rows x columns solved at once (a few arrays of 128 MB)


class LogisticColumns(ClassifierMixin, BaseEstimator):
    """L2 logistic regression of every label column on the same features, fitted together.

    The same model as one ``sklearn.linear_model.LogisticRegression(C=C)`` per
    column (L2 penalty, unpenalised intercept), solved for all columns at once by
    a truncated Newton method vectorised across columns: on cellcycle_GO (4,125
    classes) five folds take about 45 s instead of about 230 s. The default class-wise
    first stage (:func:`default_classwise_classifier`) uses it.

    Parameters
    ----------
    C : float
        Inverse of the L2 penalty's strength, as in ``LogisticRegression``.
    tol : float
        Stop a column when the sup norm of its gradient is at most
        ``tol * C * n_samples``.
    max_iter : int
        Newton iterations at most.

    Attributes
    ----------
    coef_ : ndarray of shape (K, F)
        Weights, one row per label column.
    intercept_ : ndarray of shape (K,)
        Intercepts (-inf or +inf for a column whose labels are constant).
    n_iter_ : int
        Newton iterations of the slowest column.
    classes_ : ndarray
        ``[0, 1]``, or the two labels of a 1-D ``y``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = np.column_stack([X[:, 0] + rng.normal(size=200) > 0, X[:, 1] > 1])
    >>> model = LogisticColumns().fit(X, Y)
    >>> model.decision_function(X).shape
    (200, 2)
    """

    def __init__(self, C=1.0, tol=1e-8, max_iter=100):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        return tags

    def fit(self, X, y):
        """Fit one logistic regression per column of ``y``.

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features (finite).
        y : array-like of shape (M, K) or (M,)
            0/1 labels, one column per class; a 1-D ``y`` is one binary
            target with any two labels.

        Returns
        -------
        self
            The fitted estimator.
        """
        C, tol, max_iter = _check_params(self.C, self.tol, self.max_iter)
        X, y = validate_data(self, X, y, multi_output=True, dtype=float)
        self._single = np.ndim(y) == 1
        if self._single:  # one binary target with any two labels, as LogisticRegression
            self.classes_, codes = np.unique(y, return_inverse=True)
            if len(self.classes_) < 2:
                raise ValueError(f"a 1-D y needs two labels, got one class ({self.classes_[0]!r})")
            if len(self.classes_) > 2:
                raise ValueError(f"Only binary classification is supported for a 1-D y; the type of the "
                                 f"target is {type_of_target(y)} ({len(self.classes_)} distinct labels)")
            Y = codes.reshape(-1, 1).astype(float)
        else:
            Y = np.asarray(y, dtype=float)
            if not np.isin(Y, (0.0, 1.0)).all():
                bad = Y[~np.isin(Y, (0.0, 1.0))][0]
                raise InputError(f"y must hold 0/1 labels in every column (Unknown label type: a value "
                                 f"{float(bad)!r})")
            self.classes_ = np.array([0, 1])
        coef = np.zeros((Y.shape[1], X.shape[1]))
        intercept = np.zeros(Y.shape[1])
        positives = Y.sum(axis=0)
        constant = (positives == 0) | (positives == len(Y))
        intercept[constant] = np.where(positives[constant] > 0, np.inf, -np.inf)
        fit = np.flatnonzero(~constant)
        self.n_iter_ = 0
        block = max(1, _BLOCK_EVENTS // len(Y))  # columns per solve: bounded working memory
        for start in range(0, fit.size, block):
            cols = fit[start:start + block]
            theta, n_iter = _newton(X, Y[:, cols], C, tol, max_iter)
            intercept[cols], coef[cols] = theta[0], theta[1:].T
            self.n_iter_ = max(self.n_iter_, n_iter)
        self.coef_, self.intercept_ = coef, intercept
        return self

    def decision_function(self, X):
        """Log-odds ``X @ coef_.T + intercept_`` of every column.

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features, the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (M, K), or (M,) when fitted on a 1-D ``y``
            The fitted log-odds.
        """
        check_is_fitted(self, ["coef_", "intercept_"])
        X = validate_data(self, X, dtype=float, reset=False)
        out = X @ self.coef_.T + self.intercept_
        return out[:, 0] if self._single else out

    def predict_proba(self, X):
        """P(label 1) of every column (the logistic function of the log-odds).

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features, the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (M, 2) when fitted on a 1-D ``y``, else (M, K)
            ``[P(0), P(1)]`` for one column, P(1) per column for several.
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1 - p, p]) if self._single else p

    def predict(self, X):
        """0/1 labels: log-odds above 0.

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features, the columns seen in ``fit``.

        Returns
        -------
        ndarray of shape (M, K) or (M,)
            1 where the fitted log-odds are positive (for a 1-D ``y``, its
            second label, ``classes_[1]``).
        """
        positive = (self.decision_function(X) > 0).astype(int)
        return self.classes_[positive] if self._single else positive


def _check_params(C, tol, max_iter):
    if isinstance(C, bool) or not isinstance(C, (int, float, np.number)) or not 0 < C < np.inf:
        raise InputError(f"C must be a positive finite number, got {C!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.number)) or not 0 < tol < np.inf:
        raise InputError(f"tol must be a positive finite number, got {tol!r}")
    return float(C), float(tol), count(max_iter, "max_iter", minimum=1)


def _newton(X, Y, C, tol, max_iter):
    """Truncated Newton for all columns: theta (F + 1, K), row 0 the intercepts."""
    n = X.shape[0]
    Xa = np.column_stack([np.ones(n), X])
    Xa2 = Xa * Xa
    penalised = np.ones((Xa.shape[1], 1))
    penalised[0] = 0.0
    theta = np.zeros((Xa.shape[1], Y.shape[1]))
    active = np.arange(Y.shape[1])
    gtol = tol * C * n
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is reported)
        T, Ya = theta[:, active], Y[:, active]
        z = Xa @ T
        p = expit(z)
        grad = C * (Xa.T @ (p - Ya)) + penalised * T
        done = np.abs(grad).max(axis=0) <= gtol
        if done.all():
            active = active[:0]
            break
        keep = ~done
        active, T, Ya, z, p, grad = active[keep], T[:, keep], Ya[:, keep], z[:, keep], p[:, keep], grad[:, keep]
        w = p * (1.0 - p)
        step = _cg(Xa, Xa2, C * w, penalised, -grad)
        theta[:, active] = T + _line_search(Xa, Ya, C, penalised, T, z, grad, step) * step
    if active.size:
        from sklearn.exceptions import ConvergenceWarning

        warn(f"LogisticColumns: {active.size} of {Y.shape[1]} columns did not converge in "
             f"max_iter={max_iter} Newton iterations; increase max_iter", ConvergenceWarning)
    return theta, n_iter


def _objective(z, Y, C, penalised, T):
    return C * (np.logaddexp(0.0, z) - Y * z).sum(axis=0) + 0.5 * (penalised * T * T).sum(axis=0)


def _line_search(Xa, Y, C, penalised, T, z, grad, step):
    """Armijo backtracking per column: the step length of each column (1, 1/2, ...)."""
    f0 = _objective(z, Y, C, penalised, T)
    slope = (grad * step).sum(axis=0)
    dz = Xa @ step
    t = np.ones(T.shape[1])
    todo = np.arange(T.shape[1])
    for _ in range(40):
        tt = t[todo]
        f = _objective(z[:, todo] + tt * dz[:, todo], Y[:, todo], C, penalised, T[:, todo] + tt * step[:, todo])
        ok = f <= f0[todo] + 1e-4 * tt * slope[todo]
        todo = todo[~ok]
        if not todo.size:
            break
        t[todo] *= 0.5
    t[todo] = 0.0  # no decrease found (already at the optimum to rounding)
    return t


def _cg(Xa, Xa2, W, penalised, b):
    """Solve H v = b for every column by Jacobi-preconditioned conjugate gradients, inexactly."""
    diag = Xa2.T @ W + penalised + 1e-12
    norm_b = np.sqrt((b * b).sum(axis=0))
    target = np.minimum(0.5, np.sqrt(norm_b)) * norm_b
    v = np.zeros_like(b)
    r = b.copy()
    zr = r / diag
    d = zr.copy()
    rz = (r * zr).sum(axis=0)
    live = np.arange(b.shape[1])
    for _ in range(2 * Xa.shape[1] + 10):
        dl = d[:, live]
        Hd = Xa.T @ (W[:, live] * (Xa @ dl)) + penalised * dl
        alpha = rz[live] / (dl * Hd).sum(axis=0)
        v[:, live] += alpha * dl
        r[:, live] -= alpha * Hd
        res = np.sqrt((r[:, live] ** 2).sum(axis=0))
        keep = res > target[live]
        live = live[keep]
        if not live.size:
            break
        zr_l = r[:, live] / diag[:, live]
        rz_new = (r[:, live] * zr_l).sum(axis=0)
        d[:, live] = zr_l + (rz_new / rz[live]) * d[:, live]
        rz[live] = rz_new
    return v
