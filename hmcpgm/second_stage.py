"""The fitted second stage: the one owner of the step from first-stage scores to the values HierRank ranks.

A :class:`SecondStage` is a small frozen object that holds everything the step
needs and runs it, in this order:

1. **evidence**: the per-class score models turn scores into likelihood pairs
   ``[L_k(0), L_k(1)]`` (:meth:`SecondStage.likelihoods`);
2. **evidence strength**: each pair's ratio is raised to the exponent ``a_k``
   (:func:`hmcpgm.tempering.temper`);
3. **mLPR**: ``"nbh"`` and ``"full"`` query the label network
   (:func:`hmcpgm.mlpr_from_likelihoods`); ``"indpt"`` is the class's own
   tempered local precision rate under the training prevalence of its score
   model (:func:`hmcpgm.tempering.tempered_lpr`), with no network;
4. **own evidence** (nbh and full, optional): each class's own evidence at its
   own exponent ``own_k`` (:func:`hmcpgm.tempering.own_evidence`); full on a
   forest may also give the descendants' evidence its own exponent
   (``descendants``: steps 2-4 are then one exact pass,
   :func:`hmcpgm.inference.split_full_posterior`); with ``prior="prevalence"`` the
   network's prior odds of each ``Y_k`` are then replaced by the training
   prevalence's, the network's Bayes factor kept (:func:`hmcpgm.tempering.with_prior`;
   on a DAG the network's prior marginal of a deep class can be far below its
   prevalence, docs/concepts.md);
5. **pool** (optional): the linear opinion pool ``w * mLPR_k + (1 - w) * q_k``
   of the version's posterior and ``q_k``, the class's own isotonic posterior
   ``P(Y_k = 1 | s_k)`` (the isotonic score model's local precision rate): two
   estimates of the same probability, averaged with a weight chosen by
   cross-fitting (:func:`hmcpgm.selection.fit_second_stage_auto`);
6. **stack** (optional): ``(1 - v) * p_k + v * r_k``, the values so far averaged
   with the neighbour stack's ``r_k = P(Y_k = 1 | s_k, its parents' and
   children's scores)`` (:func:`hmcpgm.likelihood.fit_neighbour_stack`), a
   logistic regression on the calibrated scores that reads the neighbours'
   scores directly where the network reads them through the labels;
7. **consistency** (optional): the max constraint (:func:`consistent_values`);
8. **recalibration** (optional): the shared increasing map ``g``
   (:meth:`SecondStage.calibrate`), used for Bayesian FDR estimates and decisions.

Steps 2-7 are :meth:`SecondStage.mlpr`; :meth:`SecondStage.predict_proba` is
steps 1-7. Every caller builds one and calls it: :class:`hmcpgm.MLPR` (fit,
``predict_proba``, ``calibrated_proba``, ``predict``),
:func:`hmcpgm.selection.fit_second_stage_auto` (its result),
:func:`hmcpgm.selection.cross_fitted_mlpr` (one stage per fold, from out-of-fold
evidence), the benchmark's paper versions
(:func:`hmcpgm.applications.paper_mlprs`) and model loading
(:func:`hmcpgm.persist.load_model`).

Which indpt: the second stage's indpt is ``P(Y_k = 1 | s_k)``, the score model's
local precision rate (SPEC: ``mLPR[m, k] = LPR_k(S[m, k])``), whose prior is the
training prevalence the score model was fitted with. The network query
``mlpr_from_likelihoods(..., version="indpt")`` is a different public thing: the
posterior of ``Y_k`` from its own evidence under the *network's* prior marginal
(``theta`` with its pseudo-count, and on DAGs a product over parents that need
not equal the prevalence); the engines are checked against pgmpy with it, and no
second stage uses it.
"""

from dataclasses import dataclass, field

import numpy as np

from ._columns import class_matrix
from .calibration import recalibration_classes
from .corrections import CORRECTIONS, mcm
from .exceptions import InputError
from .network import LabelNetwork
from .options import PRIORS, VERSIONS, check_choice
from .tempering import log_evidence_ratio, own_evidence, temper, tempered_lpr, with_prior

__all__ = ["CONSISTENCY", "SecondStage", "consistent_values"]

#: What makes a version's values consistent with the hierarchy before HierRank (see :func:`consistent_values`):
#: nothing (HierRank pools violations), the max constraint, or a classic correction of :mod:`hmcpgm.corrections`.
CONSISTENCY = ("hierrank", "max", *(name for name, c in CORRECTIONS.items() if c.consistent and name != "mcm"))


def consistent_values(p, hierarchy, consistency):
    """The values HierRank ranks: ``p`` itself, the max constraint, or a classic correction of ``p``.

    Under the hierarchy a class is positive whenever a descendant is, so its
    posterior is at least each descendant's: the max constraint lifts every class
    to the largest value among itself and its descendants (a no-op on exact full
    mLPRs, which satisfy it already; C-HMCNN's MCM).

    Parameters
    ----------
    p : ndarray of shape (M, K)
        Posteriors (mLPRs), columns in ``hierarchy.classes`` order.
    hierarchy : Hierarchy
        The class hierarchy.
    consistency : str, one of :data:`CONSISTENCY`
        ``"hierrank"`` returns ``p`` itself (HierRank then pools violations);
        ``"max"`` the max constraint; another name applies that classic
        correction of :data:`hmcpgm.corrections.CORRECTIONS` (default options) to
        the mLPRs, e.g. ``"gpav"``: the least-squares hierarchy-consistent values.

    Returns
    -------
    ndarray of shape (M, K)
        The values to rank: ``p`` (``"hierrank"``) or ``p`` lifted by the max constraint.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> consistent_values(np.array([[0.3, 0.6]]), h, "max")
    array([[0.6, 0.6]])
    """
    check_choice(consistency, "consistency", CONSISTENCY)  # a bare KeyError before; "mcm" is spelt "max" here
    if consistency == "hierrank":
        return p
    if consistency == "max":
        return mcm(p, hierarchy)
    correction = CORRECTIONS[consistency]
    return correction.function(p, hierarchy, **correction.preset)


@dataclass(frozen=True, eq=False)
class SecondStage:
    """A fitted second stage: scores -> likelihoods -> mLPR -> own evidence -> pool -> stack -> consistency -> ``g``.

    Checked once when made (version, consistency, the exponents' shapes); its
    methods then run the step without checking again.

    Parameters
    ----------
    hierarchy : Hierarchy
        The class hierarchy; its ``classes`` fix the column order.
    version : {"indpt", "nbh", "full"}
        The mLPR version.
    a : float or array-like of shape (K,)
        Evidence exponent of each class (stored as a (K,) array).
    score_model : hmcpgm.likelihood.ScoreModel or None
        The per-class score models; None for a stage that is only given
        likelihoods (cross-fitting's stage of one fold, :meth:`mlpr`).
    theta : array-like of shape (K,)
        The network's ``P(Y_k = 1 | all parents positive)``.
    recalibration : RecalibrationMap, optional
        The shared increasing map ``g`` of :meth:`calibrate`.
    engine : str, default "auto"
        Inference engine of nbh and full (:func:`hmcpgm.mlpr_from_likelihoods`).
    cv_table : pandas.DataFrame, optional
        One row per (version, grouping) tried by
        :func:`hmcpgm.selection.fit_second_stage_auto`.
    seconds : dict, optional
        Time per step of that fit.
    own : array-like of shape (K,), optional
        For nbh and full: the exponent of each class's own evidence (the other
        classes' evidence has ``a``); None: ``a`` for all evidence. Ignored by indpt.
    consistency : {"hierrank", "max"}, default "hierrank"
        ``"max"``: the mLPRs are lifted by the max constraint before ranking.
    descendants : array-like of shape (K,), optional
        For full on a forest: the exponent of class ``j``'s evidence in the
        posterior of each of ``j``'s ancestors (``a`` stays the exponent of the
        evidence outside a class's subtree, ``own`` of its own): exact, by
        :func:`hmcpgm.inference.split_full_posterior`. None: ``a`` for the
        descendants too.
    pool_weight : float in [0, 1), optional
        The weight ``w`` of the version's posterior in its pool with the
        isotonic posterior (step 5); None: no pool (``w = 1``).
    pool_model : hmcpgm.likelihood.ScoreModel, optional
        The isotonic score models whose LPRs are pooled, read by
        :meth:`predict_proba` when ``pool_weight`` is set (:meth:`mlpr` takes the
        LPRs themselves, ``pool_lpr``).
    stack_weight : float in (0, 1], optional
        The weight ``v`` of the neighbour stack's posterior (step 6); None: no stack.
    stack_model : hmcpgm.likelihood.NeighbourStack, optional
        The fitted stack, read by :meth:`predict_proba` when ``stack_weight`` is
        set (:meth:`mlpr` takes its posteriors themselves, ``stack_lpr``).
    prevalence : array-like of shape (K,), optional
        The prior of indpt: the training prevalence of the score models (default
        ``score_model.prevalence``).
    options : dict, optional
        Engine options of :func:`hmcpgm.mlpr_from_likelihoods` (``budget_bytes``, ...).
    network : LabelNetwork, optional
        The network of ``hierarchy`` and ``theta``, when one is already built.
    prior : {"network", "prevalence"}, default "network"
        The prior of ``Y_k`` in nbh's and full's posterior: the network's marginal
        ``P(Y_k = 1)`` (the paper's model), or ``prevalence``, which keeps the
        network's Bayes factor of the evidence and replaces its prior odds of
        ``Y_k = 1`` by ``prevalence_k / (1 - prevalence_k)``. On a forest the two
        differ only by the pseudo-count in ``theta``; on a DAG the network's marginal
        treats a class's parents as independent given their own parents and can be
        far below the prevalence. indpt's prior is always the prevalence.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> stage = SecondStage(h, "full", 1.0, None, [0.5, 0.5], prevalence=[0.5, 0.25])
    >>> L = np.array([[[1.0, 1.0], [1.0, 3.0]]])      # evidence only on the child
    >>> stage.mlpr(L).round(4)
    array([[0.6667, 0.5   ]])
    >>> from dataclasses import replace
    >>> replace(stage, version="indpt").mlpr(L).round(4)    # the child's own LPR at prevalence 0.25
    array([[0.5, 0.5]])
    """

    hierarchy: object
    version: str
    a: np.ndarray
    score_model: object
    theta: np.ndarray
    recalibration: object = None
    engine: str = "auto"
    cv_table: object = None
    seconds: dict = field(default_factory=dict)
    own: np.ndarray | None = None
    consistency: str = "hierrank"
    descendants: np.ndarray | None = None
    pool_weight: float | None = None
    pool_model: object = None
    stack_weight: float | None = None
    stack_model: object = None
    prevalence: np.ndarray | None = None
    options: dict = field(default_factory=dict)
    network: LabelNetwork | None = field(default=None, repr=False)
    prior: str = "network"
    prior_shift: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        check_choice(self.version, "version", VERSIONS)
        check_choice(self.consistency, "consistency", CONSISTENCY)
        network = self.network if self.network is not None else LabelNetwork(self.hierarchy, self.theta)
        k = network.hierarchy.n_classes
        fixed = {"network": network, "hierarchy": network.hierarchy, "theta": network.theta,
                 "a": _exponents(self.a, k, "a"), "options": dict(self.options or {})}
        if self.own is not None:
            fixed["own"] = _exponents(self.own, k, "own")
        if self.descendants is not None:
            if self.version != "full" or not network.hierarchy.is_forest:
                raise InputError("descendants (the exponent of the descendants' evidence) needs version='full' "
                                 f"on a forest, got version {self.version!r} on a "
                                 f"{'forest' if network.hierarchy.is_forest else 'DAG'}")
            fixed["descendants"] = _exponents(self.descendants, k, "descendants")
        if self.pool_weight is not None:
            w = float(self.pool_weight)
            if not 0.0 <= w < 1.0:  # also refuses nan
                raise InputError(f"pool_weight must be in [0, 1) (None: no pool), got {self.pool_weight!r}")
            fixed["pool_weight"] = w
        if self.stack_weight is not None:
            v = float(self.stack_weight)
            if not 0.0 < v <= 1.0:  # also refuses nan
                raise InputError(f"stack_weight must be in (0, 1] (None: no stack), got {self.stack_weight!r}")
            fixed["stack_weight"] = v
        prevalence = self.prevalence
        if prevalence is None and self.score_model is not None:
            prevalence = self.score_model.prevalence
        if prevalence is not None:
            prevalence = np.asarray(prevalence, dtype=float)
            if prevalence.shape != (k,):
                raise InputError(f"prevalence must have shape ({k},), got {prevalence.shape}")
        fixed["prevalence"] = prevalence
        check_choice(self.prior, "prior", PRIORS)
        fixed["prior_shift"] = None
        if self.prior == "prevalence" and self.version != "indpt":
            if prevalence is None:
                raise InputError("prior='prevalence' needs the training prevalence (prevalence or score_model)")
            fixed["prior_shift"] = prior_log_odds_shift(network, prevalence)
        for name, value in fixed.items():
            object.__setattr__(self, name, value)

    def likelihoods(self, scores):
        """Evidence pairs ``[L_k(0), L_k(1)]`` of the score models (untempered), shape (M, K, 2).

        Parameters
        ----------
        scores : array-like of shape (M, K)
            First-stage scores, columns in ``hierarchy.classes`` order.

        Returns
        -------
        ndarray of shape (M, K, 2)
            What each class's score says about its label.
        """
        if self.score_model is None:
            raise InputError("this second stage has no score models: give it likelihoods (SecondStage.mlpr)")
        return self.score_model.likelihoods(scores)

    def mlpr(self, likelihoods, *, pool_lpr=None, stack_lpr=None, **options):
        """The step from untempered evidence to the values ranked: tempered mLPR, own evidence, pool, stack,
        consistency.

        Parameters
        ----------
        likelihoods : ndarray of shape (M, K, 2)
            Untempered evidence pairs (:meth:`likelihoods`, or cross-fitting's out-of-fold ones).
        pool_lpr : ndarray of shape (M, K), optional
            The isotonic LPRs of the same rows, pooled with weight ``1 - pool_weight``:
            required when ``pool_weight`` is set, not read otherwise.
        stack_lpr : ndarray of shape (M, K), optional
            The neighbour stack's posteriors of the same rows, averaged with weight
            ``stack_weight``: required when it is set, not read otherwise.
        **options
            Engine options for this call, on top of ``options`` (not used by indpt).

        Returns
        -------
        ndarray of shape (M, K)
            The mLPRs (after the max constraint when ``consistency="max"``).
        """
        if self.version == "indpt":
            if self.prevalence is None:
                raise InputError("the indpt version needs the training prevalence (prevalence or score_model)")
            p = tempered_lpr(likelihoods, self.prevalence, self.a)
        elif self.descendants is not None:
            from .inference import split_full_posterior

            if np.any(np.asarray(likelihoods) <= 0):  # hard evidence may be impossible: the engines say so, not this
                raise InputError("likelihoods must be positive for the descendants' exponent (a zero is hard "
                                 "evidence, which may be impossible): use the engine's full version")
            p = split_full_posterior(self.hierarchy, self.theta, log_evidence_ratio(likelihoods), self.a,
                                     self.descendants, self.a if self.own is None else self.own)
        else:
            from .inference import mlpr_from_likelihoods

            def query(lik, a):
                return mlpr_from_likelihoods(self.network, temper(lik, a), version=self.version, engine=self.engine,
                                             **{**self.options, **options})

            p = query(likelihoods, self.a)
            if self.own is not None:  # the query again where the posterior cannot say (rounded to 1)
                p = own_evidence(p, likelihoods, self.a, self.own, query=query)
        if self.prior_shift is not None:
            p = with_prior(p, self.prior_shift)
        if self.pool_weight is not None:
            if pool_lpr is None:
                raise InputError("this second stage pools its mLPRs with isotonic LPRs (pool_weight): give pool_lpr")
            q = np.asarray(pool_lpr, dtype=float)
            if q.shape != p.shape:
                raise InputError(f"pool_lpr must have shape {p.shape}, got {q.shape}")
            p = self.pool_weight * p + (1.0 - self.pool_weight) * q
        if self.stack_weight is not None:
            if stack_lpr is None:
                raise InputError("this second stage averages its values with the neighbour stack's (stack_weight): "
                                 "give stack_lpr")
            r = np.asarray(stack_lpr, dtype=float)
            if r.shape != p.shape:
                raise InputError(f"stack_lpr must have shape {p.shape}, got {r.shape}")
            p = (1.0 - self.stack_weight) * p + self.stack_weight * r
        return consistent_values(p, self.hierarchy, self.consistency)

    def predict_proba(self, scores, **options):
        """mLPRs of new rows under the version, tempering, own evidence and consistency, shape (M, K).

        Parameters
        ----------
        scores : array-like of shape (M, K)
            First-stage scores of the new rows.
        **options
            Engine options of :func:`hmcpgm.mlpr_from_likelihoods` (not used by indpt).

        Returns
        -------
        ndarray of shape (M, K)
            The mLPRs.
        """
        pool_lpr = None
        if self.pool_weight is not None:
            if self.pool_model is None:
                raise InputError("this second stage pools with isotonic LPRs (pool_weight) but has no pool_model")
            pool_lpr = self.pool_model.lpr(scores)
        stack_lpr = None
        if self.stack_weight is not None:
            if self.stack_model is None:
                raise InputError("this second stage averages with the neighbour stack (stack_weight) but has no "
                                 "stack_model")
            stack_lpr = self.stack_model.lpr(scores)
        return self.mlpr(self.likelihoods(scores), pool_lpr=pool_lpr, stack_lpr=stack_lpr, **options)

    def calibrate(self, mlpr):
        """``g(mLPR)``, or the mLPRs themselves when there is no recalibration map.

        A class whose training labels do not vary (every row has it, or none) takes its
        training rate, 1 or 0: the map was not fitted on its events
        (:func:`hmcpgm.calibration.recalibration_classes`). Mapped, a class every row
        has took the map's top rate (0.88 on one data set), and the Bayesian FDR cutoff,
        whose ranking it heads, called nothing. Its mLPR would not do either: below 1
        (nbh's prior), it could fall below a child's mapped value. With 1 and 0 the
        values keep the hierarchy's order, as labels closed upward do (a child of a
        class no row has has no row either).

        Parameters
        ----------
        mlpr : array-like of shape (M, K)
            Values made by :meth:`mlpr` or :meth:`predict_proba`, columns in
            ``hierarchy.classes`` order (a DataFrame is aligned by class name).

        Returns
        -------
        ndarray of shape (M, K)
            The recalibrated values, columns in ``hierarchy.classes`` order.
        """
        mlpr = class_matrix(mlpr, self.hierarchy, "mlpr", allow_nan=True)
        if self.recalibration is None:
            return mlpr
        out = self.recalibration(mlpr)
        certain = self.certain_classes()
        if certain.size:
            out = np.array(out, dtype=float)
            out[:, certain] = np.round(self.score_model.prevalence[certain])  # exactly 1 or 0
        return out

    def certain_classes(self):
        """Indices of the classes whose training labels do not vary, which :meth:`calibrate` sets to 1 or 0.

        Returns
        -------
        ndarray of int
            Empty without score models, or when no class's labels vary (the map then covers every class).
        """
        if self.score_model is None:
            return np.zeros(0, dtype=np.intp)
        prevalence = np.asarray(self.score_model.prevalence, dtype=float)
        return np.setdiff1d(np.arange(prevalence.size), recalibration_classes(prevalence))

    def predict_calibrated(self, scores=None, *, mlpr=None):
        """Recalibrated mLPRs ``g(mLPR)`` (for the Bayesian FDR); pass ``mlpr`` to skip inference.

        Parameters
        ----------
        scores : array-like of shape (M, K), optional
            First-stage scores of the new rows (not read when ``mlpr`` is given).
        mlpr : array-like of shape (M, K), optional
            The mLPRs, already computed by :meth:`predict_proba` (a DataFrame is aligned by class name).

        Returns
        -------
        ndarray of shape (M, K)
            ``g(mLPR)``, or the mLPRs when there is no recalibration map.
        """
        return self.calibrate(self.predict_proba(scores) if mlpr is None else mlpr)


def prior_log_odds_shift(network, prevalence):
    """``logit prevalence_k - logit P_network(Y_k = 1)`` per class, shape (K,).

    What :func:`hmcpgm.tempering.with_prior` adds to a network posterior's logit to
    give it the prevalence's prior odds. 0 where the network's marginal is 0 or 1
    (its posterior is then 0 or 1 whatever the evidence, and stays so); the
    prevalence is clipped to ``[1e-12, 1 - 1e-12]``, as indpt's.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> net = LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5])   # P(Y_1 = 1) = 0.25
    >>> prior_log_odds_shift(net, [0.5, 0.25]).round(12)
    array([0., 0.])
    >>> prior_log_odds_shift(net, [0.5, 0.5]).round(6)        # logit 0.5 - logit 0.25 = log 3
    array([0.      , 1.098612])
    """
    log_marginal = np.asarray(network.log_prior_marginals, dtype=float)
    p = np.clip(np.asarray(prevalence, dtype=float), 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.log(p) - np.log1p(-p) - (log_marginal - np.log(-np.expm1(log_marginal)))
    return np.where(np.isfinite(shift), shift, 0.0)


def _exponents(a, k, name):
    """``a`` as a (K,) float array (a number is every class's)."""
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        a = np.full(k, float(a))
    if a.shape != (k,):
        raise InputError(f"{name} must be a number or {k} of them (one per class), got shape {a.shape}")
    return a
