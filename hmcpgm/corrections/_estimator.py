"""A scikit-learn estimator: per-class calibration, then a correction (:class:`HierarchicalCorrection`)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.utils.validation import check_is_fitted

from .._arrays import binary_matrix, label_target
from .._fit_params import check_fit_time_params, check_threshold, fit_time_params
from .._util import warn
from .._validation import (
    check_hierarchy,
    class_matrix,
    estimator_table,
    frame_scores,
    is_frame,
    rows_paired,
    score_array,
)
from ..exceptions import InputError
from ..hierarchy import Hierarchy
from ._calibration import CALIBRATIONS, fit_calibration
from ._inputs import within_limit
from ._registry import CORRECTIONS, resolve_options
from ._rules import maxnorm, qnorm

__all__ = ["HierarchicalCorrection"]

NORMALISATIONS = {"maxnorm": maxnorm, "qnorm": qnorm}


class HierarchicalCorrection(ClassifierMixin, MultiOutputMixin, BaseEstimator):
    """Calibrate each class's scores, then apply a classic hierarchical correction.

    A second stage in the place of :class:`hmcpgm.MLPR`: ``fit(X, y)`` learns
    one increasing map per class from first-stage scores ``X`` and 0/1 labels
    ``y``; ``predict_proba`` calibrates new scores and applies the correction.
    Scores and labels are taken as :class:`hmcpgm.MLPR` takes them: arrays in
    class order, DataFrames by class name (DataFrame out), or one object as a
    Series labelled by class names (a one-row DataFrame out).

    Parameters
    ----------
    hierarchy : Hierarchy, optional
        The class hierarchy; its ``classes`` fix the column order of arrays.
        None means flat classes named by the columns of a DataFrame ``X`` (or
        ``y``), else ``0 .. K-1``.
    calibration : {"isotonic", "platt", "none", "maxnorm", "qnorm"}, default "isotonic"
        ``"isotonic"`` and ``"platt"`` are fitted per class on ``(X, y)`` (see
        :func:`hmcpgm.corrections.fit_calibration`); ``"none"`` takes the scores
        as they are (values outside [0, 1] stay outside: the corrected values are
        then no probabilities, so compare them with a cutoff of your own, as
        ``threshold`` lies in (0, 1)); ``"maxnorm"`` and ``"qnorm"`` are HEMDAG's
        normalisations (maxnorm divides each class by its largest score, as
        HEMDAG does: scores are expected non-negative), computed on the matrix
        being predicted (nothing is fitted), as HEMDAG
        normalises its whole score matrix: an object's values then depend on the
        other rows predicted with it, so predict all objects at once (one row
        alone is normalised against itself, with a warning).
    correction : str, default "tpr_dag"
        A key of :data:`hmcpgm.corrections.CORRECTIONS` (``"flat"``, ``"htd"``,
        ``"gpav"``, ``"tpr_dag"``, ``"iso_tpr"``, ``"descens"``,
        ``"obozinski"``, ``"mcm"``).
    options : dict, optional
        Options of the correction (e.g. ``{"bottomup": "threshold", "t": 0.6}``).
    threshold : float in (0, 1), default 0.5
        :meth:`predict` labels a class positive when its corrected value is at
        least ``threshold``; with a hierarchy-consistent correction a class is
        then never positive without its parents. Read at prediction as it is
        then; a change of any other parameter after ``fit`` is refused by
        predictions until the model is fitted again.
    close_labels : bool, default False
        Close the labels of :meth:`fit` and :meth:`score` upward instead of
        raising when a positive class has a negative parent, as
        :class:`hmcpgm.MLPR` does: labels that break the hierarchy are most often
        annotations not yet propagated to the ancestors, or columns in another
        order than the hierarchy's classes.

    Attributes
    ----------
    calibration_ : Calibration or None
        The fitted per-class maps (None for ``"none"``, ``"maxnorm"``, ``"qnorm"``).
    correction_ : Correction
        The registry entry applied.
    options_ : dict
        Every option the correction is called with.
    hierarchy_ : Hierarchy
        The hierarchy of the fitted model (the flat one when ``hierarchy=None``).
    classes_ : ndarray of shape (K,)
        The class names, in column order.
    n_features_in_ : int
        ``K``: one score column per class.
    feature_names_in_ : ndarray of str
        The class names, when ``X`` was a DataFrame and they are strings (as
        scikit-learn sets it only for string column names).

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((500, 3)) < [0.5, 0.5, 0.5]).astype(int)
    >>> y[:, 1:] *= y[:, [0]]
    >>> X = rng.normal(loc=1.5 * y)
    >>> model = HierarchicalCorrection(h, correction="iso_tpr").fit(X, y)
    >>> p = model.predict_proba(X[:4])
    >>> bool((p[:, 1:] <= p[:, [0]]).all()), model.predict(X[:4]).shape
    (True, (4, 3))
    """

    def __init__(self, hierarchy=None, *, calibration="isotonic", correction="tpr_dag", options=None, threshold=0.5,
                 close_labels=False):
        self.hierarchy = hierarchy
        self.calibration = calibration
        self.correction = correction
        self.options = options
        self.threshold = threshold
        self.close_labels = close_labels

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False
        tags.target_tags.required = True
        tags.target_tags.two_d_labels = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.input_tags.allow_nan = False
        return tags

    def _check_params(self):
        if self.calibration not in (*CALIBRATIONS, *NORMALISATIONS):
            allowed = ", ".join(map(repr, (*CALIBRATIONS, *NORMALISATIONS)))
            raise InputError(f"calibration must be one of {allowed}; got {self.calibration!r}")
        options = resolve_options(self.correction, self.options)
        if self.hierarchy is not None:
            check_hierarchy(self.hierarchy)
        check_threshold(self.threshold)
        if not isinstance(self.close_labels, bool):
            raise InputError(f"close_labels must be True or False, got {self.close_labels!r}")
        return options

    def _fit_hierarchy(self, X, y):
        if self.hierarchy is not None:
            return self.hierarchy
        for data in (X, y):
            if is_frame(data):
                return Hierarchy.from_edges([], classes=list(data.columns))
        return Hierarchy.from_edges([], classes=list(range(X.shape[1])))

    def _scores(self, X, hierarchy, *, reset):
        """(M, K) float64 scores in class order, finite (one line naming row and class), and within
        +-VALUE_LIMIT where Platt's fit or the correction reads their scale (``"platt"``, ``"none"``, ``"qnorm"``,
        whose values are means of the scores; the isotonic maps compare them, maxnorm divides by their maximum)."""
        if is_frame(X):
            s = np.ascontiguousarray(frame_scores(self, X, hierarchy, reset=reset), dtype=np.float64)
        else:
            s = score_array(self, X, reset=reset, min_rows=1 if reset else 0)  # predicting no rows gives no rows
            if s.shape[1] != hierarchy.n_classes:
                raise InputError(f"X has {s.shape[1]} columns but the hierarchy has {hierarchy.n_classes} classes")
            if reset and hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            s = np.ascontiguousarray(class_matrix(s, hierarchy, "X"))  # finite, or one line naming row and class
        return within_limit(s, hierarchy.classes, "X") if self.calibration in ("platt", "none", "qnorm") else s

    def fit(self, X, y):
        """Fit the per-class calibration on training scores and labels.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            Training first-stage scores, one column per class (an array in
            ``hierarchy.classes`` order, or a DataFrame with columns named by class).
        y : array-like or DataFrame of shape (M, K)
            0/1 training labels (a DataFrame beside a DataFrame ``X`` is paired
            with it by row index).

        Returns
        -------
        self
            The fitted estimator.
        """
        options = self._check_params()
        fit_params = fit_time_params(self, ("threshold",))  # kept once the fit succeeds: predictions refuse changes
        if y is None:
            raise InputError(
                "HierarchicalCorrection requires y to be passed, but the target y is None: it learns the "
                "calibration from 0/1 labels, one column per class"
            )
        X, y = estimator_table(self, X, fitted=False), estimator_table(self, y, fitted=False)
        if not is_frame(X):
            X = score_array(self, X, reset=True, min_rows=1)
        hierarchy = self._fit_hierarchy(X, y)
        s = self._scores(X, hierarchy, reset=True)
        labels = self._labels(X, y, hierarchy, s.shape, close=self.close_labels)
        fitted = self.calibration in ("isotonic", "platt")
        self.calibration_ = fit_calibration(s, labels, method=self.calibration) if fitted else None
        self.correction_ = CORRECTIONS[self.correction]
        self.options_ = options
        self.hierarchy_ = hierarchy
        self.classes_ = np.asarray(hierarchy.classes, dtype=object)
        self._fit_params = fit_params
        return self

    @staticmethod
    def _labels(X, y, hierarchy, shape, *, close):
        """0/1 labels of the rows of ``X`` (a DataFrame ``y`` paired by row index and class name), closed upward
        (``close``) or refused when they break the hierarchy."""
        if is_frame(X) and is_frame(y):
            y = rows_paired(y, X)  # by the row index, as MLPR pairs them
        labels = (class_matrix(y, hierarchy, "y", keep_integers=True) if is_frame(y)
                  else label_target(y, "HierarchicalCorrection"))
        if labels.shape[1] != shape[1]:
            raise InputError(f"y has {labels.shape[1]} columns but X has {shape[1]}: one label column per class")
        labels = binary_matrix(labels, "y", hierarchy)
        if labels.shape[0] != shape[0]:
            raise InputError(f"X has {shape[0]} rows but y has {labels.shape[0]}; they must describe the same objects")
        if close:
            return hierarchy.close_labels(labels)
        hierarchy.check_labels(labels, "y")
        return labels

    def score(self, X, y, sample_weight=None):
        """Subset accuracy of :meth:`predict` (the share of objects whose every class is right).

        ``ClassifierMixin``'s score, with ``y`` paired to ``X`` as :meth:`fit` pairs
        them: a DataFrame ``y`` by class name (and by row index beside a DataFrame ``X``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores (columns as in ``fit``).
        y : array-like or DataFrame of shape (M, K)
            0/1 labels.
        sample_weight : array-like of shape (M,), optional
            Weights of the objects.

        Returns
        -------
        float
            In [0, 1].
        """
        from sklearn.metrics import accuracy_score

        check_is_fitted(self, ["correction_", "hierarchy_"])
        X, y = estimator_table(self, X), estimator_table(self, y)
        decisions = np.asarray(self.predict(X))
        labels = self._labels(X, y, self.hierarchy_, decisions.shape, close=self.close_labels)
        return float(accuracy_score(labels, decisions, sample_weight=sample_weight))

    def calibrated(self, X):
        """The per-class calibrated scores (before the correction).

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores (columns as in ``fit``).

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            A DataFrame (columns in ``classes_`` order, ``X``'s index) when ``X`` is one.
        """
        X = estimator_table(self, X)
        return self._wrap(self._calibrated(X), X)

    def _calibrated(self, X):
        check_is_fitted(self, ["correction_", "hierarchy_"])
        check_fit_time_params(self, getattr(self, "_fit_params", None))
        s = self._scores(X, self.hierarchy_, reset=False)
        if self.calibration_ is not None:
            return self.calibration_.transform(s)
        if self.calibration in NORMALISATIONS:
            if len(s) == 1:
                warn(f"calibration={self.calibration!r} normalises the matrix being predicted, here one row: "
                     "against itself (maxnorm gives every class of positive score 1); predict all objects at once",
                     UserWarning)
            return NORMALISATIONS[self.calibration](s)
        return s.copy()  # "none": a new array, never X itself (validate_data passes a float64 X through)

    def predict_proba(self, X):
        """Calibrated, then corrected values.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores (columns as in ``fit``).

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            Columns in ``classes_`` order; a DataFrame (with ``X``'s index) when
            ``X`` is one. Probabilities after isotonic or Platt calibration; with
            ``calibration="none"`` on the scores' own scale.
        """
        X = estimator_table(self, X)
        p = self._calibrated(X)
        return self._wrap(np.asarray(self.correction_.function(p, self.hierarchy_, **self.options_)), X)

    def predict(self, X):
        """0/1 decisions: corrected value >= ``threshold``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores (columns as in ``fit``).

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            Hierarchy-consistent when the correction is (every registry entry but ``"flat"``).
        """
        X = estimator_table(self, X)
        check_threshold(self.threshold)  # set_params after fit is checked here, not only at fit
        p = self.predict_proba(X)
        out = (np.asarray(p) >= self.threshold).astype(np.int8)
        return self._wrap(out, X)

    def _wrap(self, values, X):
        if not is_frame(X):
            return values
        import pandas as pd

        return pd.DataFrame(values, index=X.index, columns=list(self.hierarchy_.classes))
