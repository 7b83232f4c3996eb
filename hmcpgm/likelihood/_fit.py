"""Fitting one score model per class from training scores and labels."""

import numpy as np

from .._columns import labels_by_score_rows
from .._util import preview, warn
from .._validation import check_hierarchy, class_matrix, label_matrix
from ..exceptions import HmcpgmWarning, InputError, LabelError
from ._cv import choose_candidates, cross_validated_lpr, log_loss_by_class
from ._model import ScoreModel
from ._registry import AUTO_BASELINE, AUTO_CANDIDATES, check_options, fit_grid_models, get_score_model


def fit_score_model(
    scores,
    labels,
    hierarchy,
    kind="lpr",
    *,
    bandwidth="silverman",
    gridsize=512,
    eps=1e-6,
    prior_count=1.0,
    min_count=10.0,
    transform="asinh",
    cv=5,
    seed=0,
    cross_validation=None,
    allow_empty=False,
    close_labels=False,
):
    """Fit one score model per class from training scores and labels.

    Parameters
    ----------
    scores : array-like or DataFrame of shape (M, K)
        First-stage scores (any real numbers; higher need not mean positive).
    labels : array-like or DataFrame of shape (M, K)
        0/1 labels that respect the hierarchy.
    hierarchy : Hierarchy
        Fixes the column order (and aligns DataFrame columns by class name).
    kind : str, default "lpr"
        One of ``SCORE_MODELS``; see the module docstring.
    bandwidth : {"silverman", "scott", "normal_reference"} or float, default "silverman"
        Kernel bandwidth rule (statsmodels' rules, applied to each class's
        transformed scores alone) or a fixed bandwidth on the transformed
        scale; used by ``"lpr"`` and ``"kde"``. A sample whose rule gives 0
        (e.g. a single positive) falls back to the bandwidth of all scores of
        the class.
    gridsize : int, default 512
        Grid points per class on which densities and LPRs are stored.
    eps : float, default 1e-6
        Posterior route: the local precision rate is clipped to ``[eps, 1 - eps]``.
    prior_count : float, default 1.0
        ``"lpr"`` and ``"isotonic"``: pseudo-objects at the class prevalence
        added to every local (or block) count; 0 turns the shrinkage off.
    min_count : float, default 10.0
        ``"lpr"``: the kernel window widens until it holds this many
        (kernel-weighted) training objects; ``"isotonic"``: blocks hold at
        least this many objects.
    transform : {"asinh", "none"}, default "asinh"
        Scale of the grids and kernels (see the module docstring).
    cv, seed : int
        ``"auto"``: folds (``KFold(cv, shuffle=True, random_state=seed)``) of the
        per-class choice.
    cross_validation : dict, optional
        ``"auto"``: the output of :func:`cross_validated_lpr` on these scores
        and labels with ``kinds=AUTO_CANDIDATES``, reused instead of recomputed;
        with its :func:`log_loss_by_class` (key ``"log_loss"``) and
        :func:`choose_candidates` (key ``"choice"``) when the caller has them
        (:func:`hmcpgm.selection.cross_fit` adds them).
    allow_empty : bool, default False
        A class with no positive training example is an error unless this is
        True. A class positive for every training object (a root of the Gene
        Ontology) is accepted with a warning (silently with True). Either way
        such a class's likelihoods are ``[1, 1]`` (its score carries no
        evidence) and its LPR is its prevalence.
    close_labels : bool, default False
        Close labels upward instead of raising on hierarchy violations.

    Returns
    -------
    ScoreModel
        One fitted model per class.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = (rng.random((2000, 1)) < [0.5, 0.25]).astype(int)
    >>> y[:, 1] &= y[:, 0]
    >>> s = rng.normal(loc=2.0 * y)
    >>> model = fit_score_model(s, y, h, kind="lpr")
    >>> model.likelihoods(s).shape
    (2000, 2, 2)
    >>> lpr = model.lpr([[-3.0, -3.0], [5.0, 5.0]])
    >>> bool(lpr[0, 0] < 0.05 and lpr[1, 0] > 0.95)
    True
    """
    hierarchy = check_hierarchy(hierarchy)
    opts = check_options(kind, bandwidth, gridsize, eps, prior_count, min_count, transform, cv)
    labels = labels_by_score_rows(scores, labels)
    s = class_matrix(scores, hierarchy, "scores")
    y = label_matrix(labels, hierarchy, close=close_labels).astype(bool)
    if s.shape[0] != y.shape[0]:
        raise InputError(
            f"scores has {s.shape[0]} rows but labels has {y.shape[0]}; they must describe the same objects"
        )
    m = s.shape[0]
    n_pos = y.sum(axis=0)
    informative = (n_pos > 0) & (n_pos < m)
    always = np.flatnonzero(n_pos == m) if m > 1 else np.zeros(0, dtype=np.intp)
    if not allow_empty and len(always):  # e.g. the Gene Ontology's roots: nothing to learn, nothing to refuse
        warn(f"{len(always)} classes are positive for every training object "
             f"({preview(hierarchy.classes[i] for i in always)}): their scores carry no evidence", HmcpgmWarning)
    if not allow_empty and (n_pos == 0).any():
        raise LabelError(_empty_message(hierarchy, y, np.where(n_pos == m, 1, n_pos) if m > 1 else n_pos, m))
    prevalence = n_pos / m
    if kind != "auto" and not get_score_model(kind).on_grid:
        params = get_score_model(kind).fit(s, y, informative)
    elif kind == "auto":
        cvres = cross_validation
        if cvres is None:
            cvres = cross_validated_lpr(s, y, hierarchy, AUTO_CANDIDATES, cv=cv, seed=seed, **opts)
        elif np.shape(cvres.get("lpr")) != (len(AUTO_CANDIDATES), *s.shape):
            raise InputError(
                f"cross_validation['lpr'] must have shape {(len(AUTO_CANDIDATES), *s.shape)} "
                f"(cross_validated_lpr with kinds=AUTO_CANDIDATES), got {np.shape(cvres.get('lpr'))}"
            )
        loss = cvres["log_loss"] if "log_loss" in cvres else log_loss_by_class(cvres["lpr"], y)
        choice = cvres["choice"] if "choice" in cvres else choose_candidates(cvres["lpr"], y, baseline=AUTO_BASELINE)
        params = fit_grid_models(s, y, informative, prevalence, AUTO_CANDIDATES, opts,
                                  only={i: choice == i for i in range(len(AUTO_CANDIDATES))})
        params["lpr"] = params.pop("lpr_by_kind")[choice, np.arange(len(choice))]
        params["choice"] = np.array([AUTO_CANDIDATES[i] for i in choice], dtype=str)  # names, not positions
        params["candidates"] = np.array(AUTO_CANDIDATES, dtype=str)  # the columns of cv_log_loss
        params["cv_log_loss"] = loss
    else:
        params = fit_grid_models(s, y, informative, prevalence, (kind,), opts)
        if get_score_model(kind).route == "posterior":
            params["lpr"] = params.pop("lpr_by_kind")[0]
    return ScoreModel(kind, hierarchy.classes, prevalence, informative, params, hierarchy)


def _empty_message(hierarchy, y, n_pos, m):
    parts = []
    no_pos = np.flatnonzero(n_pos == 0)
    if len(no_pos):
        never = [
            k for k in no_pos
            if len(hierarchy.parent_indices[k]) and not y[:, hierarchy.parent_indices[k]].all(axis=1).any()
        ]
        text = f"no positive example for {len(no_pos)} classes ({preview(hierarchy.classes[i] for i in no_pos)})"
        if never:
            text += (
                f", of which {len(never)} never have all parents positive "
                f"({preview(hierarchy.classes[i] for i in never)})"
            )
        parts.append(text)
    no_neg = np.flatnonzero(n_pos == m)
    if len(no_neg):
        parts.append(
            f"no negative example for {len(no_neg)} classes ({preview(hierarchy.classes[i] for i in no_neg)})"
        )
    return (
        "labels give " + "; ".join(parts) + ", so their score models cannot be fitted; "
        "drop those classes (Hierarchy.subgraph) or pass allow_empty=True to treat their "
        "scores as carrying no evidence"
    )
