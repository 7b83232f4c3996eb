"""The earlier functional interface: out_of_fold_scores, fit_first_stage and predict_scores."""

from dataclasses import dataclass

import numpy as np

from .._columns import is_frame, rows_aligned
from .._util import check_seed
from ..exceptions import InputError, LabelError
from ._defaults import default_classifier, default_classwise_classifier
from ._inputs import check_features, dense_labels, label_matrix
from ._scorer import ColumnScorer, check_method, column_scores


@dataclass(frozen=True, eq=False)
class FirstStageModel:
    """Classifiers fitted on all training rows, made by :func:`fit_first_stage`.

    Attributes
    ----------
    estimators : list
        One fitted estimator that scores every class (``joint``) or one per
        class (None for a class with a constant score).
    constants : ndarray of shape (K,)
        The constant score of classes whose training labels were all 0 or all 1,
        NaN for the other classes: the Jeffreys-smoothed prevalence on
        ``method``'s scale (see :mod:`hmcpgm.first_stage`).
    joint : bool
    method : str
        The scoring method used: ``"decision_function"``, ``"predict_proba"`` or ``"predict"``.
    n_features : int
    classes : tuple, optional
        The column names of DataFrame training labels (then :func:`predict_scores`
        returns a DataFrame with these columns); None for array labels.
    feature_names : tuple, optional
        The column names of DataFrame training features: :func:`predict_scores`
        matches a DataFrame's columns to them by name. None for array features.
    """

    estimators: list
    constants: np.ndarray
    joint: bool
    method: str
    n_features: int
    classes: tuple = None
    feature_names: tuple = None

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
    """Out-of-fold first-stage scores of the training rows (see :class:`OutOfFoldScores`).

    ``OutOfFoldScores(classifier, cv=n_splits, random_state=seed, method=method,
    classwise=not joint).fit_transform(X, labels)``, without the final refit.

    Parameters
    ----------
    X : array-like of shape (M, F)
        Features; NaN marks a missing value (the default classifier imputes).
    labels : array-like of shape (M, K)
        0/1 labels, column ``k`` for class ``k``.
    classifier : scikit-learn estimator, optional
        Default: :func:`default_classifier` (joint), or :func:`default_classwise_classifier`
        with ``joint=False``.
    n_splits : int
        Number of folds (``KFold(shuffle=True, random_state=seed)``), at least 2.
    seed : int or None
        Shuffling of the folds.
    method : {"auto", "decision_function", "predict_proba", "predict"}
        How a fitted classifier scores rows; "auto" takes the first available in
        that order.
    joint : bool, optional
        Fit one estimator on all classes at once instead of one per class.
        Default: True for the default classifier, False for a given one.
    progress : bool
        Show a tqdm progress bar over classes (class-wise fitting).
    return_folds : bool
        Also return the fold of each row.

    Returns
    -------
    scores : ndarray or DataFrame of shape (M, K), float
        Row ``m`` scored by the model of the fold that left row ``m`` out; a
        DataFrame with the labels' columns (and the rows' index) when ``labels``
        is a DataFrame.
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
    from sklearn.model_selection import KFold, cross_val_predict

    frame = _frame_of(X, labels)
    X, labels = _check_inputs(X, labels)
    n_splits = _check_splits(n_splits, X.shape[0])
    scorer = _scorer_for(classifier, method, joint, progress)
    splits = list(KFold(n_splits, shuffle=True, random_state=check_seed(seed, "seed")).split(X))
    scores = cross_val_predict(scorer, X, labels, cv=splits, method="predict")
    if frame is not None:
        scores = frame(scores)
    if not return_folds:
        return scores
    folds = np.empty(X.shape[0], dtype=np.intp)
    for f, (_, test) in enumerate(splits):
        folds[test] = f
    return scores, folds


def fit_first_stage(X, labels, classifier=None, *, method="auto", joint=None, progress=True):
    """Fit first-stage classifiers on all training rows, to score new rows.

    Parameters
    ----------
    X : array-like of shape (M, F)
        Features; NaN marks a missing value (the default classifier imputes).
    labels : array-like of shape (M, K)
        0/1 labels, column ``k`` for class ``k``.
    classifier : scikit-learn estimator, optional
        Default: :func:`default_classifier` (joint), or :func:`default_classwise_classifier`
        with ``joint=False``.
    method : {"auto", "decision_function", "predict_proba", "predict"}
        How a fitted classifier scores rows; "auto" takes the first available in
        that order.
    joint : bool, optional
        Fit one estimator on all classes at once instead of one per class.
        Default: True for the default classifier, False for a given one.
    progress : bool
        Show a tqdm progress bar over classes (class-wise fitting).

    Returns
    -------
    FirstStageModel
        The fitted classifiers; score new rows with :func:`predict_scores`.

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
    classes = tuple(labels.columns) if is_frame(labels) else None
    features = tuple(X.columns) if is_frame(X) else None
    X, labels = _check_inputs(X, labels)
    scorer = _scorer_for(classifier, method, joint, progress).fit(X, labels)
    return FirstStageModel(scorer.estimators_, scorer.constants_, scorer.joint_, scorer.method_, X.shape[1], classes,
                           features)


def predict_scores(model, X):
    """Score new rows with a :class:`FirstStageModel`.

    Parameters
    ----------
    model : FirstStageModel
        Made by :func:`fit_first_stage`.
    X : array-like of shape (M, F)
        Features of the new rows, the same columns as in training (a DataFrame's
        columns matched by name when the training features were a DataFrame).

    Returns
    -------
    ndarray or DataFrame of shape (M, K), float
        One score column per class; a class whose training labels were constant
        scores that constant. A DataFrame named by class (indexed as ``X`` when
        ``X`` is a DataFrame) when the model was fitted on DataFrame labels.
    """
    if not isinstance(model, FirstStageModel):
        raise TypeError(
            f"model must be a FirstStageModel from fit_first_stage, got {type(model).__name__}"
        )
    index = X.index if is_frame(X) else None
    if index is not None and model.feature_names is not None:  # columns matched by name, as in training
        missing = [c for c in model.feature_names if c not in X.columns]
        if missing:
            raise InputError(
                f"X has no column {missing[0]!r} ({len(missing)} of the {len(model.feature_names)} training "
                "features are missing)"
            )
        X = X[list(model.feature_names)]
    X = check_features(X)
    if X.shape[1] != model.n_features:
        raise InputError(
            f"X has {X.shape[1]} features but the first stage was fitted on {model.n_features}"
        )
    scores = column_scores(model.estimators, model.constants, model.joint, model.method, X)
    if model.classes is None:
        return scores
    import pandas as pd

    return pd.DataFrame(scores, index=index, columns=list(model.classes))


def _scorer_for(classifier, method, joint, progress):
    method = check_method(method)
    if classifier is None:  # as OutOfFoldScores: ridge regression on all classes, or a logistic one per class
        joint = True if joint is None else bool(joint)
        classifier = default_classifier() if joint else default_classwise_classifier()
    elif not (hasattr(classifier, "fit") and hasattr(classifier, "get_params")):
        raise TypeError(
            f"classifier must be a scikit-learn estimator (with fit and get_params), "
            f"got {type(classifier).__name__}"
        )
    else:
        joint = False if joint is None else bool(joint)
    return ColumnScorer(classifier, method, not joint, progress)


def _frame_of(X, labels):
    """None for array labels, else scores -> DataFrame named by the labels' columns, indexed as the rows."""
    if not is_frame(labels):
        return None
    import pandas as pd

    index, columns = (X.index if is_frame(X) else labels.index), list(labels.columns)
    return lambda scores: pd.DataFrame(scores, index=index, columns=columns)


def _check_inputs(X, labels):
    if is_frame(X) and is_frame(labels):  # rows paired by index, as everywhere in hmcpgm
        labels = rows_aligned(labels, X.index, "labels", "X")
    X = check_features(X)
    y = dense_labels(labels)
    if y.ndim != 2:
        raise LabelError(f"labels must be 2-D (n_objects, n_classes), got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but labels has {y.shape[0]}")
    return X, label_matrix(y, "labels")


def _check_splits(n_splits, m):
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 2:
        raise InputError(f"n_splits must be an int of at least 2, got {n_splits!r}")
    if n_splits > m:
        raise InputError(f"n_splits={n_splits} is more than the {m} rows")
    return int(n_splits)
