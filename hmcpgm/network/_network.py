"""The label network: the hierarchy and its CPD parameters, as one frozen object (:class:`LabelNetwork`)."""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._arrays import binary_matrix, count
from .._columns import class_matrix
from .._util import preview, repeated
from .._validation import check_hierarchy, check_instance, label_matrix, theta_vector
from ..exceptions import InputError, LabelError
from ._pgmpy import quiet_pgmpy, tabular_cpd
from ._rule import label_cpd_table, log_prior

__all__ = ["LabelNetwork", "check_network", "check_pseudo_count"]


@dataclass(frozen=True, eq=False)
class LabelNetwork:
    """The hierarchy and its CPD parameters: what the mLPR engines answer for.

    Parameters
    ----------
    hierarchy : Hierarchy
        The label nodes (one per class) and their edges.
    theta : array-like of shape (K,), Series or dict
        ``P(Y_k = 1 | all parents of k are 1)``, or ``P(Y_k = 1)`` for a root,
        in ``hierarchy.classes`` order; a Series or a dict by class name (every
        class once). Stored as a read-only array copy.

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
            Fixes the classes, their column order and the parents of each.
        pseudo_count : float, default 0.5
            Non-negative additive pseudo-count.
        close_labels : bool, default False
            Close labels upward instead of raising when a positive class has a
            negative parent.

        Returns
        -------
        LabelNetwork
            The hierarchy with the estimated ``theta``.

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

        Parameters
        ----------
        model : pgmpy.models.DiscreteBayesianNetwork
            A network whose nodes are the classes and whose CPDs follow the rule.

        Returns
        -------
        LabelNetwork
            The hierarchy of the model's edges and the ``theta`` of its CPDs.

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
        from ..hierarchy import Hierarchy

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
                _refuse_score_nodes(model, name)
                raise InputError(
                    f"node {name!r} must be binary with states [0, 1]; its CPD has states {list(states)}"
                )
            evidence = list(cpd.get_evidence())[::-1] if hasattr(cpd, "get_evidence") else []
            if sorted(map(str, evidence)) != sorted(map(str, hierarchy.parents(name))):
                raise InputError(
                    f"the CPD of node {name!r} is conditioned on {evidence}, not on its parents "
                    f"{list(hierarchy.parents(name))}"
                )
            for parent, card in zip(cpd.variables[1:], cpd.cardinality[1:]):
                parent_states = (cpd.state_names or {}).get(parent, list(range(int(card))))
                if int(card) != 2 or list(parent_states) not in ([0, 1], ["0", "1"]):
                    raise InputError(  # another order (1, 0) would read theta from the wrong column
                        f"the CPD of node {name!r} reads its parent {parent!r} with states {list(parent_states)}; "
                        "a parent's states must be [0, 1]"
                    )
            table = np.asarray(cpd.get_values(), dtype=float)
            theta[k] = table[1, -1]
            expected = label_cpd_table(len(evidence), theta[k])
            if table.shape != expected.shape:
                raise InputError(f"the CPD of node {name!r} has a table of shape {table.shape}; its "
                                 f"{len(evidence)} binary parents need {expected.shape}")
            if not np.allclose(table, expected, atol=1e-12):
                bad = int(np.flatnonzero(~np.isclose(table, expected, atol=1e-12).all(axis=0))[0])
                _refuse_score_nodes(model, name)
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

        Parameters
        ----------
        name : hashable
            A class of the hierarchy.

        Returns
        -------
        ndarray of shape (2, 2**n_parents)
            Row ``y`` holds ``P(Y = y | parents)`` for each parent configuration.
        """
        k = self.hierarchy.index(name)
        return label_cpd_table(len(self.hierarchy.parent_indices[k]), self.theta[k])

    def log_prior(self, configurations):
        """log P(Y = y) for each row of a (C, K) 0/1 configuration matrix.

        Parameters
        ----------
        configurations : array-like or DataFrame of shape (C, K)
            0/1 (or bool) label configurations, columns in ``classes`` order (a
            DataFrame's by name); they need not respect the hierarchy.

        Returns
        -------
        ndarray of shape (C,)
            The log prior probability of each configuration (-inf for an impossible one).

        Raises
        ------
        InputError, LabelError
            Another number of columns than classes, or values other than 0 and 1.
        """
        y = binary_matrix(class_matrix(configurations, self.hierarchy, "configurations"), "configurations",
                          self.hierarchy)
        return log_prior(self.hierarchy, self.theta, y.astype(bool))

    @cached_property
    def log_prior_marginals(self):
        """ndarray (K,): log P(Y_k = 1) with no evidence.

        ``Y_k = 1`` forces every ancestor to 1, so P(Y_k = 1) is the product of
        ``theta`` over ``k`` and all its ancestors (trees and DAGs alike).
        """
        with np.errstate(divide="ignore"):
            log_theta = np.log(self.theta)
        # the sums over each class's ancestors, as (class, ancestor) pairs: numpy's matrix product of a
        # bool (K, K) matrix takes a slow generic path (about 0.5 s on the Gene Ontology, per network)
        desc, anc = self.hierarchy.ancestor_pairs
        finite = np.where(np.isfinite(log_theta), log_theta, 0.0)
        out = log_theta + np.bincount(desc, weights=finite[anc], minlength=len(log_theta))
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

        Parameters
        ----------
        n : int
            The number of samples (>= 0).
        rng : int, numpy.random.Generator or None
            Seed or generator (``numpy.random.default_rng(rng)``).

        Returns
        -------
        ndarray of int8, shape (n, K)
            One 0/1 label vector per row, columns in ``classes`` order.

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

    def to_pgmpy(self, names=None):
        """The label network as a pgmpy ``DiscreteBayesianNetwork``.

        One node per class (states 0 and 1) with a ``TabularCPD``; the model
        passes ``check_model()``.

        Parameters
        ----------
        names : callable, optional
            The node name of a class, e.g. ``str``; default: the class name
            itself. pgmpy's virtual evidence (``query(..., virtual_evidence=...)``),
            the way scores enter a query, needs string node names: pass ``str``
            for a hierarchy of integer classes (``Hierarchy.from_parents``, the
            paper's data).

        Returns
        -------
        pgmpy.models.DiscreteBayesianNetwork
            A new model; :meth:`from_pgmpy` converts it back (with the node names
            as class names).

        Raises
        ------
        InputError
            When ``names`` gives two classes the same node name.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_edges([("a", "b"), ("a", "c")])
        >>> net = LabelNetwork(h, [0.5, 0.2, 0.9])
        >>> bn = net.to_pgmpy()
        >>> sorted(bn.nodes)
        ['a', 'b', 'c']
        >>> bn.get_cpds("b").values.tolist()
        [[1.0, 0.8], [0.0, 0.2]]

        A query with pgmpy, the scores' likelihoods ``[L(0), L(1)]`` entering as
        virtual evidence (one normalised column per class), gives the mLPRs:

        >>> import numpy as np
        >>> from pgmpy.factors.discrete import TabularCPD
        >>> from pgmpy.inference import VariableElimination
        >>> from hmcpgm import mlpr_from_likelihoods
        >>> L = np.array([[1.0, 3.0], [2.0, 1.0], [1.0, 4.0]])  # one object's evidence, class by class
        >>> evidence = [TabularCPD(c, 2, (pair / pair.sum())[:, None]) for c, pair in zip(h.classes, L)]
        >>> answer = VariableElimination(bn).query(["c"], virtual_evidence=evidence, show_progress=False)
        >>> bool(np.isclose(answer.values[1], mlpr_from_likelihoods(net, L[None])[0, 2]))
        True
        """
        h = self.hierarchy
        nodes = list(h.classes) if names is None else [names(c) for c in h.classes]
        if len(set(nodes)) != len(nodes):
            raise InputError(f"names gives two classes the same node name: {preview(repeated(nodes))}")
        node = dict(zip(h.classes, nodes))
        with quiet_pgmpy():
            from pgmpy.factors.discrete import TabularCPD
            from pgmpy.models import DiscreteBayesianNetwork

            model = DiscreteBayesianNetwork()
            model.add_nodes_from(nodes)
            model.add_edges_from((node[a], node[b]) for a, b in h.edges)
            model.add_cpds(*(tabular_cpd(TabularCPD, node[name], [node[p] for p in h.parents(name)],
                                         self.cpd_table(name)) for name in h.classes))
            model.check_model()
        return model


def _refuse_score_nodes(model, name):
    """A node that fails the family, named ``S_k`` under ``Y_k`` as :func:`augmented_network` makes score nodes:
    say so, and how to read the label network out of the model."""
    scores = [n for n in model.nodes if isinstance(n, str) and n.startswith("S_")
              and list(model.get_parents(n)) == ["Y_" + n[2:]]]
    if name in scores:
        raise InputError(f"model holds score nodes S_k under label nodes Y_k ({preview(scores)}), as "
                         "augmented_network makes them; from_pgmpy reads label nodes only: remove the score nodes "
                         "first (model.remove_nodes_from(...)), or keep the network it was made from")


def check_network(network, name="network"):
    """``network`` if it is a :class:`LabelNetwork`, else a TypeError saying how to make one.

    Parameters
    ----------
    network : object
        The value to check.
    name : str
        What the value is called in the message.

    Returns
    -------
    LabelNetwork
        ``network`` itself.
    """
    how = "LabelNetwork(hierarchy, theta) or LabelNetwork.from_labels(labels, hierarchy)"
    if type(network).__module__.startswith("pgmpy"):  # e.g. what to_pgmpy gave
        how += "; a pgmpy model converts with LabelNetwork.from_pgmpy(model)"
    return check_instance(network, LabelNetwork, name, how)


def check_pseudo_count(pseudo_count):
    """``pseudo_count`` as a float >= 0, or a one-line InputError.

    Parameters
    ----------
    pseudo_count : float
        The value to check (a bool is refused).

    Returns
    -------
    float
        ``pseudo_count``, finite and >= 0.
    """
    try:
        c = float(pseudo_count)
    except (TypeError, ValueError):
        c = np.nan
    if isinstance(pseudo_count, bool) or not np.isfinite(c) or c < 0:
        raise InputError(f"pseudo_count must be a finite number >= 0, got {pseudo_count!r}")
    return c


