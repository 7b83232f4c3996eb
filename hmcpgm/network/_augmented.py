"""The augmented network of teaching and drawing: label nodes Y_k plus one score node S_k under each."""

import numpy as np

from ..exceptions import InputError
from ._network import check_network
from ._pgmpy import quiet_pgmpy, tabular_cpd

__all__ = ["augmented_network"]


def augmented_network(network, score_given_label=None, *, prefix=("Y_", "S_")):
    """The augmented graph: label nodes Y_k plus one score node S_k under each.

    Scores are discretised: ``S_k`` takes ``B`` states (score bins) with
    ``P(S_k = b | Y_k = y) = score_given_label[k, y, b]``. Observing ``S_k = b``
    is then the same as virtual evidence ``L_k(y) = score_given_label[k, y, b]``.

    Parameters
    ----------
    network : LabelNetwork
        The label nodes, their edges and (with ``score_given_label``) their CPDs.
    score_given_label : array-like of shape (K, 2, B), optional
        Rows ``[k, y]`` are distributions over the ``B`` bins. If omitted the
        network is symbolic: score nodes and edges are there (for drawing) but
        carry no CPD, so it cannot be queried.
    prefix : (str, str)
        Node names are ``prefix[0] + str(class)`` and ``prefix[1] + str(class)``.

    Returns
    -------
    pgmpy.models.DiscreteBayesianNetwork
        Nodes ``Y_<class>`` and ``S_<class>`` (with the default ``prefix``);
        checked with ``check_model()`` when it has CPDs.

    Examples
    --------
    >>> from hmcpgm import Hierarchy, LabelNetwork
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
            cpds.append(tabular_cpd(TabularCPD, y_name[c], parents, network.cpd_table(c)))
            cpds.append(TabularCPD(s_name[c], table.shape[2], table[k].T, evidence=[y_name[c]], evidence_card=[2]))
        model.add_cpds(*cpds)
        model.check_model()
    return model
