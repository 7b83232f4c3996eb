"""The scikit-learn style front door: :class:`MLPR`.

``MLPR().fit(scores, labels, hierarchy)`` estimates the label CPDs ``theta``
and one score model per class from training data; ``predict_proba(scores)``
returns the mLPRs of new objects, posterior probabilities
``P(Y_k = 1 | scores of the object, hierarchy)`` from the Bayesian network.

This module imports scikit-learn (for ``BaseEstimator`` and the fitted-state
checks); ``import hmcpgm`` loads it only when ``hmcpgm.MLPR`` is first used.
"""

from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ._validation import check_hierarchy, class_matrix, label_matrix
from .exceptions import InputError
from .likelihood import SCORE_MODELS, estimate_theta, fit_score_model

__all__ = ["MLPR"]

_VERSIONS = ("full", "nbh", "indpt")
_ENGINES = ("auto", "tree", "junction", "sparse", "loopy", "pgmpy", "enumerate")


class MLPR(BaseEstimator):
    """mLPRs from first-stage scores and a class hierarchy (Ye et al.).

    Parameters
    ----------
    version : {"full", "nbh", "indpt"}, default "full"
        ``"full"``: each mLPR uses the scores of every class of the object.
        ``"nbh"``: only the scores of the class, its parents and its children.
        ``"indpt"``: the class's own local precision rate ``LPR_k(s_k)``
        (read from the score model; no network inference).
    score_model : {"lpr", "gaussian", "kde", "precision"}, default "lpr"
        How scores become evidence; see :mod:`hmcpgm.likelihood`.
    engine : {"auto", "tree", "junction", "loopy", "pgmpy", "enumerate"}, default "auto"
        Inference engine of :func:`hmcpgm.mlpr_from_likelihoods`.
    pseudo_count : float, default 0.5
        Additive pseudo-count of :func:`hmcpgm.likelihood.estimate_theta`;
        0 gives the paper's plain fractions.
    close_labels : bool, default False
        Close training labels upward instead of raising when a positive class
        has a negative parent.
    allow_empty : bool, default False
        Accept classes without positive (or without negative) training
        examples; their scores are then treated as carrying no evidence.
    bandwidth : {"silverman", "scott", "normal_reference"} or float, default "silverman"
        Kernel bandwidth rule of the ``"lpr"`` and ``"kde"`` score models.
    gridsize : int, default 512
        Grid points per class of the kernel density score models.
    eps : float, default 1e-6
        The ``"lpr"`` score model clips LPRs to ``[eps, 1 - eps]``.
    inference_options : dict, optional
        Extra keyword options of the engine (``max_clique``, ``damping``,
        ``tol``, ``max_iter``, ``max_classes``).

    Attributes
    ----------
    hierarchy_ : Hierarchy
        The hierarchy given to ``fit``; its ``classes`` fix the column order.
    classes_ : tuple
        ``hierarchy_.classes``.
    theta_ : ndarray of shape (K,)
        ``P(Y_k = 1 | all parents positive)`` estimated from the labels.
    prevalence_ : ndarray of shape (K,)
        Training fraction of positives per class.
    score_model_ : hmcpgm.likelihood.ScoreModel
        The fitted per-class score models.
    network_ : pgmpy.models.DiscreteBayesianNetwork
        The label network (built from ``hierarchy_`` and ``theta_`` on first
        access, since importing pgmpy takes seconds).

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, MLPR
    >>> h = Hierarchy.from_parents([None, 0, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((3000, 3)) < [0.4, 0.5, 0.5]).astype(int)
    >>> y[:, 1:] *= y[:, [0]]                       # children only under a positive root
    >>> scores = rng.normal(loc=1.5 * y)
    >>> model = MLPR().fit(scores, y, h)
    >>> p = model.predict_proba(scores[:5])
    >>> p.shape
    (5, 3)
    >>> bool((p[:, 1:] <= p[:, [0]] + 1e-12).all())  # a child never beats its parent
    True
    """

    def __init__(
        self,
        *,
        version="full",
        score_model="lpr",
        engine="auto",
        pseudo_count=0.5,
        close_labels=False,
        allow_empty=False,
        bandwidth="silverman",
        gridsize=512,
        eps=1e-6,
        inference_options=None,
    ):
        self.version = version
        self.score_model = score_model
        self.engine = engine
        self.pseudo_count = pseudo_count
        self.close_labels = close_labels
        self.allow_empty = allow_empty
        self.bandwidth = bandwidth
        self.gridsize = gridsize
        self.eps = eps
        self.inference_options = inference_options

    # ------------------------------------------------------------------ fitting
    def _check_params(self):
        if self.version not in _VERSIONS:
            raise InputError(f"version must be one of {_VERSIONS}, got {self.version!r}")
        if self.score_model not in SCORE_MODELS:
            raise InputError(f"score_model must be one of {SCORE_MODELS}, got {self.score_model!r}")
        if self.engine not in _ENGINES:
            raise InputError(f"engine must be one of {_ENGINES}, got {self.engine!r}")
        opts = self.inference_options
        if opts is not None and not isinstance(opts, dict):
            raise InputError(f"inference_options must be a dict or None, got {type(opts).__name__}")
        if opts and "return_report" in opts:
            raise InputError(
                "inference_options cannot contain 'return_report'; call "
                "hmcpgm.inference.loopy_belief_propagation for a convergence report"
            )
        for name in ("close_labels", "allow_empty"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be True or False, got {getattr(self, name)!r}")

    def fit(self, scores, labels, hierarchy):
        """Estimate ``theta`` and the per-class score models.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            Training scores; a numpy array has its columns in
            ``hierarchy.classes`` order, a DataFrame names them (any order).
        labels : array-like or DataFrame of shape (M, K)
            0/1 training labels that respect the hierarchy.
        hierarchy : Hierarchy

        Returns
        -------
        self
        """
        self._check_params()
        hierarchy = check_hierarchy(hierarchy)
        s = class_matrix(scores, hierarchy, "scores")
        y = label_matrix(labels, hierarchy, close=self.close_labels)
        if s.shape[0] != y.shape[0]:
            raise InputError(
                f"scores has {s.shape[0]} rows but labels has {y.shape[0]}; they must describe the same objects"
            )
        theta = estimate_theta(y, hierarchy, pseudo_count=self.pseudo_count)
        model = fit_score_model(
            s,
            y,
            hierarchy,
            kind=self.score_model,
            bandwidth=self.bandwidth,
            gridsize=self.gridsize,
            eps=self.eps,
            allow_empty=self.allow_empty,
        )
        self.__dict__.pop("_network", None)
        self.hierarchy_ = hierarchy
        self.classes_ = hierarchy.classes
        self.theta_ = theta
        self.prevalence_ = model.prevalence
        self.score_model_ = model
        return self

    # ------------------------------------------------------------------ prediction
    def _scores(self, scores):
        check_is_fitted(self, ["theta_", "score_model_"])
        return class_matrix(scores, self.hierarchy_, "scores")

    def likelihoods(self, scores):
        """Evidence pairs ``[L_k(0), L_k(1)]``, shape (M, K, 2), from the fitted score models."""
        s = self._scores(scores)  # checks fitted state first
        return self.score_model_.likelihoods(s)

    def lpr(self, scores):
        """Per-class local precision rates ``P(Y_k = 1 | s_k)``, shape (M, K) (no hierarchy)."""
        s = self._scores(scores)  # checks fitted state first
        return self.score_model_.lpr(s)

    def predict_proba(self, scores):
        """mLPRs of new objects.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)

        Returns
        -------
        ndarray of shape (M, K)
            ``P(Y_k = 1 | evidence)``, columns in ``classes_`` order.
        """
        s = self._scores(scores)
        if self.version == "indpt":
            return self.score_model_.lpr(s)
        from .inference import mlpr_from_likelihoods

        return mlpr_from_likelihoods(
            self.hierarchy_,
            self.theta_,
            self.score_model_.likelihoods(s),
            version=self.version,
            engine=self.engine,
            **(self.inference_options or {}),
        )

    @property
    def network_(self):
        """pgmpy.models.DiscreteBayesianNetwork: the label network of the fitted model."""
        if "_network" not in self.__dict__:
            try:
                check_is_fitted(self, ["theta_", "hierarchy_"])
            except NotFittedError as exc:  # an AttributeError too: hasattr() sees False
                raise NotFittedError(str(exc)) from None
            from .network import to_pgmpy

            self._network = to_pgmpy(self.hierarchy_, self.theta_)
        return self._network
