"""First-stage classifier scores: one score per (object, class) from features.

The second stage (mLPR) is fitted on scores of labelled objects. Scores of the
very objects a classifier was trained on are optimistic, so the training scores
are *out of fold*: the rows are split into folds and each fold is scored by
classifiers trained on the other folds. :class:`OutOfFoldScores` is the
scikit-learn transformer that does it, the way ``StackingClassifier`` builds its
second-stage features with ``cross_val_predict``: ``fit_transform(X, y)``
returns the out-of-fold scores of the training rows, ``transform(X)`` scores new
rows.

Two first stages:

* joint (the default): one estimator fitted once on the whole (M, K) label
  matrix (scikit-learn multi-output). :func:`default_classifier` is mean
  imputation, standardisation and ridge regression of the 0/1 labels on the
  features for all classes at once, the penalty chosen by efficient
  leave-one-out cross-validation (``RidgeCV``), one linear solve for every class.
* class-wise (``classwise=True``): one clone of a binary classifier per class,
  by default :func:`default_classwise_classifier` (logistic regression). This is
  the paper's setting (one SVM per class); the scores of different classes are
  on different scales, which the second stage's per-class score models undo.

Scores come from ``decision_function`` when the estimator has one, else
``predict_proba[:, 1]``, else ``predict`` (regressors such as the default), the
same method for every class (``method`` forces one). A class whose training
labels are all 0 or all 1 (in a fold, or overall) cannot be fitted; it gets the
constant score 0.0 or 1.0.

New rows are scored either by the estimator refitted on all training rows
(``refit=True``, the default, as ``StackingClassifier``) or by the average of
the fold models (``refit=False``, cross-fitting). ``bench/realdata_study.py
--first-stage-shift`` measures how far each moves the test scores from the
out-of-fold training scores the second stage is fitted on.

The functions :func:`out_of_fold_scores`, :func:`fit_first_stage` and
:func:`predict_scores` are the earlier functional interface, kept as thin
wrappers.
"""

from dataclasses import dataclass

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from .exceptions import InputError, LabelError

__all__ = [
    "FirstStageModel",
    "OutOfFoldScores",
    "default_classifier",
    "default_classwise_classifier",
    "fit_first_stage",
    "out_of_fold_scores",
    "predict_scores",
]

_METHODS = ("auto", "decision_function", "predict_proba", "predict")


def default_classifier():
    """The default (joint) first stage: impute, standardise, multi-output ridge on 0/1 labels.

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


def default_classwise_classifier():
    """The default class-wise first stage: impute, standardise, logistic regression.

    ``SimpleImputer(strategy="mean")``, ``StandardScaler()`` and
    ``LogisticRegression(max_iter=1000)`` (L2 penalty, ``C=1``), cloned and
    fitted once per class; its scores are the decision function (log-odds).

    Returns
    -------
    sklearn.pipeline.Pipeline

    Examples
    --------
    >>> default_classwise_classifier().steps[-1][0]
    'logisticregression'
    """
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(SimpleImputer(strategy="mean"), StandardScaler(), LogisticRegression(max_iter=1000))


# ---------------------------------------------------------------------- the per-fold scorer
class _ColumnScorer(BaseEstimator):
    """Fit one estimator on all columns (joint) or one per column; ``predict`` gives scores.

    The unit that ``cross_val_predict`` clones and fits on each fold: its
    ``predict`` returns the (M, K) score matrix, constant classes included.
    """

    def __init__(self, estimator=None, method="auto", classwise=False, progress=False):
        self.estimator = estimator
        self.method = method
        self.classwise = classwise
        self.progress = progress

    def fit(self, X, Y):
        self.constants_ = np.array([_constant(Y[:, k]) for k in range(Y.shape[1])], dtype=float)
        if self.classwise:
            self.estimators_, used = [], set()
            for k in _bar(range(Y.shape[1]), self.progress, "first stage (classes)"):
                if np.isnan(self.constants_[k]):
                    est = clone(self.estimator).fit(X, Y[:, k])
                    used.add(_pick_method(est, self.method))
                    self.estimators_.append(est)
                else:
                    self.estimators_.append(None)
            self.method_ = used.pop() if used else (self.method if self.method != "auto" else "predict")
        else:
            self.estimators_ = [_fit_joint(self.estimator, X, Y)]
            self.method_ = _pick_method(self.estimators_[0], self.method)
        return self

    def predict(self, X):
        return _column_scores(self.estimators_, self.constants_, not self.classwise, self.method_, X)


def _column_scores(estimators, constants, joint, method, X):
    scores = np.empty((X.shape[0], len(constants)), dtype=float)
    if joint:
        scores[:] = _joint_scores(estimators[0], X, method, len(constants))
    else:
        for k, est in enumerate(estimators):
            if est is not None:
                scores[:, k] = _score(est, X, method)
    fixed = ~np.isnan(constants)
    scores[:, fixed] = constants[fixed]
    return scores


def _no_score(estimator, X, y):  # cross_validate needs a scorer; the scores are not used
    return 0.0


# ---------------------------------------------------------------------- the transformer
class OutOfFoldScores(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """First-stage scores as a scikit-learn transformer: out of fold on the training rows.

    ``fit_transform(X, y)`` returns the out-of-fold scores of the training rows
    (``cross_val_predict``, as ``StackingClassifier`` does): row ``m`` is scored
    by a model that never saw row ``m``. ``fit(X, y)`` also fits the model that
    scores new rows with ``transform(X)``. In a ``Pipeline`` the next step is
    therefore fitted on out-of-fold scores and predicts from scores of the
    refitted model.

    Parameters
    ----------
    estimator : scikit-learn estimator, optional
        Cloned for every fit. Default: :func:`default_classifier` (joint) or,
        with ``classwise=True``, :func:`default_classwise_classifier`.
    cv : int, cross-validation splitter or iterable, default 5
        An int is the number of folds of ``KFold(cv, shuffle=True,
        random_state=random_state)`` (the same folds for every class; unlike
        ``cross_val_predict``'s unshuffled default, since benchmark files are
        often sorted).
    method : {"auto", "decision_function", "predict_proba", "predict"}, default "auto"
        How a fitted estimator scores rows; "auto" takes the first available in
        that order.
    classwise : bool, optional
        Fit one clone of ``estimator`` per class (a binary classifier) instead of
        one estimator on all classes at once (which must accept a 2-D label
        matrix). Default: False when ``estimator`` is None, True otherwise.
    refit : bool, default True
        How ``transform`` scores new rows: True, by the estimator refitted on all
        training rows; False, by the average of the fold models (cross-fitting,
        no extra fit).
    random_state : int or None, default 0
        Shuffling of the folds when ``cv`` is an int.
    n_jobs : int, optional
        Folds fitted in parallel (joblib), as in ``cross_val_predict``.
    progress : bool, default False
        Show a progress bar over classes (class-wise fitting).

    Attributes
    ----------
    estimators_ : list
        The fitted estimators that score new rows: one (joint) or one per class
        (None for a class with a constant score); with ``refit=False`` the list
        of the fold scorers.
    constants_ : ndarray of shape (K,)
        Constant score of classes whose training labels were all 0 or all 1, NaN
        for the other classes (``refit=True``).
    method_ : str
        The scoring method used.
    classwise_ : bool
        Whether one estimator per class was fitted.
    folds_ : ndarray of shape (M,)
        The fold of each training row in the last ``fit``.
    n_features_in_ : int
    n_classes_ : int
        Number of label columns K.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, (X[:, 0] > 0) & (X[:, 1] > 0), np.zeros(60)])
    >>> first = OutOfFoldScores(cv=3)
    >>> train_scores = first.fit_transform(X, Y)      # out of fold
    >>> new_scores = first.transform(X[:5])           # refitted on all rows
    >>> train_scores.shape, new_scores.shape, bool(np.all(train_scores[:, 2] == 0.0))
    ((60, 3), (5, 3), True)
    """

    def __init__(self, estimator=None, *, cv=5, method="auto", classwise=None, refit=True, random_state=0,
                 n_jobs=None, progress=False):
        self.estimator = estimator
        self.cv = cv
        self.method = method
        self.classwise = classwise
        self.refit = refit
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.input_tags.allow_nan = True
        return tags

    # -- parameters ---------------------------------------------------------
    def _scorer(self):
        method = _check_method(self.method)
        if self.classwise is not None and not isinstance(self.classwise, (bool, np.bool_)):
            raise InputError(f"classwise must be True, False or None, got {self.classwise!r}")
        if not isinstance(self.refit, (bool, np.bool_)):
            raise InputError(f"refit must be True or False, got {self.refit!r}")
        classwise = (self.estimator is not None) if self.classwise is None else bool(self.classwise)
        estimator = self.estimator
        if estimator is None:
            estimator = default_classwise_classifier() if classwise else default_classifier()
        elif not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
            raise TypeError(
                f"estimator must be a scikit-learn estimator (with fit and get_params), "
                f"got {type(estimator).__name__}"
            )
        return _ColumnScorer(estimator, method, classwise, bool(self.progress))

    def _splits(self, X, Y):
        from sklearn.model_selection import KFold, check_cv

        cv = self.cv
        if isinstance(cv, (int, np.integer)) and not isinstance(cv, (bool, np.bool_)):
            if cv < 2:
                raise InputError(f"cv must be an int of at least 2, a splitter or an iterable, got {cv!r}")
            if cv > X.shape[0]:
                raise InputError(f"cv={cv} folds need at least {cv} rows, got n_samples={X.shape[0]}")
            cv = KFold(int(cv), shuffle=True, random_state=self.random_state)
        else:
            cv = check_cv(cv, Y, classifier=False)
        return list(cv.split(X, Y))

    def _validate(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float)
        y = np.asarray(y)
        if y.ndim == 1:  # class labels: one 0/1 column per class (one for a binary target)
            from sklearn.preprocessing import LabelBinarizer

            y = LabelBinarizer().fit_transform(y)
        Y = _label_matrix(y, "y")
        if Y.shape[0] != X.shape[0]:
            raise InputError(f"X has {X.shape[0]} rows but y has {Y.shape[0]}")
        return X, Y

    # -- fitting ------------------------------------------------------------
    def fit(self, X, y):
        """Fit the first stage (out-of-fold scores are computed and discarded).

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features; NaN marks a missing value (the default estimators impute).
        y : array-like of shape (M, K) or (M,)
            0/1 labels, column ``k`` for class ``k``; a 1-D ``y`` holds class
            labels and becomes one 0/1 column per class (one column for a
            binary target), as ``LabelBinarizer`` encodes it.

        Returns
        -------
        self
        """
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, and return the out-of-fold scores of the training rows.

        Parameters
        ----------
        X : array-like of shape (M, F)
        y : array-like of shape (M, K) or (M,)
        **fit_params
            Not supported (must be empty).

        Returns
        -------
        ndarray of shape (M, K)
        """
        if fit_params:
            raise InputError(f"OutOfFoldScores.fit_transform takes no fit parameters, got {sorted(fit_params)}")
        scorer = self._scorer()
        X, Y = self._validate(X, y)
        splits = self._splits(X, Y)
        folds = np.full(X.shape[0], -1, dtype=np.intp)
        for f, (_, test) in enumerate(splits):
            folds[test] = f
        if self.refit:
            from sklearn.model_selection import cross_val_predict

            scores = cross_val_predict(scorer, X, Y, cv=splits, method="predict", n_jobs=self.n_jobs)
            final = clone(scorer).fit(X, Y)
            self.estimators_ = final.estimators_
            self.constants_ = final.constants_
            self.method_ = final.method_
        else:
            from sklearn.model_selection import cross_validate

            if (folds < 0).any():
                raise InputError("cv must assign every row to a test fold (a partition of the rows)")
            res = cross_validate(scorer, X, Y, cv=splits, scoring=_no_score, n_jobs=self.n_jobs,
                                 return_estimator=True, return_indices=True)
            scores = np.empty(Y.shape, dtype=float)
            for est, test in zip(res["estimator"], res["indices"]["test"]):
                scores[test] = est.predict(X[test])
            self.estimators_ = list(res["estimator"])
            self.constants_ = np.full(Y.shape[1], np.nan)
            self.method_ = self.estimators_[0].method_
        self.classwise_ = scorer.classwise
        self.folds_ = folds
        self.n_classes_ = Y.shape[1]
        self._n_features_out = Y.shape[1]
        return scores

    def transform(self, X):
        """Scores of new rows (refitted model, or the mean of the fold models).

        Parameters
        ----------
        X : array-like of shape (M, F)

        Returns
        -------
        ndarray of shape (M, K)
        """
        check_is_fitted(self, ["estimators_", "method_"])
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float, reset=False)
        if self.refit:
            return _column_scores(self.estimators_, self.constants_, not self.classwise_, self.method_, X)
        return np.mean([est.predict(X) for est in self.estimators_], axis=0)


# ---------------------------------------------------------------------- functional interface
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
        Default: :func:`default_classifier`.
    n_splits : int
        Number of folds (``KFold(shuffle=True, random_state=seed)``), at least 2.
    seed : int or None
        Shuffling of the folds.
    method : {"auto", "decision_function", "predict_proba", "predict"}
    joint : bool, optional
        Fit one estimator on all classes at once instead of one per class.
        Default: True for the default classifier, False for a given one.
    progress : bool
        Show a tqdm progress bar over classes (class-wise fitting).
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
    from sklearn.model_selection import KFold, cross_val_predict

    X, labels = _check_inputs(X, labels)
    n_splits = _check_splits(n_splits, X.shape[0])
    scorer = _scorer_for(classifier, method, joint, progress)
    splits = list(KFold(n_splits, shuffle=True, random_state=seed).split(X))
    scores = cross_val_predict(scorer, X, labels, cv=splits, method="predict")
    if not return_folds:
        return scores
    folds = np.empty(X.shape[0], dtype=np.intp)
    for f, (_, test) in enumerate(splits):
        folds[test] = f
    return scores, folds


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
    scorer = _scorer_for(classifier, method, joint, progress).fit(X, labels)
    return FirstStageModel(scorer.estimators_, scorer.constants_, not scorer.classwise, scorer.method_, X.shape[1])


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
    return _column_scores(model.estimators, model.constants, model.joint, model.method, X)


# ---------------------------------------------------------------------- helpers
def _scorer_for(classifier, method, joint, progress):
    method = _check_method(method)
    if classifier is None:
        classifier, joint = default_classifier(), True if joint is None else bool(joint)
    elif not (hasattr(classifier, "fit") and hasattr(classifier, "get_params")):
        raise TypeError(
            f"classifier must be a scikit-learn estimator (with fit and get_params), "
            f"got {type(classifier).__name__}"
        )
    else:
        joint = False if joint is None else bool(joint)
    return _ColumnScorer(classifier, method, not joint, progress)


def _fit_joint(classifier, X, labels):
    try:
        return clone(classifier).fit(X, labels)
    except ValueError as exc:
        if labels.shape[1] > 1 and ("1d" in str(exc) or "shape" in str(exc)):
            raise InputError(
                f"a joint first stage but {type(classifier).__name__} cannot fit a 2-D label matrix "
                f"({exc}); use joint=False (classwise=True) to fit one classifier per class"
            ) from None
        raise


def _constant(y):
    positives = int(np.count_nonzero(y))
    if positives == 0:
        return 0.0
    if positives == len(y):
        return 1.0
    return np.nan


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
    if out.ndim == 1 and n_classes == 1:
        out = out[:, None]
    if out.shape != (X.shape[0], n_classes):
        raise InputError(
            f"the joint classifier's {method}() returned shape {out.shape}, expected "
            f"({X.shape[0]}, {n_classes}); use joint=False (classwise=True) for a single-output classifier"
        )
    return out


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


def _label_matrix(labels, name="Y"):
    y = np.asarray(labels)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2:
        raise LabelError(f"{name} must be 2-D (n_objects, n_classes) or 1-D, got shape {y.shape}")
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise LabelError(f"{name} must hold only 0 and 1; row {r}, column {c} holds {y[r, c]!r}")
    return y.astype(np.int8)


def _check_inputs(X, labels):
    X = _check_features(X)
    y = np.asarray(labels)
    if y.ndim != 2:
        raise LabelError(f"labels must be 2-D (n_objects, n_classes), got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but labels has {y.shape[0]}")
    return X, _label_matrix(y, "labels")


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
