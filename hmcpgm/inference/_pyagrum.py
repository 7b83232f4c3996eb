"""pyAgrum's exact inference (LazyPropagation) as an independent reference.

pyAgrum (``pip install "hmcpgm[pyagrum]"``) is a C++ library with its own
triangulation and junction tree: agreeing with it checks hmcpgm's engines against
code that shares nothing with them. The network is built from the hierarchy and
``theta`` (a root is positive with probability ``theta_k``; a non-root with
probability ``theta_k`` when all its parents are positive, else never); each
likelihood pair enters as soft evidence, one object at a time. Its tables are
dense (2^width entries per clique), so it fits GO sub-DAGs but not the whole GO:
:func:`pyagrum_fit` reads the size of its junction tree before any table is made.
"""

import warnings

import numpy as np

from ..exceptions import InferenceError, MissingDependencyError

__all__ = ["pyagrum_mlpr", "pyagrum_fit"]


def _import():
    try:
        with warnings.catch_warnings():  # its SWIG types warn that they have no __module__ (DeprecationWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            import pyagrum
    except ImportError:
        raise MissingDependencyError(
            "the pyAgrum reference needs pyAgrum: pip install \"hmcpgm[pyagrum]\" (or pip install pyagrum)"
        ) from None
    return pyagrum


def _network(hierarchy, theta):
    gum = _import()
    bn = gum.BayesNet("hmcpgm")
    ids = [bn.add(gum.LabelizedVariable(f"y{k}", f"y{k}", 2)) for k in range(hierarchy.n_classes)]
    for p, c in hierarchy.edge_indices:
        bn.addArc(ids[int(p)], ids[int(c)])
    for k in range(hierarchy.n_classes):
        n_par = len(hierarchy.parent_indices[k])
        th = float(theta[k])
        # the class varies fastest; the last block is "every parent positive"
        bn.cpt(ids[k]).fillWith([1.0, 0.0] * (2**n_par - 1) + [1.0 - th, th])
    return gum, bn


def pyagrum_fit(hierarchy, budget_bytes):
    """(fits, note): whether pyAgrum's dense junction tree fits ``budget_bytes``, and its size.

    The junction tree pyAgrum would use is built (no table is allocated) and its
    cliques are counted at 8 bytes per entry, three tables per clique (potential,
    messages, belief).
    """
    theta = np.full(hierarchy.n_classes, 0.5)
    gum, bn = _network(hierarchy, theta)
    jt = gum.LazyPropagation(bn).junctionTree()
    sizes = [len(jt.clique(c)) for c in jt.nodes()]
    width = max(sizes, default=0)
    need = 3 * 8 * sum(2.0**s for s in sizes)
    note = f"pyAgrum's junction tree: largest clique {width} classes, about {need:.3g} bytes of tables"
    if need > budget_bytes:
        return False, note + f" > budget_bytes={budget_bytes:,}"
    return True, note


def pyagrum_mlpr(hierarchy, theta, likelihoods):
    """(M, K) posteriors P(Y_k = 1 | evidence) from pyAgrum's LazyPropagation.

    ``likelihoods`` is a checked (M, K, 2) array. Evidence of probability zero, or
    below ``MIN_EVIDENCE_PROBABILITY`` (where pyAgrum's linear-space tables lose
    it), raises :class:`~hmcpgm.exceptions.InferenceError`.
    """
    gum, bn = _network(hierarchy, np.asarray(theta, dtype=float))
    m, k = likelihoods.shape[:2]
    scaled = likelihoods / likelihoods.max(axis=2, keepdims=True)
    ie = gum.LazyPropagation(bn)
    names = [f"y{j}" for j in range(k)]
    out = np.empty((m, k))
    for i in range(m):
        ie.eraseAllEvidence()
        for j in range(k):
            ie.addEvidence(names[j], scaled[i, j].tolist())
        try:
            ie.makeInference()
            p_evidence = ie.evidenceProbability()
            for j in range(k):
                out[i, j] = ie.posterior(names[j])[1]
        except gum.GumException as exc:  # e.g. evidence of probability zero
            raise InferenceError(f"pyAgrum refused object {i}: {exc} ({_LINEAR})") from None
        if not p_evidence >= MIN_EVIDENCE_PROBABILITY:  # its posteriors are then garbage (off by up to 1)
            raise InferenceError(f"pyAgrum gives no answer for object {i}: the probability of its evidence came out "
                                 f"{p_evidence:.3g} ({_LINEAR})")
    return out


# Every value pyAgrum's tables hold is at most 1 (probabilities times likelihoods scaled to at most 1), so
# what underflows is lost in absolute terms, below 2.2e-308 (the smallest normal float) per table entry:
# with the evidence at least this likely, the posteriors it loses are far below 1e-12 for any junction
# tree that fits in memory.
MIN_EVIDENCE_PROBABILITY = 1e-280
_LINEAR = ("its tables are in linear space: the evidence has probability zero or below the float range; "
           "hmcpgm's exact engines work in log space")
