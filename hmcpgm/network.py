"""The label network: the hierarchy and its CPD parameters, as one frozen object.

A :class:`LabelNetwork` is the Bayesian network every mLPR engine answers
questions about: one binary label node per class with

* roots: P(Y_k = 1) = theta_k;
* non-roots: P(Y_k = 1 | all parents = 1) = theta_k, P(Y_k = 1 | any parent = 0) = 0.

This module holds the only definition of that rule (:func:`log_cpd`) and everything
derived from it: the prior probability of label configurations, pgmpy's CPD tables,
prior marginals and sampling. :meth:`LabelNetwork.to_pgmpy` and
:meth:`LabelNetwork.from_pgmpy` convert both ways, so the pgmpy network a user
inspects or edits is the one the batched engines answer for.

Score evidence does not need score nodes: it enters pgmpy queries as virtual
evidence, one column [L_k(0), L_k(1)] / (L_k(0) + L_k(1)) per class. For
teaching and drawing, :func:`augmented_network` adds the score nodes S_k.

pgmpy is imported inside the functions (``import pgmpy`` takes seconds), within
:func:`quiet_pgmpy`, which silences its logger and import-time notices for the
duration only.
"""

import contextlib
import logging
import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._arrays import count
from ._util import preview
from ._validation import check_hierarchy, check_instance, label_matrix, theta_vector
from .exceptions import InputError, LabelError

__all__ = [
    "LabelNetwork", "augmented_network", "check_network", "check_pseudo_count", "log_cpd", "log_prior", "quiet_pgmpy",
]


# ---------------------------------------------------------------------- the CPD rule
def log_cpd(label, parents_positive, theta):
    """log P(Y_k = label | parents) of a label node: the single definition of the rule.

    ``P(Y_k = 1) = theta_k`` when every parent is positive (always, for a root) and
    0 otherwise. The arguments broadcast against each other.

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
    theta : ndarray of shape (K,) or (K, G)
        One parameter vector, or G of them (column g is network g).
    configurations : bool ndarray of shape (C, K)

    Returns
    -------
    ndarray of shape (C,), or (G, C) for G parameter vectors

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


# ---------------------------------------------------------------------- pgmpy
@contextlib.contextmanager
def quiet_pgmpy():
    """Import and use pgmpy with its logger at ERROR and its import notices silenced.

    The logger's level and the warning filters are restored on exit.
    """
    logger = logging.getLogger("pgmpy")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():  # pgmpy warns about its own modules while importing them
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            import pgmpy.factors.discrete  # noqa: F401
            import pgmpy.inference  # noqa: F401
            import pgmpy.models  # noqa: F401
        with warnings.catch_warnings():
            for category in (FutureWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", category=category, module=r"pgmpy(\.|$)")
            yield
    finally:
        logger.setLevel(level)


def _cpd_table(n_parents, theta_k):
    """The (2, 2**n_parents) table of a label node in pgmpy's column order (last parent fastest)."""
    parents_on = np.zeros(2**n_parents, dtype=bool)
    parents_on[-1] = True  # only the last column has every parent = 1
    return np.exp(log_cpd(np.array([[0], [1]]), parents_on[None, :], theta_k))


# ---------------------------------------------------------------------- the network
@dataclass(frozen=True, eq=False)
class LabelNetwork:
    """The hierarchy and its CPD parameters: what the mLPR engines answer for.

    Parameters
    ----------
    hierarchy : Hierarchy
    theta : array-like of shape (K,)
        ``P(Y_k = 1 | all parents of k are 1)``, or ``P(Y_k = 1)`` for a root,
        in ``hierarchy.classes`` order. Stored as a read-only copy.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, None, [0, 1]])
    >>> net = LabelNetwork(h, [0.5, 0.4, 0.5])
    >>> net.prior_marginals.round(12).tolist()
    [0.5, 0.4, 0.1]
    >>> net.cpd_table(2).tolist()      # pgmpy's order: the last parent varies fastest
    [[1.0, 1.0, 1.0, 0.5], [0.0, 0.0, 0.0, 0.5]]
    """

    hierarchy: object
    theta: np.ndarray

    def __post_init__(self):
        hierarchy = check_hierarchy(self.hierarchy)
        theta = theta_vector(self.theta, hierarchy).copy()
        theta.flags.writeable = False
        object.__setattr__(self, "theta", theta)

    def __repr__(self):
        return f"LabelNetwork({self.hierarchy!r})"

    # -- constructors -----------------------------------------------------
    @classmethod
    def from_labels(cls, labels, hierarchy, *, pseudo_count=0.5, close_labels=False):
        """Estimate ``theta`` from training labels.

        ``theta_k = (n1_k + c) / (n_k + 2 c)`` where ``n_k`` counts the objects
        whose parents are all positive (for a root: all objects), ``n1_k`` the
        positives among them and ``c = pseudo_count``. The default ``c = 0.5``
        (Jeffreys' prior) keeps every ``theta_k`` strictly inside ``(0, 1)`` even
        for a class with no positives; ``c = 0`` gives the paper's plain fraction.
        A class whose parents are never all positive (``n_k = 0``) gets
        ``theta_k = 1/2`` when ``c > 0`` and is an error when ``c = 0``.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            0/1 labels that respect the hierarchy (DataFrame columns named by class).
        hierarchy : Hierarchy
        pseudo_count : float, default 0.5
            Non-negative additive pseudo-count.
        close_labels : bool, default False
            Close labels upward instead of raising when a positive class has a
            negative parent.

        Returns
        -------
        LabelNetwork

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_parents([None, 0])
        >>> y = [[1, 1], [1, 0], [1, 0], [0, 0]]
        >>> LabelNetwork.from_labels(y, h, pseudo_count=0).theta
        array([0.75      , 0.33333333])
        >>> LabelNetwork.from_labels(y, h, pseudo_count=1).theta
        array([0.66666667, 0.4       ])
        """
        hierarchy = check_hierarchy(hierarchy)
        c = check_pseudo_count(pseudo_count)
        y = label_matrix(labels, hierarchy, close=close_labels).astype(bool)
        n_pos = y.sum(axis=0).astype(float)
        n_eligible = np.array(
            [np.count_nonzero(y[:, p].all(axis=1)) if len(p) else len(y) for p in hierarchy.parent_indices],
            dtype=float,
        )
        if c == 0 and np.any(n_eligible == 0):
            empty = np.flatnonzero(n_eligible == 0)
            raise LabelError(
                f"labels never have all parents positive for {len(empty)} classes "
                f"({preview(hierarchy.classes[i] for i in empty)}), so theta is 0/0 with "
                "pseudo_count=0; pass pseudo_count > 0 (theta becomes 1/2 there)"
            )
        return cls(hierarchy, (n_pos + c) / (n_eligible + 2 * c))

    @classmethod
    def from_pgmpy(cls, model):
        """The label network of a pgmpy ``DiscreteBayesianNetwork`` of the hierarchical family.

        Every node must be binary (states 0 and 1) and its CPD must follow the rule:
        P(Y = 1) may be positive only in the column where every parent is 1. The
        edges give the hierarchy (classes in the model's node order), that column
        gives theta.

        Raises
        ------
        InputError
            For a CPD outside the family, naming the node and the column.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
        >>> net = LabelNetwork(h, [0.5, 0.2, 0.9])
        >>> again = LabelNetwork.from_pgmpy(net.to_pgmpy())
        >>> again.hierarchy == h, again.theta.tolist()
        (True, [0.5, 0.2, 0.9])
        """
        from .hierarchy import Hierarchy

        with quiet_pgmpy():
            from pgmpy.models import DiscreteBayesianNetwork
        if not isinstance(model, DiscreteBayesianNetwork):
            raise InputError(f"model must be a pgmpy DiscreteBayesianNetwork, got {type(model).__name__}")
        classes = list(model.nodes)
        hierarchy = Hierarchy.from_edges(list(model.edges), classes=classes)
        theta = np.empty(len(classes))
        for k, name in enumerate(classes):
            cpd = model.get_cpds(name)
            if cpd is None:
                raise InputError(f"node {name!r} of the model has no CPD")
            states = cpd.state_names.get(name, [0, 1]) if cpd.state_names else [0, 1]
            if cpd.variable_card != 2 or list(states) not in ([0, 1], ["0", "1"]):
                raise InputError(
                    f"node {name!r} must be binary with states [0, 1]; its CPD has states {list(states)}"
                )
            evidence = list(cpd.get_evidence())[::-1] if hasattr(cpd, "get_evidence") else []
            if sorted(map(str, evidence)) != sorted(map(str, hierarchy.parents(name))):
                raise InputError(
                    f"the CPD of node {name!r} is conditioned on {evidence}, not on its parents "
                    f"{list(hierarchy.parents(name))}"
                )
            table = np.asarray(cpd.get_values(), dtype=float)
            theta[k] = table[1, -1]
            expected = _cpd_table(len(evidence), theta[k])
            if table.shape != expected.shape or not np.allclose(table, expected, atol=1e-12):
                bad = int(np.flatnonzero(~np.isclose(table, expected, atol=1e-12).all(axis=0))[0])
                raise InputError(
                    f"the CPD of node {name!r} is outside the hierarchical family: column {bad} "
                    f"(parents {evidence} not all 1) gives P({name!r} = 1) = {table[1, bad]}, "
                    "but a class can be positive only when all its parents are"
                )
        return cls(hierarchy, theta)

    # -- the network --------------------------------------------------------
    @property
    def classes(self):
        """tuple: the class names, in column order."""
        return self.hierarchy.classes

    @property
    def n_classes(self):
        """int: the number of classes K."""
        return self.hierarchy.n_classes

    def cpd_table(self, name):
        """The (2, 2**n_parents) CPD table of class ``name``, in pgmpy's column order.

        pgmpy varies the LAST evidence variable fastest, so with binary parents only
        the last column (every parent = 1) allows Y = 1.
        """
        k = self.hierarchy.index(name)
        return _cpd_table(len(self.hierarchy.parent_indices[k]), self.theta[k])

    def log_prior(self, configurations):
        """log P(Y = y) for each row of a (C, K) 0/1 configuration matrix."""
        return log_prior(self.hierarchy, self.theta, configurations)

    @cached_property
    def log_prior_marginals(self):
        """ndarray (K,): log P(Y_k = 1) with no evidence.

        ``Y_k = 1`` forces every ancestor to 1, so P(Y_k = 1) is the product of
        ``theta`` over ``k`` and all its ancestors (trees and DAGs alike).
        """
        with np.errstate(divide="ignore"):
            log_theta = np.log(self.theta)
        out = log_theta + self.hierarchy.ancestor_matrix @ np.where(np.isfinite(log_theta), log_theta, 0.0)
        zero = ~np.isfinite(log_theta)
        if zero.any():  # an ancestor with theta = 0 rules the class out
            out[(self.hierarchy.ancestor_matrix[:, zero]).any(axis=1)] = -np.inf
        out.flags.writeable = False
        return out

    @property
    def prior_marginals(self):
        """ndarray (K,): P(Y_k = 1) with no evidence."""
        return np.exp(self.log_prior_marginals)

    def sample(self, n, rng=None):
        """Draw ``n`` label vectors from the network, shape (n, K), dtype int8.

        Classes are drawn in topological order: positive with probability
        ``theta_k`` when every parent is positive, negative otherwise, so every
        sample respects the hierarchy.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_parents([None, 0, 0])
        >>> y = LabelNetwork(h, [0.5, 0.9, 0.1]).sample(10_000, rng=0)
        >>> y.mean(axis=0).round(2).tolist()
        [0.5, 0.45, 0.05]
        """
        n = count(n, "n")
        rng = np.random.default_rng(rng)
        y = np.zeros((n, self.n_classes), dtype=bool)
        u = rng.random((n, self.n_classes))
        for k in self.hierarchy.topological_order:
            parents = self.hierarchy.parent_indices[k]
            on = y[:, parents].all(axis=1)
            y[:, k] = on & (u[:, k] < self.theta[k])
        return y.astype(np.int8)

    def to_pgmpy(self):
        """The label network as a pgmpy ``DiscreteBayesianNetwork``.

        One node per class (named by the class name, states 0 and 1) with a
        ``TabularCPD``; the model passes ``check_model()``.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
        >>> bn = LabelNetwork(h, [0.5, 0.2, 0.9]).to_pgmpy()
        >>> sorted(bn.nodes)
        ['a', 'b', 'c']
        >>> bn.get_cpds("b").values.tolist()
        [[1.0, 0.8], [0.0, 0.2]]
        """
        with quiet_pgmpy():
            from pgmpy.factors.discrete import TabularCPD
            from pgmpy.models import DiscreteBayesianNetwork

            h = self.hierarchy
            model = DiscreteBayesianNetwork()
            model.add_nodes_from(h.classes)
            model.add_edges_from(h.edges)
            model.add_cpds(*(_tabular(TabularCPD, name, list(h.parents(name)), self.cpd_table(name))
                             for name in h.classes))
            model.check_model()
        return model


def _tabular(TabularCPD, name, parents, table):
    return TabularCPD(name, 2, table, evidence=parents or None, evidence_card=[2] * len(parents) or None)


def check_network(network, name="network"):
    """``network`` if it is a :class:`LabelNetwork`, else a TypeError saying how to make one."""
    return check_instance(network, LabelNetwork, name,
                          "LabelNetwork(hierarchy, theta) or LabelNetwork.from_labels(labels, hierarchy)")


def check_pseudo_count(pseudo_count):
    """``pseudo_count`` as a float >= 0, or a one-line InputError."""
    try:
        c = float(pseudo_count)
    except (TypeError, ValueError):
        c = np.nan
    if isinstance(pseudo_count, bool) or not np.isfinite(c) or c < 0:
        raise InputError(f"pseudo_count must be a finite number >= 0, got {pseudo_count!r}")
    return c


def augmented_network(network, score_given_label=None, *, prefix=("Y_", "S_")):
    """The augmented graph: label nodes Y_k plus one score node S_k under each.

    Scores are discretised: ``S_k`` takes ``B`` states (score bins) with
    ``P(S_k = b | Y_k = y) = score_given_label[k, y, b]``. Observing ``S_k = b``
    is then the same as virtual evidence ``L_k(y) = score_given_label[k, y, b]``.

    Parameters
    ----------
    network : LabelNetwork
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
    >>> bn = augmented_network(LabelNetwork(h, [0.5, 0.5]))
    >>> sorted(bn.edges)
    [('Y_a', 'S_a'), ('Y_a', 'Y_b'), ('Y_b', 'S_b')]
    """
    h = check_network(network).hierarchy
    y_name = {c: f"{prefix[0]}{c}" for c in h.classes}
    s_name = {c: f"{prefix[1]}{c}" for c in h.classes}
    if len(set(y_name.values()) | set(s_name.values())) != 2 * h.n_classes:
        raise InputError(f"prefix {prefix!r} gives clashing node names for these classes")
    if score_given_label is not None:
        table = np.asarray(score_given_label, dtype=float)
        if table.ndim != 3 or table.shape[:2] != (h.n_classes, 2) or table.shape[2] < 1:
            raise InputError(
                f"score_given_label must have shape ({h.n_classes}, 2, n_bins), got shape {table.shape}"
            )
        if not np.all(np.isfinite(table)) or table.min() < 0 or not np.allclose(table.sum(axis=2), 1):
            raise InputError(
                "score_given_label must hold probabilities: finite, non-negative, each [k, y] "
                "row summing to 1 over the bins"
            )
    with quiet_pgmpy():
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork

        model = DiscreteBayesianNetwork()
        model.add_nodes_from(list(y_name.values()) + list(s_name.values()))
        model.add_edges_from((y_name[p], y_name[c]) for p, c in h.edges)
        model.add_edges_from((y_name[c], s_name[c]) for c in h.classes)
        if score_given_label is None:
            return model
        cpds = []
        for k, c in enumerate(h.classes):
            parents = [y_name[p] for p in h.parents(c)]
            cpds.append(_tabular(TabularCPD, y_name[c], parents, network.cpd_table(c)))
            cpds.append(TabularCPD(s_name[c], table.shape[2], table[k].T, evidence=[y_name[c]], evidence_card=[2]))
        model.add_cpds(*cpds)
        model.check_model()
    return model
