"""pgmpy exact inference, one object and one class at a time (the slow reference).

The network comes from :meth:`hmcpgm.LabelNetwork.to_pgmpy` on a copy of the
hierarchy whose classes are renamed ``"y0", "y1", ...`` (pgmpy's virtual
evidence only works with string node names). Each likelihood pair enters as
virtual evidence, the probability column L / (L0 + L1). A fresh
``VariableElimination`` object is built for every query, because virtual
evidence leaves helper nodes behind in the inference object (pgmpy 1.1.2), and
each class is queried on its own (one query over all classes builds the 2^K
joint). pgmpy sums in linear space: evidence whose probability is below the
float range (theta or likelihood ratios near 1e-300) comes out 0/0 and is
refused, and near that range its posteriors lose digits; the other engines work
in log space.
"""

import warnings

import numpy as np

from ..exceptions import InferenceError
from ..network import LabelNetwork, quiet_pgmpy

__all__ = ["pgmpy_mlpr"]


def _renamed(hierarchy):
    from ..hierarchy import Hierarchy

    names = [f"y{k}" for k in range(hierarchy.n_classes)]
    edges = [(names[p], names[c]) for p, c in hierarchy.edge_indices]
    return Hierarchy.from_edges(edges, classes=names), names


def pgmpy_mlpr(hierarchy, theta, likelihoods, version):
    """(M, K) mLPRs from pgmpy's VariableElimination; ``likelihoods`` is checked (M, K, 2)."""
    renamed, names = _renamed(hierarchy)
    with quiet_pgmpy():
        model = LabelNetwork(renamed, theta).to_pgmpy()
        return _query_all(model, names, hierarchy, likelihoods, version)


def _query_all(model, names, hierarchy, likelihoods, version):
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination

    m, k = likelihoods.shape[:2]
    # probability columns; scale by the larger entry first so 1e300 cannot overflow
    scaled = likelihoods / likelihoods.max(axis=2, keepdims=True)
    columns = scaled / scaled.sum(axis=2, keepdims=True)

    def query(j, evidence):
        ve = [TabularCPD(names[i], 2, [[columns[i_m, i, 0]], [columns[i_m, i, 1]]]) for i_m, i in evidence]
        with warnings.catch_warnings():  # 0/0 for impossible evidence: reported below
            warnings.simplefilter("ignore", RuntimeWarning)
            factor = VariableElimination(model).query(
                [names[j]], virtual_evidence=ve or None, show_progress=False
            )
        return float(factor.values[1])

    out = np.empty((m, k))
    if version == "indpt":
        prior = np.array([query(j, []) for j in range(k)])
        with np.errstate(invalid="ignore", divide="ignore"):
            num = prior * columns[:, :, 1]
            out = num / (num + (1 - prior) * columns[:, :, 0])
    else:
        for i_m in range(m):
            for j in range(k):
                if version == "full":
                    keep = range(k)
                else:
                    keep = [j, *hierarchy.parent_indices[j], *hierarchy.child_indices[j]]
                out[i_m, j] = query(j, [(i_m, i) for i in keep])
    bad = np.isnan(out)
    if bad.any():
        objects = np.flatnonzero(bad.any(axis=1))
        raise InferenceError(
            f"pgmpy's answer for {len(objects)} object(s) (first: object {objects[0]}) is 0/0: their evidence "
            "has probability zero under the network, or one below the float range of pgmpy's linear-space "
            "sums (theta or likelihood ratios near 1e-300); engine='enumerate' (log space) tells which"
        )
    return out
