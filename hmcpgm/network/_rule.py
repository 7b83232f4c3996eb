"""The CPD rule of a label node, defined once, and what follows from it: log priors and CPD tables."""

import numpy as np

__all__ = ["label_cpd_table", "log_cpd", "log_prior"]


def log_cpd(label, parents_positive, theta):
    """log P(Y_k = label | parents) of a label node: the single definition of the rule.

    ``P(Y_k = 1) = theta_k`` when every parent is positive (always, for a root) and
    0 otherwise. The arguments broadcast against each other.

    Parameters
    ----------
    label : array-like of 0/1 or bool
        The value of the label node.
    parents_positive : array-like of bool
        Whether every parent is positive (True for a root).
    theta : float or array-like
        ``P(Y_k = 1 | all parents positive)``.

    Returns
    -------
    ndarray of float
        The log probabilities (-inf where the probability is 0).

    Examples
    --------
    >>> log_cpd(np.array([1, 0, 1, 0]), np.array([True, True, False, False]), 0.25).round(4)
    array([-1.3863, -0.2877,    -inf,  0.    ])
    """
    p1 = np.where(parents_positive, theta, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.where(np.asarray(label, dtype=bool), p1, 1.0 - p1))


def log_prior(hierarchy, theta, configurations):
    """log P(Y = y) of label configurations under the network.

    Parameters
    ----------
    hierarchy : Hierarchy
        Gives the parents of each class.
    theta : ndarray of shape (K,) or (K, G)
        One parameter vector, or G of them (column g is network g).
    configurations : bool ndarray of shape (C, K)
        Label configurations, columns in ``hierarchy.classes`` order.

    Returns
    -------
    ndarray of shape (C,), or (G, C) for G parameter vectors
        The log prior probability of each configuration (-inf for an impossible one).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])
    >>> y = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=bool)
    >>> np.exp(log_prior(h, np.array([0.5, 0.4]), y)).round(2)
    array([0.5, 0.3, 0.2, 0. ])
    """
    theta = np.asarray(theta, dtype=float)
    configs = np.asarray(configurations, dtype=bool)
    grouped = theta.ndim == 2
    out = np.zeros((theta.shape[1], len(configs)) if grouped else len(configs))
    for k, parents in enumerate(hierarchy.parent_indices):
        on = configs[:, parents].all(axis=1)
        out += log_cpd(configs[:, k], on, theta[k][:, None] if grouped else theta[k])
    return out


def label_cpd_table(n_parents, theta_k):
    """The (2, 2**n_parents) table of a label node in pgmpy's column order (last parent fastest)."""
    parents_on = np.zeros(2**n_parents, dtype=bool)
    parents_on[-1] = True  # only the last column has every parent = 1
    return np.exp(log_cpd(np.array([[0], [1]]), parents_on[None, :], theta_k))
