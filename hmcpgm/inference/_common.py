"""Pieces shared by the mLPR engines: log likelihoods, prior marginals, errors.

Internally every engine works on per-class arrays of shape ``(K, M)`` (class
first, so that gathering a set of classes copies contiguous rows) holding
*log* likelihoods normalised per pair, ``log L_k(y) - max_y log L_k(y)``: a zero
likelihood (hard evidence) is ``-inf``, and neither 1e-300 nor 1e300 leaves the
floating-point range.
"""

import numpy as np

from ..exceptions import InferenceError

__all__ = ["log_likelihood_pairs", "impossible_evidence", "posterior_from_logs"]


def log_likelihood_pairs(likelihoods):
    """Two ``(K, M)`` arrays: log L_k(0) and log L_k(1), normalised so the larger is 0.

    ``likelihoods`` is an already checked ``(M, K, 2)`` array (finite, non-negative,
    no pair [0, 0]).
    """
    with np.errstate(divide="ignore"):
        logs = np.log(likelihoods)
    top = logs.max(axis=2, keepdims=True)
    logs -= top
    return np.ascontiguousarray(logs[:, :, 0].T), np.ascontiguousarray(logs[:, :, 1].T)


def impossible_evidence(hierarchy, objects, what="likelihoods"):
    """The error for evidence that has probability zero under the network."""
    objects = np.asarray(objects).ravel()
    first = int(objects[0])
    return InferenceError(
        f"{what} of {len(objects)} object(s) (first: object {first}) have probability "
        "zero under the network: the hard evidence (likelihood pairs with a zero) "
        "rules out every labelling that respects the hierarchy and theta, e.g. a class "
        "forced positive while its parent is forced negative"
    )


def posterior_from_logs(a0, a1):
    """P(Y = 1) from unnormalised log weights of Y = 0 and Y = 1 (both -inf is NaN)."""
    top = np.maximum(a0, a1)
    with np.errstate(invalid="ignore"):
        e0 = np.exp(a0 - top)
        e1 = np.exp(a1 - top)
        return e1 / (e0 + e1)
