"""Brute force: sum over all 2^K label configurations (the test reference for tiny K)."""

import numpy as np

from ..exceptions import TooLargeError
from ..network import log_prior
from ._common import impossible_evidence

__all__ = ["enumerate_full", "enumerate_prior", "MAX_ENUMERATE"]

MAX_ENUMERATE = 20


def _configurations(hierarchy, theta, max_classes):
    k = hierarchy.n_classes
    if k > max_classes:
        raise TooLargeError(
            f"engine='enumerate' sums over all 2^K label configurations; refused for a "
            f"hierarchy of {k} classes (the limit is max_classes={max_classes}). Use "
            + ("engine='tree'" if hierarchy.is_forest else "engine='sparse' or 'junction'")
        )
    configs = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(bool)  # (C, K)
    return configs, log_prior(hierarchy, theta, configs)


def enumerate_prior(hierarchy, theta, max_classes=MAX_ENUMERATE):
    """log P(Y_k = 0) and log P(Y_k = 1) by summing the joint over all configurations: two (K,) arrays.

    Each is log-summed on its own, so a prior of 1 (theta 1 all the way up) keeps
    log P(Y_k = 0) = -inf, one within 1e-16 of 1 keeps its distance, and one below
    the float range (theta 1e-300 twice) stays finite, where a linear-space sum
    would round or underflow.
    """
    from scipy.special import logsumexp

    configs, logp = _configurations(hierarchy, theta, max_classes)
    on = np.where(configs, logp[:, None], -np.inf)  # (C, K): the configurations with y_k = 1
    off = np.where(configs, -np.inf, logp[:, None])
    with np.errstate(divide="ignore"):
        return logsumexp(off, axis=0), logsumexp(on, axis=0)


def enumerate_full(hierarchy, theta, l0, l1, max_classes=MAX_ENUMERATE):
    """P(Y_k = 1 | evidence) by brute force; ``l0, l1`` are (K, M) log likelihoods."""
    configs, logp = _configurations(hierarchy, theta, max_classes)
    k, m = l0.shape
    out = np.empty((k, m))
    chunk = max(1, 2**22 // (len(configs) * k))
    cols = np.arange(k)
    bad = np.zeros(m, dtype=bool)  # objects whose evidence every configuration rules out
    for start in range(0, m, chunk):
        sl = slice(start, start + chunk)
        logl = np.stack([l0[:, sl].T, l1[:, sl].T], axis=2)  # (m, K, 2)
        # log evidence of each configuration: sum_k log L_k(y_k)
        ev = logl[:, cols, configs.astype(np.intp)].sum(axis=2)  # (m, C)
        w = ev + logp
        top = w.max(axis=1, keepdims=True)
        bad[sl] = ~np.isfinite(top[:, 0])
        top[bad[sl]] = 0.0
        p = np.exp(w - top)
        with np.errstate(invalid="ignore"):
            out[:, sl] = np.clip((p @ configs) / p.sum(axis=1, keepdims=True), 0.0, 1.0).T  # rounding: 1 + 2e-16
    if bad.any():  # counted over every chunk, as the other engines count
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
    return out
