"""Per-class score models: where the evidence vectors ``[L_k(0), L_k(1)]`` come from.

The Bayesian network sees a first-stage score ``S_k`` only through the
likelihood pair ``L_k(y)`` proportional to ``p(S_k | Y_k = y)``. This module
fits one score model per class from training scores and labels.

Posterior route: ``L_k(y) = P(Y_k = y | s) / P(Y_k = y)`` with ``P(Y_k = 1 | s)``
the class's local precision rate ``LPR_k(s)`` and ``P(Y_k = 1)`` its training
prevalence. ``LPR_k`` is estimated by one of

``"lpr"`` (default)
    the kernel estimate ``LPR = 1 - pi0 f0 / f`` (Jiang, Liu & Huang 2014),
    written as the kernel-weighted rate of positives near ``s``: with
    ``n(s) = sum_i exp(-(t(s) - t_i)^2 / (2 h^2))`` the kernel-weighted number of
    training objects near ``s`` and ``n1(s)`` that of positives,
    ``LPR = (n1 + c p) / (n + c)``, shrunk toward the prevalence ``p`` by
    ``c = prior_count`` pseudo-objects (``c = 0`` is the plain kernel
    estimate). Where fewer than ``min_count`` objects are near (the tails, the
    scores of rare classes), the window widens (bandwidths ``h, 2h, ..., 16h``)
    until it holds ``min_count`` objects, so the LPR there is what the counts
    support and not ``1 - eps`` from one or two positives.
``"isotonic"``
    a monotone fit (increasing or decreasing, the direction of the class's
    rank correlation); neighbouring blocks merged until each holds
    ``min_count`` objects, each block's rate shrunk toward the prevalence by
    ``prior_count``; linear between block centres.
``"platt"``
    logistic regression of the label on the asinh-transformed score, with
    Platt's targets ``(n1 + 1) / (n1 + 2)`` and ``1 / (n0 + 2)``: robust to
    extreme scores.
``"logistic"``
    the same on the scores as they are: right for logit-like first-stage
    scores (class-wise logistic regressions), whose top the asinh scale
    compresses.
``"pooled"``
    empirical Bayes across classes: one increasing map ``g`` of the raw scores,
    fitted by isotonic regression on the events of every class pooled, and per
    class ``logit LPR_k = a_k + b_k logit g(s)`` with ``(a_k, b_k)`` drawn from a
    common Gaussian whose mean and variances are estimated from all classes (EM
    with Laplace approximations). A class with few positives is pulled to the
    common map; with a joint first stage, whose scores are on one scale, that
    keeps the raw ranking across classes.
``"auto"``
    per class, by cross-validated log loss on the training rows
    (:func:`cross_validated_lpr`, :func:`choose_candidates`): ``"logistic"``
    unless another candidate of ``AUTO_CANDIDATES`` is better by more than two
    standard errors of the paired per-row difference (near-ties never flip the
    choice; a class with an extreme training score, which spoils the logistic
    fit, moves to ``"platt"`` or a kernel model).
``"precision"``
    the R package's estimator: with ``u`` the score quantile and ``G(u)`` the
    precision of the objects scoring above it, ``LPR(u) = G(u) - (1 - u) G'(u)``,
    ``G`` read at 100 quantiles and smoothed by a cubic smoothing spline
    (scipy's ``make_smoothing_spline``, penalty by generalised cross-validation).
    Kept for comparison.

Density route: ``"gaussian"`` (normal densities per class and label) and
``"kde"`` (kernel density estimates ``f_{y,k}(s)``); the likelihood pair is the
two densities scaled so that the larger is 1 and the smaller is at least
``1e-12``.

Robust grids. Every model except ``"gaussian"`` is evaluated once, at fit time,
on a grid of ``gridsize`` points per class and interpolated linearly, vectorised
over all objects and classes. The grid is uniform on the transformed scale
``t = asinh((s - median) / scale)`` (``scale`` the class's interquartile range
/ 1.349, else its standard deviation, else 1; ``transform="none"`` keeps
``t = s``): near the median it is the standardised score, in the tails it grows
like a logarithm, so one training score of 1e6 stretches the grid by a few
units instead of squeezing every other score into one cell. Kernels (Gaussian)
work on ``t``; bandwidths follow statsmodels' rules (Silverman's
``0.9 min(sd, IQR / 1.349) n^(-1/5)`` by default), each class's from its own ``t``
alone; densities are binned (linear binning onto twice the
grid) and convolved by FFT for all classes at once. The grid spans the
training scores of the class; a score outside is clamped to the nearest end
(beyond the data a class gets the evidence of its most extreme training score).

Speed. The loops over objects and grid points (binning, the widening window,
the isotonic fits, the Newton steps of the logistic fits, the log losses and the
grid interpolation) are compiled with numba, classes in parallel; the FFTs are
numpy's. :func:`cross_validated_lpr` sorts the scores once for all folds. Each
compiled path gives the numbers of the plain numpy code it replaced (to
rounding; tests/test_score_model_speed.py compares them with a frozen copy).

A fitted model exports its parameters as plain arrays with
:meth:`ScoreModel.to_dict` and is rebuilt with :func:`score_model_from_dict`
(no pickle); the per-class choice of ``"auto"`` is stored as model names.

Beside the per-class models, the neighbour stack (:func:`fit_neighbour_stack`,
:class:`NeighbourStack`) gives each class's posterior from its own and its
neighbours' scores: a penalised logistic regression on the Platt-calibrated logits of
the class's score, its lowest parent's, and its children's highest and log-sum-exp.
It is not evidence for the network (it reads other classes' scores); the estimator
averages it with the network's values (``MLPR(stack=...)``).

The models are the rows of one table, the score-model registry
(``likelihood/_registry.py``, :class:`ScoreModelSpec`): name, route, fitter, the
arrays a fitted model holds, and whether ``"auto"`` considers it
(``AUTO_CANDIDATES``). ``SCORE_MODELS`` lists its names; adding a model is one
entry there plus its tests (docs/concepts.md, "Adding a score model").
"""

from ._common import TRANSFORMS as TRANSFORMS
from ._cv import choose_candidates, cross_validated_lpr, log_loss_by_class
from ._fit import fit_score_model
from ._model import ScoreModel, score_model_from_dict
from ._registry import (
    AUTO_BASELINE,
    AUTO_CANDIDATES,
    LEGACY_AUTO_CANDIDATES,
    POSTERIOR_MODELS,
    SCORE_MODELS,
    ScoreModelSpec,
    get_score_model,
)
from ._stack import DEFAULT_STACK_PRECISION, NeighbourStack, crossfitted_stack, fit_neighbour_stack

__all__ = [
    "DEFAULT_STACK_PRECISION",
    "NeighbourStack",
    "crossfitted_stack",
    "fit_neighbour_stack",
    "AUTO_BASELINE",
    "AUTO_CANDIDATES",
    "LEGACY_AUTO_CANDIDATES",
    "POSTERIOR_MODELS",
    "SCORE_MODELS",
    "ScoreModelSpec",
    "get_score_model",
    "ScoreModel",
    "cross_validated_lpr",
    "fit_score_model",
    "choose_candidates",
    "log_loss_by_class",
    "score_model_from_dict",
]
