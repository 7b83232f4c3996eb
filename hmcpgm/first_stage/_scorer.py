"""The per-fold scorer: fit one estimator on all classes (joint) or one per class, and score rows.

Scores come from ``decision_function``, ``predict_proba[:, 1]`` or ``predict``;
a class whose training labels are all 0 or all 1 gets a constant score on that
method's scale (:func:`constant_scores`). A
class-wise estimator that fits every column on its own by itself
(:class:`LogisticColumns`, alone or as a pipeline's last step) is fitted once
on all columns: the same models, without a clone per class.
"""

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..exceptions import InputError
from ._logistic import LogisticColumns

METHODS = ("auto", "decision_function", "predict_proba", "predict")


class ColumnScorer(BaseEstimator):
    """Fit one estimator on all columns (joint) or one per column; ``predict`` gives scores.

    The unit that ``cross_val_predict`` clones and fits on each fold: its
    ``predict`` returns the (M, K) score matrix, constant classes included.
    ``joint_`` says whether one fitted estimator scores every column.
    """

    def __init__(self, estimator=None, method="auto", classwise=False, progress=False):
        self.estimator = estimator
        self.method = method
        self.classwise = classwise
        self.progress = progress

    def fit(self, X, Y):
        positives = np.count_nonzero(Y, axis=0)
        constant = (positives == 0) | (positives == Y.shape[0])
        self.joint_ = not self.classwise or fits_columns_separately(self.estimator)
        if not self.joint_:
            self.estimators_, used = [], set()
            for k in _bar(range(Y.shape[1]), self.progress, "first stage (classes)"):
                if not constant[k]:
                    est = clone(self.estimator).fit(X, Y[:, k])
                    used.add(_pick_method(est, self.method))
                    self.estimators_.append(est)
                else:
                    self.estimators_.append(None)
            # no class could be fitted (every one constant in these rows): the unfitted estimator says which
            # method its fitted copies use, so the constants are on the scale of the other folds' scores
            self.method_ = used.pop() if used else _pick_method(self.estimator, self.method)
        else:
            self.estimators_ = [_fit_joint(self.estimator, X, Y, constant)]
            fitted = self.estimators_[0]
            self.method_ = _pick_method(self.estimator if fitted is None else fitted, self.method)
        self.constants_ = np.where(constant, constant_scores(positives, Y.shape[0], self.method_), np.nan)
        return self

    def predict(self, X):
        return column_scores(self.estimators_, self.constants_, self.joint_, self.method_, X)


def fits_columns_separately(estimator):
    """Whether ``estimator`` (or a pipeline's last step) fits each label column on its own."""
    final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
    return isinstance(final, LogisticColumns)


def column_scores(estimators, constants, joint, method, X):
    scores = np.empty((X.shape[0], len(constants)), dtype=float)
    fixed = ~np.isnan(constants)
    if joint and estimators[0] is not None:
        out = _joint_scores(estimators[0], X, method, len(constants), int((~fixed).sum()))
        if out.shape[1] == len(constants):
            scores[:] = out
        else:  # fitted on the classes that vary (see _fit_joint)
            scores[:, ~fixed] = out
    elif not joint:
        for k, est in enumerate(estimators):
            if est is not None:
                scores[:, k] = _score(est, X, method)
    scores[:, fixed] = constants[fixed]
    return scores


def _fit_joint(classifier, X, labels, constant):
    """The joint estimator fitted on every label column, or, when it refuses columns of one value (a classifier
    needs two classes), on the columns that vary; None when none varies. Constant columns get
    :func:`constant_scores` either way."""
    try:
        return clone(classifier).fit(X, labels)
    except ValueError as exc:
        if constant.all():
            return None
        if constant.any():
            try:
                return clone(classifier).fit(X, labels[:, ~constant])
            except ValueError:
                pass
        if labels.shape[1] > 1 and ("1d" in str(exc) or "shape" in str(exc)):
            raise InputError(
                f"a joint first stage but {type(classifier).__name__} cannot fit a 2-D label matrix "
                f"({exc}); use joint=False (classwise=True) to fit one classifier per class"
            ) from None
        raise


def constant_scores(positives, n, method):
    """The score of a class that cannot be fitted (its ``n`` training labels all 0 or all 1), on ``method``'s scale.

    The least committal score: the class's training prevalence smoothed with
    Jeffreys' half count, ``q = (positives + 1/2) / (n + 1)``, never 0 or 1. For
    ``"predict_proba"`` it is ``q``; for ``"decision_function"`` its log-odds
    ``log((positives + 1/2) / (n - positives + 1/2))``, about ``-log(2n)`` for no
    positive (a logistic regression's scale; a very low, finite score for other
    margins); for ``"predict"`` the label itself, 0 or 1, which is what a
    regression or a classifier fitted on constant labels predicts.

    Parameters
    ----------
    positives : int or ndarray of int
        Positive training labels of each class.
    n : int
        Training rows.
    method : {"decision_function", "predict_proba", "predict"}
        The scoring method of the other classes.

    Returns
    -------
    float or ndarray of float
        One score per class of ``positives``.

    Examples
    --------
    >>> constant_scores(np.array([0, 4]), 4, "predict_proba").tolist()
    [0.1, 0.9]
    >>> float(constant_scores(0, 4, "decision_function")) == float(np.log(0.5 / 4.5))
    True
    >>> constant_scores(np.array([0, 4]), 4, "predict").tolist()
    [0.0, 1.0]
    """
    p = np.asarray(positives, dtype=float)
    if method == "predict":
        return p / max(n, 1)
    if method == "decision_function":
        return np.log((p + 0.5) / (n - p + 0.5))
    return (p + 0.5) / (n + 1.0)


def _pick_method(est, method):
    if method != "auto":
        if not hasattr(est, method):
            raise InputError(
                f"method={method!r} but the classifier {type(est).__name__} has no {method}()"
            )
        return method
    for name in METHODS[1:]:
        if hasattr(est, name):
            return name
    raise InputError(
        f"the classifier {type(est).__name__} has none of decision_function, predict_proba, predict"
    )


def _score(est, X, method):
    out = getattr(est, method)(X)
    if method == "predict_proba":
        out = np.asarray(out)
        classes = list(getattr(est, "classes_", [0, 1]))
        return out[:, classes.index(1)]
    return np.asarray(out, dtype=float).reshape(X.shape[0])


def _joint_scores(est, X, method, n_classes, n_fitted=None):
    out = getattr(est, method)(X)
    if isinstance(out, list):  # predict_proba of multi-output classifiers: one (M, 2) array per class
        cols = []
        for k, p in enumerate(out):
            classes = list(est.classes_[k]) if hasattr(est, "classes_") else [0, 1]
            cols.append(p[:, classes.index(1)] if 1 in classes else np.zeros(X.shape[0]))
        out = np.column_stack(cols)
    out = np.asarray(out, dtype=float)
    if out.ndim == 1 and 1 in (n_classes, n_fitted):
        out = out[:, None]
    if out.shape not in ((X.shape[0], n_classes), (X.shape[0], n_fitted)):
        raise InputError(
            f"the joint classifier's {method}() returned shape {out.shape}, expected "
            f"({X.shape[0]}, {n_classes}); use joint=False (classwise=True) for a single-output classifier"
        )
    return out


def check_method(method):
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
    return method


def _bar(iterable, progress, desc):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, leave=False)
