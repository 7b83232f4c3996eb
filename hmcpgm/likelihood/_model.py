"""The fitted score model: evidence pairs, LPRs and densities of new scores; export and rebuild."""

import numpy as np

from .._validation import check_hierarchy, class_matrix
from ..exceptions import InputError
from ..hierarchy import Hierarchy
from ..options import check_choice
from ._common import MIN_RATIO
from ._grid import forward, interp_grid
from ._registry import (
    AUTO_PARAMS,
    LEGACY_AUTO_CANDIDATES,
    POSTERIOR_MODELS,
    SCORE_MODELS,
    choice_names,
    get_score_model,
    param_names,
)


class ScoreModel:
    """A fitted per-class score model; build one with :func:`fit_score_model`.

    The other constructor arguments are kept as the attributes of the same names.

    Parameters
    ----------
    hierarchy : Hierarchy, optional
        Aligns the columns of DataFrame scores by class name; default flat classes
        named by ``classes``.

    Attributes
    ----------
    kind : str
        One of ``SCORE_MODELS``.
    classes : tuple
        Column order of the score matrices it accepts.
    prevalence : ndarray of shape (K,)
        Training fraction of positives ``P(Y_k = 1)``.
    informative : ndarray of shape (K,), bool
        False for classes fitted without positives or without negatives (only
        with ``allow_empty=True``): their likelihoods are ``[1, 1]``.
    params : dict of ndarrays
        The fitted parameters: grid ends ``lo``, ``hi`` (on the transformed
        scale), the transform ``center``, ``scale`` and ``asinh`` flag, and the
        grid values (``lpr``, or ``density0`` and ``density1``), or the Gaussian
        ``mean`` and ``sd``. ``"auto"`` adds ``choice`` (the name of the model
        chosen per class), ``candidates`` (the names of the candidates) and
        ``cv_log_loss`` (K, candidates): names, not positions, so a model saved
        before a candidate was added reads the same.
    """

    def __init__(self, kind, classes, prevalence, informative, params, hierarchy=None):
        self.kind = kind
        self.classes = tuple(classes)
        self.prevalence = np.asarray(prevalence, dtype=float)
        self.informative = np.asarray(informative, dtype=bool)
        params = dict(params)
        if "choice" in params:  # positions (files of format 3 and older) become names
            cands = params.get("candidates", LEGACY_AUTO_CANDIDATES)
            cands = [str(c) for c in np.asarray(cands).tolist()]
            params["candidates"] = cands
            params["choice"] = choice_names(params["choice"], cands, len(self.classes))
            loss = params.get("cv_log_loss")
            if loss is not None and np.shape(loss)[1:] != (len(cands),):
                raise InputError(f"the score model's cv_log_loss must have one column per candidate ({len(cands)}), "
                                 f"got shape {np.shape(loss)}")
        self.params = {k: np.asarray(v, dtype=str if k in AUTO_PARAMS else float) for k, v in params.items()}
        if hierarchy is None:
            hierarchy = Hierarchy.from_edges([], classes=self.classes)
        self._hierarchy = hierarchy

    def __repr__(self):
        return f"ScoreModel(kind={self.kind!r}, n_classes={len(self.classes)})"

    @property
    def n_classes(self):
        """int: number of classes."""
        return len(self.classes)

    @property
    def choice(self):
        """tuple of str: the score model chosen per class (``"auto"``), else ``kind`` for every class."""
        if "choice" in self.params:
            return tuple(self.params["choice"].tolist())
        return (self.kind,) * self.n_classes

    def _scores(self, scores):
        return class_matrix(scores, self._hierarchy, "scores")

    def _t(self, s):
        p = self.params
        return forward(s, p["center"], p["scale"], p["asinh"])

    def _table(self, s, name):
        p = self.params
        return interp_grid(self._t(s), p["lo"], p["hi"], p[name])

    # -- evaluation -----------------------------------------------------
    def likelihoods(self, scores):
        """Evidence pairs ``[L_k(0), L_k(1)]`` for every object and class.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores, columns in ``classes`` order (or named by class).

        Returns
        -------
        ndarray of shape (M, K, 2)
            Finite and positive. Posterior route: ``P(Y=y | s) / P(Y=y)``;
            density models: the two densities scaled so the larger is 1.
        """
        s = self._scores(scores)
        if self.kind in POSTERIOR_MODELS:
            lpr = self._table(s, "lpr")
            p1 = np.where(self.informative, self.prevalence, 0.5)  # 0 or 1 when uninformative
            out = np.stack([(1 - lpr) / (1 - p1), lpr / p1], axis=-1)
        else:
            logf = self._log_densities(s)
            logf = logf - logf.max(axis=-1, keepdims=True)
            out = np.exp(np.maximum(logf, np.log(MIN_RATIO)))
        out[:, ~self.informative, :] = 1.0
        return out

    def lpr(self, scores):
        """Local precision rate ``P(Y_k = 1 | S_k = s)`` for every object and class.

        The posterior route reads it from the fitted grid; the density models
        give ``p1 f1 / (p0 f0 + p1 f1)`` with the training prevalence ``p1``.

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores, columns in ``classes`` order (or named by class).

        Returns
        -------
        ndarray of shape (M, K)
            Probabilities; the prevalence for uninformative classes.
        """
        s = self._scores(scores)
        p1 = np.broadcast_to(self.prevalence, s.shape)
        if self.kind in POSTERIOR_MODELS:
            out = self._table(s, "lpr")
        else:
            logf = self._log_densities(s)
            # p1 f1 / (p0 f0 + p1 f1) = 1 / (1 + exp(log p0 f0 - log p1 f1))
            with np.errstate(divide="ignore"):
                z = np.log1p(-p1) + logf[..., 0] - np.log(p1) - logf[..., 1]
            out = 1.0 / (1.0 + np.exp(np.clip(z, -700, 700)))
        return np.where(self.informative, out, p1).astype(float)

    def densities(self, scores):
        """Fitted class-conditional densities ``[f_0k(s), f_1k(s)]`` (density models only).

        Parameters
        ----------
        scores : array-like or DataFrame of shape (M, K)
            First-stage scores, columns in ``classes`` order (or named by class).

        Returns
        -------
        ndarray of shape (M, K, 2)
            The densities of each score given ``Y_k = 0`` and ``Y_k = 1``.

        Raises
        ------
        InputError
            For a posterior-route model, which has no densities.
        """
        if self.kind in POSTERIOR_MODELS:
            raise InputError(
                "densities() is defined for the 'gaussian' and 'kde' score models; "
                f"the {self.kind!r} model estimates P(Y | s), use lpr() or likelihoods()"
            )
        return np.exp(self._log_densities(self._scores(scores)))

    def _log_densities(self, s):
        p = self.params
        spec = get_score_model(self.kind)
        if not spec.on_grid:
            return spec.log_densities(p, s)
        f0 = self._table(s, "density0")
        f1 = self._table(s, "density1")
        # densities of t = asinh((s - c) / scale) -> densities of s (clamped like the grid)
        t = np.clip(self._t(s), p["lo"], p["hi"])
        with np.errstate(divide="ignore"):
            log_jac = np.where(p["asinh"] > 0, -np.log(p["scale"]) - np.log(np.cosh(t)), -np.log(p["scale"]))
            return np.log(np.stack([f0, f1], axis=-1)) + log_jac[..., None]

    # -- export ---------------------------------------------------------
    def to_dict(self):
        """The model as a dict of plain values and numpy arrays (no pickle needed).

        Arrays can be saved with ``numpy.savez`` or turned into lists for JSON;
        :func:`score_model_from_dict` rebuilds the model.

        Returns
        -------
        dict
            ``kind``, ``classes``, ``prevalence``, ``informative`` and the arrays of ``params`` (copies).
        """
        return {
            "kind": self.kind,
            "classes": list(self.classes),
            "prevalence": self.prevalence.copy(),
            "informative": self.informative.copy(),
            **{k: v.copy() for k, v in self.params.items()},
        }


def score_model_from_dict(data, hierarchy=None):
    """Rebuild a :class:`ScoreModel` from :meth:`ScoreModel.to_dict` output.

    Parameters
    ----------
    data : dict
        Values may be lists (from JSON) or arrays.
    hierarchy : Hierarchy, optional
        Used only to reorder DataFrame columns; must have the same classes.

    Returns
    -------
    ScoreModel
        The model that gives the same likelihoods as the one exported.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> from hmcpgm.likelihood import fit_score_model
    >>> h = Hierarchy.from_parents([None, 0])
    >>> rng = np.random.default_rng(0)
    >>> y = np.array([[1, 1], [1, 0], [0, 0], [1, 1]] * 25)
    >>> s = y + rng.normal(size=y.shape)
    >>> model = fit_score_model(s, y, h, kind="gaussian")
    >>> again = score_model_from_dict(model.to_dict())
    >>> bool(np.allclose(again.likelihoods(s), model.likelihoods(s)))
    True
    """
    kind = data.get("kind")
    check_choice(kind, "data['kind']", SCORE_MODELS)
    names = list(param_names(kind))
    if kind == "auto" and "candidates" not in data:  # files of format 3 and older: positions, legacy candidates
        names.remove("candidates")
    params = {}
    if (kind == "auto" or get_score_model(kind).on_grid) and "center" not in data and "lo" in data:
        # models saved before the transform existed: grids on the raw scores
        k = len(np.atleast_1d(data["lo"]))
        params = {"center": np.zeros(k), "scale": np.ones(k), "asinh": np.zeros(k)}
        names = [n for n in names if n not in params]
    missing = [k for k in ("classes", "prevalence", "informative", *names) if k not in data]
    if missing:
        raise InputError(f"data for a {kind!r} score model lacks the keys {missing}")
    classes = tuple(data["classes"])
    if hierarchy is not None:
        check_hierarchy(hierarchy)
        if tuple(hierarchy.classes) != classes:
            raise InputError("hierarchy.classes differ from the classes the score model was fitted on")
    params.update({k: data[k] for k in names})
    return ScoreModel(kind, classes, data["prevalence"], data["informative"], params, hierarchy)
