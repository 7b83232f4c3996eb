"""First-stage classifier scores: one score per (object, class) from features.

The second stage (mLPR) is fitted on scores of labelled objects. Scores of the
very objects a classifier was trained on are optimistic, so the training scores
are *out of fold*: the rows are split into ``n_splits`` folds and each fold is
scored by classifiers trained on the other folds (:func:`out_of_fold_scores`).
New rows (validation, test) are scored by classifiers trained on all training
rows (:func:`fit_first_stage` then :func:`predict_scores`).

Two ways to fit:

* ``joint=True``: one estimator fitted once on the whole (M, K) label matrix
  (scikit-learn multi-output). The default classifier works this way: mean
  imputation of missing features, standardisation, and ridge regression of the
  0/1 labels on the features for all classes at once, with the penalty chosen by
  efficient leave-one-out cross-validation (``RidgeCV``), one linear solve for
  every class. On cellcycle_GO (1,625 x 77, 4,125 classes) per-class logistic
  regression would take minutes; see ``bench/bench_first_stage.py``.
* ``joint=False``: any scikit-learn classifier, cloned and fitted once per class
  (with a progress bar over classes).

Scores come from ``decision_function`` when the estimator has one, else
``predict_proba[:, 1]``, else ``predict`` (regressors such as the default), the
same method for every class (``method`` forces one). A class whose training
labels are all 0 or all 1 (in a fold, or overall) cannot be fitted; it gets the
constant score equal to its training positive fraction, 0.0 or 1.0.
"""

from dataclasses import dataclass

import numpy as np

from .exceptions import InputError, LabelError

__all__ = ["FirstStageModel", "default_classifier", "fit_first_stage", "out_of_fold_scores", "predict_scores"]

_METHODS = ("auto", "decision_function", "predict_proba", "predict")


def default_classifier():
    """The default first stage: impute, standardise, multi-output ridge on 0/1 labels.

    ``SimpleImputer(strategy="mean")``, ``StandardScaler()`` and
    ``RidgeCV(alphas=numpy.logspace(-1, 4, 11))``, fitted jointly on all classes;
    its scores are the ridge predictions (a linear estimate of P(Y = 1 | x)).

    Returns
    -------
    sklearn.pipeline.Pipeline

    Examples
    --------
    >>> default_classifier().steps[-1][0]
    'ridgecv'
    """
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(
        SimpleImputer(strategy="mean"), StandardScaler(), RidgeCV(alphas=np.logspace(-1, 4, 11))
    )


@dataclass(frozen=True, eq=False)
class FirstStageModel:
    """Classifiers fitted on all training rows, made by :func:`fit_first_stage`.

    Attributes
    ----------
    estimators : list
        One fitted estimator (``joint``) or one per class (None for a class with
        a constant score).
    constants : ndarray of shape (K,)
        The constant score of classes whose training labels were all 0 or all 1,
        NaN for the other classes.
    joint : bool
    method : str
        The scoring method used: ``"decision_function"``, ``"predict_proba"`` or ``"predict"``.
    n_features : int
    """

    estimators: list
    constants: np.ndarray
    joint: bool
    method: str
    n_features: int

    @property
    def n_classes(self):
        """int: the number of classes K."""
        return len(self.constants)


def out_of_fold_scores(
    X,
    labels,
    classifier=None,
    *,
    n_splits=5,
    seed=0,
    method="auto",
    joint=None,
    progress=True,
    return_folds=False,
):
    """Out-of-fold first-stage scores of the training rows.

    The rows are shuffled into ``n_splits`` folds (``KFold(shuffle=True,
    random_state=seed)``, the same folds for every class); row ``m`` is scored by
    a classifier that never saw row ``m``.

    Parameters
    ----------
    X : array-like of shape (M, F)
        Features; NaN marks a missing value (the default classifier imputes).
    labels : array-like of shape (M, K)
        0/1 labels, column ``k`` for class ``k``.
    classifier : scikit-learn estimator, optional
        Cloned (``sklearn.base.clone``) for every fit. Default: :func:`default_classifier`.
    n_splits : int
        Number of folds, at least 2.
    seed : int or None
        Shuffling of the folds.
    method : {"auto", "decision_function", "predict_proba", "predict"}
        How a fitted estimator scores rows; "auto" takes the first available in
        that order.
    joint : bool, optional
        Fit one estimator on all classes at once (it must accept a 2-D label
        matrix) instead of one per class. Default: True for the default
        classifier, False for a given one.
    progress : bool
        Show a tqdm progress bar (over classes, or over folds when ``joint``).
    return_folds : bool
        Also return the fold of each row.

    Returns
    -------
    scores : ndarray of shape (M, K), float
    folds : ndarray of shape (M,), int
        Only with ``return_folds``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = np.column_stack([X[:, 0] > 0, (X[:, 0] > 0) & (X[:, 1] > 0), np.zeros(60)])
    >>> s = out_of_fold_scores(X, y, n_splits=3, progress=False)
    >>> s.shape, bool(np.all(s[:, 2] == 0.0))
    ((60, 3), True)
    """
    X, labels = _check_inputs(X, labels)
    n_splits = _check_splits(n_splits, X.shape[0])
    method = _check_method(method)
    classifier, joint = _resolve(classifier, joint)
    from sklearn.model_selection import KFold

    folds = np.empty(X.shape[0], dtype=np.intp)
    splits = list(KFold(n_splits, shuffle=True, random_state=seed).split(X))
    for f, (_, test) in enumerate(splits):
        folds[test] = f
    scores = np.empty(labels.shape, dtype=float)
    if joint:
        for train, test in _bar(splits, progress, "first stage (folds)"):
            model = _fit_joint(classifier, X[train], labels[train], method)
            scores[test] = predict_scores(model, X[test])
    else:
        for k in _bar(range(labels.shape[1]), progress, "first stage (classes)"):
            for train, test in splits:
                scores[test, k] = _fit_predict_one(
                    classifier, X[train], labels[train, k], X[test], method
                )
    return (scores, folds) if return_folds else scores


def fit_first_stage(X, labels, classifier=None, *, method="auto", joint=None, progress=True):
    """Fit first-stage classifiers on all training rows, to score new rows.

    Parameters are those of :func:`out_of_fold_scores`.

    Returns
    -------
    FirstStageModel

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2))
    >>> y = np.column_stack([X[:, 0] > 0, np.ones(50)])
    >>> model = fit_first_stage(X, y, progress=False)
    >>> s = predict_scores(model, X[:4])
    >>> s.shape, s[:, 1].tolist()
    ((4, 2), [1.0, 1.0, 1.0, 1.0])
    """
    X, labels = _check_inputs(X, labels)
    method = _check_method(method)
    classifier, joint = _resolve(classifier, joint)
    if joint:
        return _fit_joint(classifier, X, labels, method)
    from sklearn.base import clone

    estimators, constants, used = [], np.full(labels.shape[1], np.nan), set()
    for k in _bar(range(labels.shape[1]), progress, "first stage (classes)"):
        constant = _constant(labels[:, k])
        if constant is None:
            est = clone(classifier).fit(X, labels[:, k])
            used.add(_pick_method(est, method))
            estimators.append(est)
        else:
            constants[k] = constant
            estimators.append(None)
    resolved = used.pop() if used else (method if method != "auto" else "predict")
    return FirstStageModel(estimators, constants, False, resolved, X.shape[1])


def predict_scores(model, X):
    """Score new rows with a :class:`FirstStageModel`.

    Parameters
    ----------
    model : FirstStageModel
    X : array-like of shape (M, F)

    Returns
    -------
    ndarray of shape (M, K), float
    """
    if not isinstance(model, FirstStageModel):
        raise TypeError(
            f"model must be a FirstStageModel from fit_first_stage, got {type(model).__name__}"
        )
    X = _check_features(X)
    if X.shape[1] != model.n_features:
        raise InputError(
            f"X has {X.shape[1]} features but the first stage was fitted on {model.n_features}"
        )
    scores = np.empty((X.shape[0], model.n_classes), dtype=float)
    if model.joint:
        scores[:] = _joint_scores(model.estimators[0], X, model.method, model.n_classes)
    else:
        for k, est in enumerate(model.estimators):
            if est is not None:
                scores[:, k] = _score(est, X, model.method)
    fixed = ~np.isnan(model.constants)
    scores[:, fixed] = model.constants[fixed]
    return scores


# ---------------------------------------------------------------------- helpers
def _fit_joint(classifier, X, labels, method):
    from sklearn.base import clone

    try:
        est = clone(classifier).fit(X, labels)
    except ValueError as exc:
        if labels.shape[1] > 1 and ("1d" in str(exc) or "shape" in str(exc)):
            raise InputError(
                f"joint=True but {type(classifier).__name__} cannot fit a 2-D label matrix "
                f"({exc}); use joint=False to fit one classifier per class"
            ) from None
        raise
    constants = np.full(labels.shape[1], np.nan)
    for k in range(labels.shape[1]):
        c = _constant(labels[:, k])
        if c is not None:
            constants[k] = c
    return FirstStageModel([est], constants, True, _pick_method(est, method), X.shape[1])


def _fit_predict_one(classifier, X_train, y_train, X_test, method):
    constant = _constant(y_train)
    if constant is not None:
        return constant
    from sklearn.base import clone

    est = clone(classifier).fit(X_train, y_train)
    return _score(est, X_test, _pick_method(est, method))


def _constant(y):
    positives = int(np.count_nonzero(y))
    if positives == 0:
        return 0.0
    if positives == len(y):
        return 1.0
    return None


def _pick_method(est, method):
    if method != "auto":
        if not hasattr(est, method):
            raise InputError(
                f"method={method!r} but the classifier {type(est).__name__} has no {method}()"
            )
        return method
    for name in _METHODS[1:]:
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


def _joint_scores(est, X, method, n_classes):
    out = getattr(est, method)(X)
    if isinstance(out, list):  # predict_proba of multi-output classifiers: one (M, 2) array per class
        cols = []
        for k, p in enumerate(out):
            classes = list(est.classes_[k]) if hasattr(est, "classes_") else [0, 1]
            cols.append(p[:, classes.index(1)] if 1 in classes else np.zeros(X.shape[0]))
        out = np.column_stack(cols)
    out = np.asarray(out, dtype=float)
    if out.shape != (X.shape[0], n_classes):
        raise InputError(
            f"the joint classifier's {method}() returned shape {out.shape}, expected "
            f"({X.shape[0]}, {n_classes}); use joint=False for a single-output classifier"
        )
    return out


def _resolve(classifier, joint):
    if classifier is None:
        return default_classifier(), True if joint is None else bool(joint)
    if not (hasattr(classifier, "fit") and hasattr(classifier, "get_params")):
        raise TypeError(
            f"classifier must be a scikit-learn estimator (with fit and get_params), "
            f"got {type(classifier).__name__}"
        )
    return classifier, False if joint is None else bool(joint)


def _check_features(X):
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"X must be a numeric (n_objects, n_features) array: {exc}") from None
    if X.ndim != 2:
        raise InputError(f"X must be 2-D (n_objects, n_features), got shape {X.shape}")
    if np.isinf(X).any():
        raise InputError("X must not hold infinite values (NaN marks a missing value)")
    return X


def _check_inputs(X, labels):
    X = _check_features(X)
    y = np.asarray(labels)
    if y.ndim != 2:
        raise LabelError(f"labels must be 2-D (n_objects, n_classes), got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but labels has {y.shape[0]}")
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise LabelError(f"labels must hold only 0 and 1; row {r}, column {c} holds {y[r, c]!r}")
    return X, y.astype(np.int8)


def _check_splits(n_splits, m):
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
        raise InputError(f"n_splits must be an int of at least 2, got {n_splits!r}")
    if n_splits > m:
        raise InputError(f"n_splits={n_splits} is more than the {m} rows")
    return int(n_splits)


def _check_method(method):
    if method not in _METHODS:
        raise InputError(f"method must be one of {_METHODS}, got {method!r}")
    return method


def _bar(iterable, progress, desc):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, leave=False)
