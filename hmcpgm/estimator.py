"""The scikit-learn front door: :class:`MLPR`, the second stage of HMC.

``MLPR(hierarchy=h).fit(X, y)`` takes first-stage scores ``X`` (one column per
class) and 0/1 labels ``y`` (M, K) and estimates the label network (the CPD
parameters ``theta``) and one score model per class; ``predict_proba(X)``
returns the mLPRs of new objects, posterior probabilities
``P(Y_k = 1 | scores of the object)``, and ``predict(X)`` hierarchy-consistent
0/1 decisions. The hierarchy is a constructor parameter, so ``clone``,
``Pipeline``, ``GridSearchCV`` and ``cross_val_predict`` work as with any
scikit-learn estimator.

This module imports scikit-learn; ``import hmcpgm`` loads it only when
``hmcpgm.MLPR`` is first used.
"""

from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.utils.validation import check_is_fitted

from ._arrays import label_target
from ._estimator_params import check_params
from ._fit_params import check_fit_time_params, check_threshold, fit_time_params
from ._validation import (
    checked_at_the_door,
    class_matrix,
    estimator_table,
    frame_scores,
    is_frame,
    label_matrix,
    rows_paired,
    score_array,
)
from .exceptions import InputError
from .hierarchy import Hierarchy
from .likelihood import fit_neighbour_stack, fit_score_model
from .network import LabelNetwork
from .options import resolve_stack
from .second_stage import SecondStage

#: Scores beyond +-SCORE_LIMIT are taken as +-SCORE_LIMIT (in fit and predict alike): no score model tells
#: 1e100 from 1e308 apart, and squares and grid spans of finite numbers near 1e308 overflow.
SCORE_LIMIT = 1e100

#: Pseudo-events per isotonic block of the map :meth:`MLPR.fit_recalibration` fits on held-out rows, at the
#: cross-fitted map's rate (at Jeffreys' 1/2 for a model without one)
HELD_OUT_PRIOR_COUNT = 2.0

__all__ = ["MLPR", "check_params"]


class MLPR(ClassifierMixin, MultiOutputMixin, BaseEstimator):
    """mLPRs from first-stage scores and a class hierarchy (Ye et al.).

    Every method that takes per-class matrices (scores ``X``, labels ``y``,
    ``mlpr``) takes an array in ``hierarchy.classes`` order, a DataFrame with
    columns named by class (any order; the answer is then a DataFrame with its
    index), or a pandas Series labelled by class names: one object, as
    :func:`hmcpgm.hier_rank` takes it (the answer is a one-row DataFrame
    indexed by the Series' name).

    Parameters
    ----------
    hierarchy : Hierarchy, optional
        The class hierarchy; its ``classes`` fix the column order of arrays. None
        means flat classes (each its own root), named by the columns of a
        DataFrame ``X`` (or ``y``), else ``0 .. K-1``.
    version : {"auto", "full", "nbh", "indpt"}, default "auto"
        ``"full"``: each mLPR uses the scores of every class of the object.
        ``"nbh"``: only the scores of the class, its parents and its children.
        ``"indpt"``: the class's own local precision rate with its prior.
        ``"auto"``: the one of the three (each with its fitted ``tempering``) whose
        HierRank ranking of cross-fitted mLPRs has the best AU(PRC) on the
        training rows, preferring the simpler version (indpt, then nbh, then full)
        unless a more complex one is better by more than one paired bootstrap
        standard error (:func:`hmcpgm.selection.fit_second_stage_auto`); nbh and
        full keep each class's own evidence at indpt's exponent and temper the
        other classes' evidence (``own_tempering_``). ``version_``,
        ``consistency_`` and ``cv_results_`` report the choices.
    score_model : {"auto", "lpr", "isotonic", "platt", "logistic", "pooled", "precision", "gaussian", "kde"}
        How scores become evidence (default ``"auto"``); see :mod:`hmcpgm.likelihood`.
        ``"auto"`` chooses per class among lpr, isotonic, platt, pooled and logistic
        by cross-validated log loss on the training rows.
    tempering : {"one", "depth", "frequency"} or None, default "one"
        Evidence strength: each class's likelihood ratio is raised to a power
        ``a`` fitted by cross-fitting on the training rows, one ``a`` for all
        classes (``"one"``), per depth or per frequency group. None keeps
        ``a = 1``, the paper's model (right for data drawn from it; real
        first-stage scores of different classes share their errors, so full and
        nbh need ``a < 1`` there).
    recalibrate : bool, default True
        Fit one increasing map ``g``, shared by all classes, of the cross-fitted
        mLPRs to the labels (``recalibration_``): :meth:`calibrated_proba` returns
        ``g(mLPR)``, whose mean of ``1 - g`` over a prefix of the ranking
        estimates its false discovery proportion. The ranking is unchanged.
        With held-out rows, :meth:`fit_recalibration` refits the map on the final
        model's own mLPRs: more powerful cutoffs (docs/benchmarks.md).
    consistency : str, default "auto"
        What makes the mLPRs consistent with the hierarchy before ranking:
        ``"auto"`` chooses between nothing (``"hierrank"``: HierRank pools the
        violations) and the max constraint (``"max"``) by cross-fitting; or one
        of :data:`hmcpgm.second_stage.CONSISTENCY`: besides those two, a classic
        correction of :mod:`hmcpgm.corrections` applied to the mLPRs (``"gpav"``,
        the least-squares hierarchy-consistent posteriors; ``"htd"``,
        ``"tpr_dag"``, ``"iso_tpr"``, ``"descens"``, ``"obozinski"``). Without
        cross-fitting (a fixed version, ``tempering=None``, ``recalibrate=False``)
        ``"auto"`` is ``"hierrank"``.
    pool : "auto", float in [0, 1] or None, default "auto"
        The weight ``w`` of the version's mLPRs in their linear opinion pool
        ``w * mLPR_k + (1 - w) * q_k`` with each class's own isotonic posterior
        ``q_k = P(Y_k = 1 | s_k)`` (the isotonic score model's LPR), before the
        consistency step: two estimates of the same probability, averaged.
        ``"auto"``: the weight among 0, 0.25, 0.5, 0.75 and 1 whose pooled
        cross-fitted values rank best (:func:`hmcpgm.selection.fit_second_stage_auto`;
        ``pool_weight_`` and ``cv_results_.attrs["pool"]`` report it); a number
        fixes it; None or 1: the mLPRs alone. Without cross-fitting ``"auto"`` is None.
    stack : "auto", float in [0, 1] or None, default "auto"
        The weight ``v`` of the neighbour stack in ``(1 - v) * p_k + v * r_k``,
        after the pool and before the consistency step: ``r_k = P(Y_k = 1 |
        s_k, its parents' and children's scores)``, a penalised logistic
        regression per class on the Platt-calibrated logits of its own score,
        its lowest parent's, and its children's highest and log-sum-exp
        (:func:`hmcpgm.likelihood.fit_neighbour_stack`). The network reads the
        other classes' scores through their labels; the stack reads them
        directly. Cross-fitted values (the consistency choice, the
        recalibration map) average with the stack's out-of-fold posteriors.
        ``"auto"``: the weight among 0, 0.25, 0.5, 0.75 and 1 whose averaged
        cross-fitted values rank best (:func:`hmcpgm.selection.choose_stack_weight`;
        ``stack_weight_`` and ``cv_results_.attrs["stack"]`` report it); without
        cross-fitting (the paper's model) no stack. A number fixes it; None or 0:
        no stack. docs/concepts.md, "Stacking the neighbours' scores?", measures
        the stack on the benchmark's 16 runs.
    prior : {"auto", "network", "prevalence"}, default "auto"
        The prior of ``Y_k`` in nbh's and full's posteriors. ``"network"``: the
        label network's marginal ``P(Y_k = 1)`` (the paper's model).
        ``"prevalence"``: the network's Bayes factor of the scores with the
        training prevalence's prior odds, indpt's prior. On a forest they differ
        only by ``pseudo_count``; on a DAG such as the Gene Ontology the network's
        marginal of a deep class can be far below its prevalence, and nbh with
        ``"prevalence"`` tends to indpt as the other classes' evidence weakens
        (docs/concepts.md, "The network's prior on a DAG"); full's posteriors then
        need not respect the hierarchy (HierRank pools the violations).
        ``"auto"``: ``"prevalence"`` on a DAG when the fit cross-fits (the
        default), else ``"network"`` (on a forest, and for the paper's model: a
        fixed version, ``tempering=None``, ``recalibrate=False``).
        ``prior_`` reports the one used.
    engine : str, default "auto"
        Inference engine of :func:`hmcpgm.mlpr_from_likelihoods`: ``"auto"`` or a
        registered engine (:data:`hmcpgm.inference.ENGINES`, described by
        :func:`hmcpgm.inference.engine_table`). Predictions by an engine that is
        not exact on the hierarchy (``"loopy"`` on a DAG with undirected loops)
        warn (:class:`~hmcpgm.exceptions.ApproximationWarning`).
    threshold : float in (0, 1), default 0.5
        The rule of :meth:`predict`: an event is positive when the mean mLPR of
        its HierRank block (within its object), recalibrated (the fitted map,
        ``recalibration_``; none with ``recalibrate=False``), is at least
        ``threshold``. Block means never increase from a class to its children
        and the map is increasing, so the decisions respect the hierarchy; under
        exact full inference without recalibration the block means are the
        mLPRs themselves and 0.5 is the Bayes rule for the Hamming loss.
    cv : int, default 5
        Folds of the cross-fitting (``version="auto"``, a fitted ``tempering``
        or ``recalibrate``).
    random_state : int, default 0
        Seed of the folds and of the row subsamples used on DAGs.
    pseudo_count : float, default 0.5
        Additive pseudo-count of :meth:`hmcpgm.LabelNetwork.from_labels`; 0 gives
        the paper's plain fractions.
    close_labels : bool, default False
        Close training labels upward instead of raising when a positive class
        has a negative parent.
    allow_empty : bool, default False
        Accept classes without positive training examples (an error otherwise).
        A class positive for every training object (a root of the Gene Ontology)
        is accepted either way, with a warning unless this is True. The scores of
        both kinds of class carry no evidence.
    bandwidth : {"silverman", "scott", "normal_reference"} or float, default "silverman"
        Kernel bandwidth rule of the ``"lpr"`` and ``"kde"`` score models.
    gridsize : int, default 512
        Grid points per class of the kernel density score models.
    eps : float, default 1e-6
        The ``"lpr"`` score model clips LPRs to ``[eps, 1 - eps]``.
    inference_options : dict, optional
        Extra keyword options of the engine (``budget_bytes``, ``max_clique``,
        ``damping``, ``tol``, ``max_iter``, ``max_classes``); see
        :func:`hmcpgm.mlpr_from_likelihoods`.
    verbose : bool, default False
        Show a progress bar (tqdm, on standard error) over the steps of the
        cross-fitting in :meth:`fit`: the score models' cross-validation, each
        version's exponent search, the choices and the final fit.

    Attributes
    ----------
    second_stage_ : hmcpgm.second_stage.SecondStage
        The fitted second stage, the one object that turns scores into mLPRs
        (score models, network, version, exponents, own evidence, consistency,
        recalibration); every attribute below but ``cv_results_``, ``classes_``,
        ``n_features_in_`` and ``feature_names_in_`` reads it.
    version_ : str
        The fitted version (the choice when ``version="auto"``). A model fitted
        without cross-fitting (a fixed version, ``tempering=None``,
        ``recalibrate=False``: the paper's model) predicts any version set later
        with ``set_params(version=...)``; any other model refuses a different
        version until it is fitted again. ``engine``, ``inference_options``,
        ``threshold`` and ``verbose`` are read at prediction as they are then; a
        change of any other parameter after ``fit`` is refused by predictions,
        in one line naming it, until the model is fitted again (scikit-learn's
        rule: it takes effect at the next ``fit``).
    tempering_ : ndarray of shape (K,)
        The evidence exponent ``a`` of each class (ones when ``tempering=None``).
    own_tempering_ : ndarray of shape (K,) or None
        nbh and full fitted with a tempering: the exponent of each class's *own*
        evidence (indpt's fitted exponent), while the other classes' evidence
        has ``tempering_`` (:func:`hmcpgm.tempering.own_evidence`: exact for
        every class at once). None: ``tempering_`` for all evidence.
    descendants_tempering_ : ndarray of shape (K,) or None
        Full on a forest, when the fitted second stage has one: the exponent of
        each class's evidence in the posteriors of its ancestors, while
        ``tempering_`` stays the exponent of the evidence outside a class's
        subtree (:func:`hmcpgm.inference.split_full_posterior`, exact). ``fit``
        does not fit it (``fit_second_stage_auto(..., descendants=True)`` does;
        measured in ``bench/descendants_evidence.py``, it did not improve the
        default's choice); a saved model keeps it. None: ``tempering_`` for the
        descendants' evidence too.
    pool_weight_ : float
        The weight of the mLPRs in their pool with the isotonic posteriors; 1: no pool.
    stack_weight_ : float
        The weight of the neighbour stack's posteriors (``stack``); 0: no stack.
    consistency_ : str
        ``"max"``: :meth:`predict_proba` lifts each class to the largest mLPR
        among its descendants (a lower bound of its posterior under the
        hierarchy), chosen by cross-fitting (``cv_results_.attrs["consistency"]``)
        when ``consistency="auto"``; a correction's name: the mLPRs it returns
        are those corrected values.
    recalibration_ : RecalibrationMap or None
        The shared increasing map of :meth:`calibrated_proba`.
    recalibrated_on_ : str or None
        Where ``recalibration_`` was fitted: ``"cross-fitting"`` (by :meth:`fit`)
        or ``"held-out rows (M)"`` (by :meth:`fit_recalibration`, more powerful FDR
        cutoffs); None without a map.
    crossfit_recalibration_ : RecalibrationMap or None
        The map :meth:`fit` built by cross-fitting, kept as the prior of
        :meth:`fit_recalibration`'s map (None after loading a held-out map).
    cv_results_ : pandas.DataFrame or None
        One row per version tried: exponents, cross-fitted AU(PRC) and log loss,
        rows and engine used, seconds, ``z`` (paired bootstrap standard errors by
        which it beat the simpler version kept before it), whether it was chosen;
        ``attrs["consistency"]`` holds the consistency choice: the step
        chosen, its ``z`` and every candidate's ``z``
        (:data:`hmcpgm.selection.CONSISTENCY_CANDIDATES`; None when nothing
        was cross-fitted).
    hierarchy_ : Hierarchy
        The hierarchy of the fitted model (the flat one when ``hierarchy=None``).
    network_ : LabelNetwork
        The hierarchy with the fitted ``theta``; ``network_.to_pgmpy()`` is the
        pgmpy network the engines answer for.
    theta_ : ndarray of shape (K,)
        ``P(Y_k = 1 | all parents positive)`` estimated from the labels.
    prevalence_ : ndarray of shape (K,)
        Training fraction of positives per class.
    score_model_ : hmcpgm.likelihood.ScoreModel
        The fitted per-class score models.
    classes_ : ndarray of shape (K,)
        The class names, in column order. scikit-learn's scoring strings
        (``scoring="average_precision"``, ...) read a ``classes_`` of one or two
        strings as a binary target and fail or score one column only; with such a
        hierarchy pass a callable scorer, or no ``scoring`` (:meth:`score`).
    n_features_in_ : int
        ``K``: one score column per class.
    feature_names_in_ : ndarray of str
        The class names, when ``X`` was a DataFrame and they are strings (as
        scikit-learn sets it only for string column names).

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, MLPR
    >>> h = Hierarchy.from_parents([None, 0, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((3000, 3)) < [0.4, 0.5, 0.5]).astype(int)
    >>> y[:, 1:] *= y[:, [0]]                       # children only under a positive root
    >>> X = rng.normal(loc=1.5 * y)                 # first-stage scores
    >>> model = MLPR(hierarchy=h).fit(X, y)
    >>> p = model.predict_proba(X[:5])
    >>> p.shape
    (5, 3)
    >>> d = model.predict(X[:200])                  # 0/1 decisions, from each object's HierRank blocks
    >>> bool((d[:, 1:] <= d[:, [0]]).all())         # a child is never called without its parent
    True

    The default's mLPRs may put a child a little above its parent: tempering gives a
    class's own score another strength than the other classes' (``own_tempering_``),
    and the pool averages them with each class's own posterior (``pool_weight_``; a
    ``stack`` averages them with the neighbour stack's too), so they are no longer one
    network's posteriors. HierRank and :meth:`predict` pool
    such pairs (``consistency_``). The paper's model, ``MLPR(version="full",
    score_model="lpr", tempering=None, recalibrate=False, pool=None)``, gives one
    network's posteriors, which never put a child above its parent.
    """

    def __init__(
        self,
        hierarchy=None,
        *,
        version="auto",
        score_model="auto",
        tempering="one",
        recalibrate=True,
        consistency="auto",
        pool="auto",
        stack="auto",
        prior="auto",
        engine="auto",
        threshold=0.5,
        cv=5,
        random_state=0,
        pseudo_count=0.5,
        close_labels=False,
        allow_empty=False,
        bandwidth="silverman",
        gridsize=512,
        eps=1e-6,
        inference_options=None,
        verbose=False,
    ):
        self.hierarchy = hierarchy
        self.version = version
        self.score_model = score_model
        self.tempering = tempering
        self.recalibrate = recalibrate
        self.consistency = consistency
        self.pool = pool
        self.stack = stack
        self.prior = prior
        self.engine = engine
        self.threshold = threshold
        self.cv = cv
        self.random_state = random_state
        self.pseudo_count = pseudo_count
        self.close_labels = close_labels
        self.allow_empty = allow_empty
        self.bandwidth = bandwidth
        self.gridsize = gridsize
        self.eps = eps
        self.inference_options = inference_options
        self.verbose = verbose

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

    # ------------------------------------------------------------------ the fitted second stage, read
    # Every fitted attribute below is a view of ``second_stage_``, the one object that owns the step.
    @property
    def hierarchy_(self):
        """The hierarchy of the fitted model."""
        return self.second_stage_.hierarchy

    @property
    def network_(self):
        """The hierarchy with the fitted ``theta``."""
        return self.second_stage_.network

    @property
    def theta_(self):
        """``P(Y_k = 1 | all parents positive)`` estimated from the labels."""
        return self.second_stage_.theta

    @property
    def score_model_(self):
        """The fitted per-class score models."""
        return self.second_stage_.score_model

    @property
    def prevalence_(self):
        """Training fraction of positives per class (the score models' prevalence)."""
        return self.second_stage_.score_model.prevalence

    @property
    def version_(self):
        """The fitted version."""
        return self.second_stage_.version

    @property
    def tempering_(self):
        """The evidence exponent of each class."""
        return self.second_stage_.a

    @property
    def own_tempering_(self):
        """The exponent of each class's own evidence (nbh and full), or None."""
        return self.second_stage_.own

    @property
    def descendants_tempering_(self):
        """Full on a forest: the exponent of each class's evidence in its ancestors' posteriors, or None."""
        return self.second_stage_.descendants

    @property
    def consistency_(self):
        """``"hierrank"`` or ``"max"`` (the max constraint)."""
        return self.second_stage_.consistency

    @property
    def prior_(self):
        """``"network"`` or ``"prevalence"``: the prior of ``Y_k`` in nbh's and full's posteriors."""
        return self.second_stage_.prior

    @property
    def pool_weight_(self):
        """The weight of the mLPRs in their pool with the isotonic posteriors (1: no pool)."""
        w = self.second_stage_.pool_weight
        return 1.0 if w is None else w

    @property
    def stack_weight_(self):
        """The weight of the neighbour stack's posteriors (0: no stack)."""
        v = self.second_stage_.stack_weight
        return 0.0 if v is None else v

    @property
    def recalibration_(self):
        """The shared increasing map of :meth:`calibrated_proba`, or None."""
        return self.second_stage_.recalibration

    # ------------------------------------------------------------------ fitting
    def _fit_hierarchy(self, X, y):
        """The hierarchy to fit: the given one, or flat classes named by X's or y's columns."""
        if self.hierarchy is not None:
            return self.hierarchy
        for data in (X, y):
            if is_frame(data):
                return Hierarchy.from_edges([], classes=list(data.columns))
        return Hierarchy.from_edges([], classes=list(range(X.shape[1])))

    def fit(self, X, y):
        """Estimate the label network and the per-class score models.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            Training first-stage scores, one column per class: an array in
            ``hierarchy.classes`` order, a DataFrame with columns named by class
            (any order). Finite; scores beyond +-1e100 (``SCORE_LIMIT``) are taken
            as +-1e100, here and in prediction, so scores of such magnitudes lose
            their order: rescale them (e.g. by their logarithm) before fitting.
        y : array-like, sparse matrix or DataFrame of shape (M, K)
            0/1 training labels that respect the hierarchy. When ``X`` and ``y``
            are both DataFrames, their rows are paired by index (refused when the
            two indexes do not hold the same labels).

        Returns
        -------
        self
            The fitted estimator.
        """
        check_params(self)
        fit_params = fit_time_params(self)  # kept once the fit succeeds: predictions refuse a change of these
        X, y = estimator_table(self, X, fitted=False), estimator_table(self, y, fitted=False)
        if y is None:
            raise InputError(
                "MLPR requires y to be passed, but the target y is None: MLPR learns from 0/1 "
                "labels, one column per class"
            )
        if not is_frame(X):  # standard checks of arrays (sparse, complex, empty, 1-D) first, once
            X = score_array(self, X, reset=True, min_rows=1)
        hierarchy = self._fit_hierarchy(X, y)
        s = self._scores(X, hierarchy, reset=True, validated=not is_frame(X))
        if is_frame(X) and is_frame(y):
            y = rows_paired(y, X)  # by the row index, as the command line pairs rows by id
        y = self._label_array(y)
        if self.hierarchy is None and not is_frame(y) and y.shape[1] != s.shape[1]:
            raise InputError(
                f"y has {y.shape[1]} columns but X has {s.shape[1]}: MLPR takes one first-stage "
                "score column of X per class (label column of y)"
            )
        labels = label_matrix(y, hierarchy, "y", close=self.close_labels)
        if s.shape[0] != labels.shape[0]:
            raise InputError(
                f"X has {s.shape[0]} rows but y has {labels.shape[0]}; they must describe the same objects"
            )
        with checked_at_the_door():  # X and y were checked above: the steps below do not scan them again
            stage = self._fit_stage(s, labels, hierarchy)
        # predictions run the estimator's engine (cross-fitting may have run another; cv_results_ says which)
        self.second_stage_ = replace(stage, engine=self.engine, options=self.inference_options or {})
        self.cv_results_ = stage.cv_table
        self.recalibrated_on_ = None if stage.recalibration is None else "cross-fitting"
        self.crossfit_recalibration_ = stage.recalibration  # the prior of fit_recalibration's map
        self.classes_ = np.asarray(hierarchy.classes, dtype=object)
        self._fit_params = fit_params
        return self

    def _fit_stage(self, s, labels, hierarchy):
        """The second stage fitted on checked scores and labels: cross-fitted, or the paper's model."""
        score_options = {"bandwidth": self.bandwidth, "gridsize": self.gridsize, "eps": self.eps}
        if self._cross_fits():
            from .selection import VERSIONS as SIMPLEST_FIRST
            from .selection import fit_second_stage_auto

            stage = fit_second_stage_auto(
                s, labels, hierarchy,
                versions=SIMPLEST_FIRST if self.version == "auto" else (self.version,),
                tempering=self.tempering, score_model=self.score_model, cv=self.cv, seed=self.random_state,
                engine=self.engine, recalibrate=self.recalibrate, pseudo_count=self.pseudo_count,
                allow_empty=self.allow_empty, consistency=self.consistency, pool=self.pool,
                stack=self.stack, prior=self.prior, progress=self.verbose,
                **score_options,
            )
        else:  # the paper's model: theta and the score models, nothing cross-fitted
            network = LabelNetwork.from_labels(labels, hierarchy, pseudo_count=self.pseudo_count)
            model = fit_score_model(s, labels, hierarchy, kind=self.score_model, allow_empty=self.allow_empty,
                                    cv=self.cv, seed=self.random_state, **score_options)
            weight = None if self.pool in ("auto", None) or float(self.pool) >= 1.0 else float(self.pool)
            stack = resolve_stack(self.stack)
            pool_model = None if weight is None else fit_score_model(
                s, labels, hierarchy, kind="isotonic", allow_empty=self.allow_empty, cv=self.cv,
                seed=self.random_state, **score_options)
            stage = SecondStage(hierarchy, self.version, 1.0, model, network.theta, network=network,
                                consistency="hierrank" if self.consistency == "auto" else self.consistency,
                                pool_weight=weight, pool_model=pool_model,
                                stack_weight=stack, stack_model=None if stack is None else fit_neighbour_stack(
                                    s, labels, hierarchy),
                                prior="network" if self.prior == "auto" else self.prior)
        return stage

    def _cross_fits(self):
        """Whether fitting needs cross-fitting on the training rows (a choice, an exponent or a map)."""
        return self.version == "auto" or self.tempering is not None or self.recalibrate

    @staticmethod
    def _label_array(y):
        """y as it is when a DataFrame (aligned later by name), else a checked 2-D 0/1 array."""
        return y if is_frame(y) else label_target(y, "MLPR")

    def _scores(self, X, hierarchy, *, reset, validated=False):
        """(M, K) float scores in class order (DataFrames aligned by class name), clipped to +-SCORE_LIMIT.

        ``validated``: ``X`` is the array ``validate_data`` returned in :meth:`fit` (not checked again).
        """
        if is_frame(X):
            s = frame_scores(self, X, hierarchy, reset=reset)
            return np.clip(s, -SCORE_LIMIT, SCORE_LIMIT)
        s = X if validated else score_array(self, X, reset=reset, min_rows=0)
        if s.shape[1] != hierarchy.n_classes:
            raise InputError(f"X has {s.shape[1]} columns but the hierarchy has {hierarchy.n_classes} classes")
        if reset and hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        s = class_matrix(s, hierarchy, "X")  # finite, or one line naming the row and class
        return np.clip(s, -SCORE_LIMIT, SCORE_LIMIT)

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        """Fitted, and no parameter that fit used changed since (:func:`hmcpgm._fit_params.check_fit_time_params`):
        checked once by every prediction, at its entry (:meth:`_check_X`, or :meth:`decide`)."""
        check_is_fitted(self, ["network_", "score_model_"])
        check_fit_time_params(self, getattr(self, "_fit_params", None))

    def _check_X(self, X):
        self._check_fitted()
        return self._scores(X, self.hierarchy_, reset=False)

    def _wrap(self, values, X):
        """A DataFrame (class columns, X's index) when X was a DataFrame, else the array."""
        if not is_frame(X):
            return values
        import pandas as pd

        return pd.DataFrame(values, index=X.index, columns=list(self.hierarchy_.classes))

    def likelihoods(self, X):
        """Evidence pairs ``[L_k(0), L_k(1)]`` of the fitted score models, tempered: what the network sees.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.

        Returns
        -------
        ndarray of shape (M, K, 2)
            The likelihoods of each class's score with each ratio raised to ``tempering_``.
        """
        from .tempering import temper

        s = self._check_X(estimator_table(self, X))  # checks the fitted state first
        return temper(self.score_model_.likelihoods(s), self.tempering_)

    def lpr(self, X):
        """Per-class local precision rates ``P(Y_k = 1 | s_k)`` (no hierarchy).

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            A DataFrame (with ``X``'s index) when ``X`` is one.
        """
        X = estimator_table(self, X)
        s = self._check_X(X)  # checks the fitted state first
        return self._wrap(self.score_model_.lpr(s), X)

    def predict_proba(self, X):
        """mLPRs of new objects: ``P(Y_k = 1 | evidence)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            Columns in ``classes_`` order; a DataFrame (with ``X``'s index) when
            ``X`` is one.
        """
        X = estimator_table(self, X)
        return self._wrap(self._mlpr(self._check_X(X)), X)

    def calibrated_proba(self, X):
        """Recalibrated mLPRs ``g(mLPR)``: probabilities whose mean of ``1 - g`` over the top of a
        ranking estimates its false discovery proportion (the mLPRs when ``recalibrate=False``).

        ``g`` is non-decreasing and shared by all classes, so it keeps the order of the
        mLPRs: no two events swap, and a child stays at or below its parent wherever
        its mLPR does (always with the paper's model; the default's mLPRs can put a
        child above its parent, see the class docstring); events may tie where ``g``
        is flat (within an isotonic block, and beyond its first and last knots). Rank
        the mLPRs (:meth:`predict_proba`), not these values, where the order matters,
        and take decisions that respect the hierarchy from :meth:`predict` or a
        HierRank ranking.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            A DataFrame (with ``X``'s index) when ``X`` is one.
        """
        X = estimator_table(self, X)
        return self._wrap(self._calibrated(self._mlpr(self._check_X(X))), X)

    def _calibrated(self, p):
        return self.second_stage_.calibrate(p)

    def fit_recalibration(self, X, y):
        """Refit the recalibration map on held-out rows: the final model's own mLPRs against their labels.

        The map :meth:`fit` builds pairs the labels with mLPRs of models fitted on
        part of the training rows (cross-fitting). On the FunCat benchmark sets
        those models rank the top of the list worse than the final model does, so
        the map is conservative there and the Bayesian FDR cutoff calls few events
        (none at alpha 0.05 and 0.1 on some of them); where the network is the
        true model it is close to right (``bench/fdr_well_specified.py``), not
        conservative. Rows the model was not fitted on (a
        validation set) are scored by the final model itself: the map fitted on
        them (:func:`hmcpgm.calibration.fit_recalibration`, pooled over classes)
        describes the mLPRs the cutoff will see. Each isotonic block's rate is
        its posterior mean with ``HELD_OUT_PRIOR_COUNT`` (2) pseudo-events at the
        cross-fitted map's rate there (an empirical-Bayes prior: the held-out
        rows outweigh it wherever they hold more than a few events; without a
        cross-fitted map, at Jeffreys' rate 1/2): the
        unshrunk rates of the few events at the very top overstate them. Classes
        whose training labels do not vary (every row has them, or none) stay out
        of the map, as out of :meth:`fit`'s, and take their training rate, 1 or 0
        (:meth:`hmcpgm.second_stage.SecondStage.calibrate`): a class every row has
        would lift the top block toward its rate of 1. The
        mLPRs and the ranking do not change;
        :meth:`calibrated_proba` and :meth:`predict` use the new map.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores of held-out rows (not used by :meth:`fit`).
        y : array-like, sparse matrix or DataFrame of shape (M, K)
            Their 0/1 labels (rows paired by index when ``X`` and ``y`` are
            DataFrames).

        Returns
        -------
        self
            ``recalibration_`` is the new map and ``recalibrated_on_`` says so.

        Examples
        --------
        >>> from hmcpgm.datasets import make_paper_synthetic
        >>> data = make_paper_synthetic(2000, 1000, seed=0)
        >>> model = MLPR(hierarchy=data.hierarchy, version="indpt", cv=3)
        >>> model = model.fit(data.train_scores, data.train_labels)
        >>> model.recalibrated_on_
        'cross-fitting'
        >>> model.fit_recalibration(data.test_scores[:500], data.test_labels[:500]).recalibrated_on_
        'held-out rows (500)'
        """
        from .calibration import fit_recalibration as fit_map
        from .calibration import recalibration_classes

        X, y = estimator_table(self, X), estimator_table(self, y)
        s = self._check_X(X)
        if s.shape[0] == 0:
            raise InputError("X has no rows: fit_recalibration needs held-out rows of scores and their labels y")
        if is_frame(X) and is_frame(y):
            y = rows_paired(y, X)
        labels = label_matrix(self._label_array(y), self.hierarchy_, "y", close=self.close_labels)
        if s.shape[0] != labels.shape[0]:
            raise InputError(
                f"X has {s.shape[0]} rows but y has {labels.shape[0]}; they must describe the same objects"
            )
        prior = getattr(self, "crossfit_recalibration_", None)
        prior = 0.5 if prior is None else prior
        varied = recalibration_classes(self.second_stage_.score_model.prevalence)  # as fit's map
        g = fit_map(self._mlpr(s)[:, varied], labels[:, varied], prior_count=HELD_OUT_PRIOR_COUNT, prior_rate=prior)
        self.second_stage_ = replace(self.second_stage_, recalibration=g)
        self.recalibrated_on_ = f"held-out rows ({s.shape[0]})"
        return self

    def version_in_use(self):
        """The version predictions use: the fitted one, or another one set after fitting the paper's model.

        The one rule for every caller (the command line's ``--mlpr-version`` too):
        ``version="auto"`` or the fitted version give ``version_``; a model
        fitted without cross-fitting (the paper's model) predicts any version;
        any other change of ``version`` after fitting is refused.

        Returns
        -------
        str
            ``"indpt"``, ``"nbh"`` or ``"full"``.

        Raises
        ------
        InputError
            When ``version`` was set to another version than the one cross-fitted.
        """
        check_is_fitted(self, ["network_"])
        if self.version in ("auto", self.version_):
            return self.version_
        if self.cv_results_ is None:  # nothing was cross-fitted for the fitted version: any version applies
            return self.version
        raise InputError(
            f"version was set to {self.version!r} after fitting, but this model chose or cross-fitted "
            f"version {self.version_!r} (its evidence exponents and recalibration belong to it); call fit again"
        )

    def _stage(self):
        """The fitted second stage with the version, engine and engine options predictions use now."""
        stage = self.second_stage_
        version, options = self.version_in_use(), self.inference_options or {}
        if (version, self.engine, options) != (stage.version, stage.engine, stage.options):
            stage = replace(stage, version=version, engine=self.engine, options=options)
        return stage

    def _mlpr(self, s):
        return self._stage().predict_proba(s)

    def engine_in_use(self):
        """The inference engine :meth:`predict_proba` runs, and whether its answer is exact.

        The policy of :func:`hmcpgm.inference.choose_engine` for ``engine="auto"``
        (tree on forests, an exact junction tree within ``budget_bytes``, else loopy
        BP with an :class:`~hmcpgm.exceptions.ApproximationWarning`).

        Returns
        -------
        (str, bool)
            The engine's name (``"indpt"`` for the indpt version, which needs no
            network inference) and whether the answer is exact.
        """
        from .inference import engine_in_use

        check_is_fitted(self, ["network_"])
        opts = {k: v for k, v in (self.inference_options or {}).items() if k in ("budget_bytes", "max_clique")}
        return engine_in_use(self.hierarchy_, self.version_in_use(), self.engine, **opts)

    def predict(self, X):
        """Hierarchy-consistent 0/1 decisions: recalibrated HierRank block mean >= ``threshold``.

        Each object is ranked on its own (:func:`hmcpgm.hier_rank` of its mLPRs);
        a class is positive when ``g`` (the recalibration map, the identity when
        ``recalibrate=False``) of the mean mLPR of its block is at least
        ``threshold``. Block means never increase from a class to its children and
        ``g`` is increasing, so a class is never positive without its parents.

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            The 0/1 decisions; a DataFrame (with ``X``'s index) when ``X`` is one.
        """
        X = estimator_table(self, X)
        return self._wrap(self._decide(self._mlpr(self._check_X(X))), X)

    def score(self, X, y, sample_weight=None):
        """Average precision of the HierRank ranking of ``X``'s events against the labels ``y``.

        All (object, class) events of ``X`` are ranked by :func:`hmcpgm.hier_rank`
        of their mLPRs (the ranking HMC is judged on); the score is the mean, over
        the positive events, of the precision of the ranking's prefix that ends at
        each: 1 when every positive comes first, about the share of positives for a
        random ranking, nan without positives. ``GridSearchCV`` and
        ``cross_val_score`` use it when no ``scoring`` is given (higher is better).

        Parameters
        ----------
        X : array-like or DataFrame of shape (M, K)
            First-stage scores.
        y : array-like, sparse matrix or DataFrame of shape (M, K)
            0/1 labels (DataFrames are paired by row index with a DataFrame ``X``).
        sample_weight : None
            Not supported (events have no weights).

        Returns
        -------
        float
            The average precision, in [0, 1] (nan when ``y`` has no positive).
        """
        from .metrics import hit_curve
        from .ranking import hier_rank

        check_is_fitted(self, ["network_", "score_model_"])  # before y is checked against the fitted hierarchy
        if sample_weight is not None:
            raise InputError("MLPR.score takes no sample_weight: it is the average precision of a ranking")
        X, y = estimator_table(self, X), estimator_table(self, y)
        if is_frame(X) and is_frame(y):
            y = rows_paired(y, X)
        labels = label_matrix(self._label_array(y), self.hierarchy_, "y", close=self.close_labels)
        p = self._mlpr(self._check_X(X))
        if labels.shape != p.shape:
            raise InputError(f"y has shape {labels.shape} but X gives {p.shape}; they must describe the same objects")
        ranking = hier_rank(p, self.hierarchy_)
        hits = hit_curve(ranking, labels)
        at = np.flatnonzero(np.diff(hits, prepend=0))  # positions (from 0) of the positives
        return float(np.mean(hits[at] / (at + 1))) if at.size else float("nan")

    def decide(self, mlpr):
        """The rule of :meth:`predict` applied to mLPRs this model computed (e.g. in chunks).

        Parameters
        ----------
        mlpr : ndarray or DataFrame of shape (M, K), or Series of shape (K,)
            Output of :meth:`predict_proba`: an array in ``classes_`` order, a
            DataFrame with columns named by class (any order), or one object's
            mLPRs as a Series labelled by class names (a one-row DataFrame).

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            The 0/1 decisions, hierarchy-consistent; a DataFrame (with ``mlpr``'s
            index) when ``mlpr`` is one.
        """
        self._check_fitted()
        mlpr = estimator_table(self, mlpr)
        p = class_matrix(mlpr, self.hierarchy_, "mlpr", allow_nan=True) if is_frame(mlpr) else mlpr
        return self._wrap(self._decide(p), mlpr)

    def _decide(self, mlpr):
        from .ranking import hier_rank

        try:
            p = np.asarray(mlpr, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f"mlpr must be a numeric (M, {self.hierarchy_.n_classes}) array: {exc}") from None
        if p.ndim != 2 or p.shape[1] != self.hierarchy_.n_classes:
            raise InputError(f"mlpr must have shape (M, {self.hierarchy_.n_classes}), got {p.shape}")
        bad = np.flatnonzero(~((p >= -1e-9) & (p <= 1 + 1e-9)))  # NaN included; rounding of a sum is no error
        if bad.size:
            row, k = divmod(int(bad[0]), p.shape[1])
            what = "finite" if not np.isfinite(p[row, k]) else "posterior probabilities in [0, 1]"
            raise InputError(f"mlpr must be {what} (the output of predict_proba); row {row}, class "
                             f"{self.hierarchy_.classes[k]!r} holds {p[row, k]}")
        if p.shape[0] == 0:
            return np.zeros(p.shape, dtype=np.int8)
        check_threshold(self.threshold)  # set_params after fit is checked here, not only at fit
        means = self._calibrated(hier_rank(p, self.hierarchy_).block_means)
        return (means >= self.threshold).astype(np.int8)

