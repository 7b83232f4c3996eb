"""The hierarchy and its CPD parameters as a pgmpy Bayesian network (SPEC section 2).

:func:`to_pgmpy` builds the label network that every mLPR engine answers
questions about: one binary node per class, named by the class name, with

* roots: P(Y_k = 1) = theta_k;
* non-roots: P(Y_k = 1 | all parents = 1) = theta_k, P(Y_k = 1 | any parent = 0) = 0.

Score evidence does not need score nodes: it enters pgmpy queries as virtual
evidence, one column [L_k(0), L_k(1)] / (L_k(0) + L_k(1)) per class. For
teaching and drawing, :func:`augmented_network` adds the score nodes S_k.

pgmpy is imported inside the functions (``import pgmpy`` takes seconds).

Node names are the class names unchanged. pgmpy 1.1.2's virtual evidence adds
helper nodes named ``"__" + name``: that fails for non-string names (ints) and
may clash with class names that start with two underscores. The pgmpy
reference engine therefore queries a copy of the network whose nodes are
renamed ``"y0", "y1", ...`` (column order).
"""

import logging
import warnings

import numpy as np

from ._validation import check_hierarchy, theta_vector
from .exceptions import InputError

__all__ = ["to_pgmpy", "augmented_network", "prior_marginals", "label_cpd_values"]


def _quiet_pgmpy():
    """Import pgmpy with its logger at ERROR and its own import-time deprecation notices silenced."""
    logging.getLogger("pgmpy").setLevel(logging.ERROR)
    with warnings.catch_warnings():  # pgmpy warns about its own modules while importing them
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        import pgmpy.factors.discrete  # noqa: F401
        import pgmpy.inference  # noqa: F401
        import pgmpy.models  # noqa: F401


def label_cpd_values(n_parents, theta_k):
    """The (2, 2**n_parents) table of a label node, in pgmpy's column order.

    pgmpy varies the LAST evidence variable fastest, so with binary parents only
    the last column (every parent = 1) allows Y = 1.

    Examples
    --------
    >>> label_cpd_values(2, 0.3)
    array([[1. , 1. , 1. , 0.7],
           [0. , 0. , 0. , 0.3]])
    """
    values = np.zeros((2, 2**n_parents))
    values[0] = 1.0
    values[0, -1] = 1.0 - theta_k
    values[1, -1] = theta_k
    return values


def to_pgmpy(hierarchy, theta):
    """The label network as a pgmpy ``DiscreteBayesianNetwork``.

    Parameters
    ----------
    hierarchy : Hierarchy
    theta : array-like of shape (K,)
        P(Y_k = 1 | all parents of k are 1), or P(Y_k = 1) for a root.

    Returns
    -------
    pgmpy.models.DiscreteBayesianNetwork
        One node per class (named by the class name, states 0 and 1) with a
        ``TabularCPD``; the model passes ``check_model()``.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    >>> bn = to_pgmpy(h, [0.5, 0.2, 0.9])
    >>> sorted(bn.nodes)
    ['a', 'b', 'c']
    >>> bn.get_cpds("b").values.tolist()
    [[1.0, 0.8], [0.0, 0.2]]
    """
    hierarchy = check_hierarchy(hierarchy)
    theta = theta_vector(theta, hierarchy)
    _quiet_pgmpy()
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork()
    model.add_nodes_from(hierarchy.classes)
    model.add_edges_from(hierarchy.edges)
    cpds = []
    for k, name in enumerate(hierarchy.classes):
        parents = list(hierarchy.parents(name))
        cpds.append(
            TabularCPD(
                name,
                2,
                label_cpd_values(len(parents), theta[k]),
                evidence=parents or None,
                evidence_card=[2] * len(parents) or None,
            )
        )
    model.add_cpds(*cpds)
    model.check_model()
    return model


def augmented_network(hierarchy, theta, score_given_label=None, *, prefix=("Y_", "S_")):
    """The augmented graph: label nodes Y_k plus one score node S_k under each.

    Scores are discretised: ``S_k`` takes ``B`` states (score bins) with
    ``P(S_k = b | Y_k = y) = score_given_label[k, y, b]``. Observing ``S_k = b``
    is then the same as virtual evidence ``L_k(y) = score_given_label[k, y, b]``.

    Parameters
    ----------
    hierarchy : Hierarchy
    theta : array-like of shape (K,)
    score_given_label : array-like of shape (K, 2, B), optional
        Rows ``[k, y]`` are distributions over the ``B`` bins. If omitted the
        network is symbolic: score nodes and edges are there (for drawing) but
        carry no CPD, so it cannot be queried.
    prefix : (str, str)
        Node names are ``prefix[0] + str(class)`` and ``prefix[1] + str(class)``.

    Returns
    -------
    pgmpy.models.DiscreteBayesianNetwork

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_edges([("a", "b")])
    >>> bn = augmented_network(h, [0.5, 0.5])
    >>> sorted(bn.edges)
    [('Y_a', 'S_a'), ('Y_a', 'Y_b'), ('Y_b', 'S_b')]
    """
    hierarchy = check_hierarchy(hierarchy)
    theta = theta_vector(theta, hierarchy)
    _quiet_pgmpy()
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    y_name = {c: f"{prefix[0]}{c}" for c in hierarchy.classes}
    s_name = {c: f"{prefix[1]}{c}" for c in hierarchy.classes}
    if len(set(y_name.values()) | set(s_name.values())) != 2 * hierarchy.n_classes:
        raise InputError(f"prefix {prefix!r} gives clashing node names for these classes")
    model = DiscreteBayesianNetwork()
    model.add_nodes_from(list(y_name.values()) + list(s_name.values()))
    model.add_edges_from((y_name[p], y_name[c]) for p, c in hierarchy.edges)
    model.add_edges_from((y_name[c], s_name[c]) for c in hierarchy.classes)
    if score_given_label is None:
        return model
    table = np.asarray(score_given_label, dtype=float)
    if table.ndim != 3 or table.shape[:2] != (hierarchy.n_classes, 2) or table.shape[2] < 1:
        raise InputError(
            f"score_given_label must have shape ({hierarchy.n_classes}, 2, n_bins), "
            f"got shape {table.shape}"
        )
    if not np.all(np.isfinite(table)) or table.min() < 0 or not np.allclose(table.sum(axis=2), 1):
        raise InputError(
            "score_given_label must hold probabilities: finite, non-negative, each [k, y] "
            "row summing to 1 over the bins"
        )
    cpds = []
    for k, c in enumerate(hierarchy.classes):
        parents = [y_name[p] for p in hierarchy.parents(c)]
        cpds.append(
            TabularCPD(
                y_name[c], 2, label_cpd_values(len(parents), theta[k]),
                evidence=parents or None, evidence_card=[2] * len(parents) or None,
            )
        )
        cpds.append(TabularCPD(s_name[c], table.shape[2], table[k].T, evidence=[y_name[c]], evidence_card=[2]))
    model.add_cpds(*cpds)
    model.check_model()
    return model


def prior_marginals(hierarchy, theta):
    """P(Y_k = 1) under the network, with no evidence, shape (K,).

    ``Y_k = 1`` needs every ancestor positive, so this is the product of
    ``theta`` over ``k`` and all its ancestors (trees and DAGs alike).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, None, [0, 1]])
    >>> prior_marginals(h, [0.5, 0.4, 0.5]).round(12).tolist()
    [0.5, 0.4, 0.1]
    """
    from .inference._common import log_prior_marginals

    hierarchy = check_hierarchy(hierarchy)
    theta = theta_vector(theta, hierarchy)
    return np.exp(log_prior_marginals(hierarchy, theta))
