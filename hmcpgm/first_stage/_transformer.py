"""The scikit-learn transformer: out-of-fold scores of the training rows, scores of new rows."""

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from .._columns import POSITIONAL_ROWS, is_frame, rows_aligned
from .._fit_params import check_fit_time_params, fit_time_params
from .._util import check_seed
from ..exceptions import InputError
from ._defaults import default_classifier, default_classwise_classifier
from ._inputs import dense_labels, label_matrix
from ._scorer import ColumnScorer, check_method, column_scores


def _no_score(estimator, X, y):  # cross_validate needs a scorer; the scores are not used
    return 0.0


class OutOfFoldScores(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """First-stage scores as a scikit-learn transformer: out of fold on the training rows.

    ``fit_transform(X, y)`` returns the out-of-fold scores of the training rows
    (``cross_val_predict``, as ``StackingClassifier`` does): row ``m`` is scored
    by a model that never saw row ``m``. ``fit(X, y)`` also fits the model that
    scores new rows with ``transform(X)``. In a ``Pipeline`` the next step is
    therefore fitted on out-of-fold scores and predicts from scores of the
    refitted model. With DataFrame labels the scores are a DataFrame named by
    class (the labels' columns, in their order), which the second stage
    matches to its hierarchy by name.

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
        matrix). Default: False when ``estimator`` is None, True otherwise. An
        estimator ending in :class:`LogisticColumns` (the class-wise default)
        fits every class's own model in one call, without clones.
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
        for the other classes (``refit=True``): the Jeffreys-smoothed prevalence
        on the method's scale (its log-odds for ``decision_function``; 0 or 1 for
        ``predict``), as in every fold (see :mod:`hmcpgm.first_stage`).
    method_ : str
        The scoring method used.
    classwise_ : bool
        Whether one model per class was fitted (a clone of ``estimator`` per
        class, or one :class:`LogisticColumns` for all of them).
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
        method = check_method(self.method)
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
        return ColumnScorer(estimator, method, classwise, bool(self.progress))

    def _splits(self, X, Y):
        from sklearn.model_selection import KFold, check_cv

        cv = self.cv
        if isinstance(cv, (bool, np.bool_)):
            raise InputError(f"cv must be an int of at least 2, a splitter or an iterable, got {cv!r}")
        check_seed(self.random_state, "random_state")
        if isinstance(cv, (int, np.integer)):
            if cv < 2:
                raise InputError(f"cv must be an int of at least 2, a splitter or an iterable, got {cv!r}")
            if cv > X.shape[0]:
                raise InputError(f"cv={cv} folds need at least {cv} rows, got n_samples={X.shape[0]}")
            cv = KFold(int(cv), shuffle=True, random_state=self.random_state)
        else:
            cv = check_cv(cv, Y, classifier=False)
        splits = list(cv.split(X, Y))
        scored = np.zeros(X.shape[0], dtype=np.intp)
        for f, (train, test) in enumerate(splits):
            if np.intersect1d(train, test).size:
                raise InputError(f"cv's split {f} trains on rows it scores: an out-of-fold score must come from a "
                                 "model that never saw its row")
            scored[test] += 1
        if (scored != 1).any():
            r = int(np.flatnonzero(scored != 1)[0])
            raise InputError(f"cv must put every row in exactly one test fold (a partition of the rows); row {r} is "
                             f"in {scored[r]}")
        return splits

    def _validate(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        if is_frame(X) and is_frame(y):  # rows paired by index, as everywhere in hmcpgm
            y = rows_aligned(y, X.index, "y", "X")
        # a DataFrame's column labels, whatever their type (scikit-learn's feature_names_in_ holds strings only)
        self._columns = tuple(X.columns) if is_frame(X) else None
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float)
        y = dense_labels(y)
        if y.ndim == 1 and len(np.unique(y)) == 1:  # one class, in every row (LabelBinarizer gives it 0s)
            y = np.ones((len(y), 1), dtype=int)
        elif y.ndim == 1:  # class labels: one 0/1 column per class (one for a binary target)
            from sklearn.preprocessing import LabelBinarizer

            y = LabelBinarizer().fit_transform(y)
        Y = label_matrix(y, "y")
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
            The fitted transformer.
        """
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """Fit, and return the out-of-fold scores of the training rows.

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features; NaN marks a missing value (the default estimators impute).
        y : array-like of shape (M, K) or (M,)
            0/1 labels, or 1-D class labels, as in :meth:`fit`.
        **fit_params
            Not supported (must be empty).

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            Row ``m`` scored by a model that never saw row ``m``. A DataFrame
            when ``y`` is one: its columns, and the rows of ``X`` (a DataFrame)
            or of ``y``, so that the second stage matches them by name.
        """
        if fit_params:
            raise InputError(f"OutOfFoldScores.fit_transform takes no fit parameters, got {sorted(fit_params)}")
        scorer = self._scorer()
        used = fit_time_params(self, ("n_jobs", "progress"))  # kept once the fit succeeds
        names = list(y.columns) if is_frame(y) else None
        # the rows of the scores: X's (y is aligned to them), else y's (paired by position)
        index = X.index if is_frame(X) else (y.index if names is not None else None)
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
            self._joint = final.joint_
            self.constants_ = final.constants_
            self.method_ = final.method_
        else:
            from sklearn.model_selection import cross_validate

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
        self._class_names = names
        self._fit_params = used  # transform refuses a change of these (check_fit_time_params)
        return self._named(scores, index)

    def _named(self, scores, index):
        """``scores`` as a DataFrame named by class when the labels were one, else as they are.

        The columns follow the labels' columns, not the hierarchy's order, so an
        array would be read in the wrong order by a second stage that matches
        DataFrame labels by name; named, it is aligned by name (and by row index).
        """
        if self._class_names is None:
            return scores
        import pandas as pd

        frame = pd.DataFrame(scores, index=index, columns=list(self._class_names))
        if index is None:  # an array X: rows paired with y by position (rows_paired), as with an array
            frame.attrs[POSITIONAL_ROWS] = True
        return frame

    def get_feature_names_out(self, input_features=None):
        """Names of the score columns: the class names of DataFrame labels, else ``outoffoldscores0``, ...

        With ``set_output(transform="pandas")`` the scores are then a DataFrame
        named by class, which the second stage aligns by name; with array labels
        the generic names, which the second stage reads in class order (as the
        array's columns).

        Parameters
        ----------
        input_features : array-like of str, optional
            Ignored (the output columns are classes, not features).

        Returns
        -------
        ndarray of object
            One name per class.
        """
        check_is_fitted(self, "n_classes_")
        if getattr(self, "_class_names", None) is not None:
            return np.asarray(self._class_names, dtype=object)
        return super().get_feature_names_out(input_features)

    def transform(self, X):
        """Scores of new rows (refitted model, or the mean of the fold models).

        Parameters
        ----------
        X : array-like of shape (M, F)
            Features of the new rows, the same columns as in training (a
            DataFrame's are matched to the training DataFrame's by name).

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            One score column per class; a DataFrame named by class (indexed as
            ``X``) when the training labels were one.
        """
        check_is_fitted(self, ["estimators_", "method_"])
        check_fit_time_params(self, getattr(self, "_fit_params", None))  # refit=False after a refit: 1-D means
        index = X.index if is_frame(X) else None
        columns = getattr(self, "_columns", None)
        if index is not None and columns is not None and list(X.columns) != list(columns):
            if len(set(columns)) != len(columns) or set(X.columns) != set(columns) or X.columns.has_duplicates:
                missing = [c for c in columns if c not in set(X.columns)]
                raise InputError(f"X's columns are not the training DataFrame's (feature names): it lacks "
                                 f"{missing[:3]}" if missing else "X's columns are not the training DataFrame's "
                                 "(feature names): it has other or repeated columns")
            X = X[list(columns)]  # the training columns in another order: matched by name
        X = validate_data(self, X, ensure_all_finite="allow-nan", dtype=float, reset=False)
        if self.refit:
            scores = column_scores(self.estimators_, self.constants_, self._joint, self.method_, X)
        else:
            scores = np.mean([est.predict(X) for est in self.estimators_], axis=0)
        return self._named(scores, index)
