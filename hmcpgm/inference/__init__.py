"""mLPR engines: posterior marginals P(Y_k = 1 | scores) of the hierarchy's network.

One public entry point, :func:`mlpr_from_likelihoods`, with interchangeable
engines that all answer the same question (SPEC sections 4 and 5):

``"tree"``
    batched exact sum-product on trees and forests (all objects at once).
``"junction"``
    batched exact junction tree for DAGs, compiled once per hierarchy.
``"loopy"``
    batched loopy belief propagation (approximate on DAGs, exact on forests);
    :func:`loopy_belief_propagation` also returns a per-object convergence report.
``"pgmpy"``
    pgmpy exact inference, one object and one class at a time (slow reference).
``"enumerate"``
    brute force over all 2^K configurations (tiny hierarchies, tests).
``"auto"``
    ``"tree"`` on forests, ``"junction"`` on DAGs.
"""

import numpy as np

from .._validation import check_hierarchy, likelihood_array, theta_vector
from ..exceptions import InferenceError
from ._common import impossible_evidence, log_likelihood_pairs, log_prior_marginals, posterior_from_logs
from ._loopy import DEFAULTS as _LOOPY_DEFAULTS
from ._loopy import LoopyReport

__all__ = ["mlpr_from_likelihoods", "loopy_belief_propagation", "LoopyReport"]

VERSIONS = ("full", "nbh", "indpt")
ENGINES = ("auto", "tree", "junction", "loopy", "pgmpy", "enumerate")
_OPTIONS = {
    "auto": {"max_clique"},
    "tree": set(),
    "junction": {"max_clique"},
    "loopy": {"damping", "tol", "max_iter", "return_report"},
    "pgmpy": set(),
    "enumerate": {"max_classes"},
}


def mlpr_from_likelihoods(hierarchy, theta, likelihoods, version="full", engine="auto", **options):
    """mLPRs: posterior probabilities P(Y_k = 1 | evidence) for every object and class.

    The network has one binary label node per class: roots are positive with
    probability ``theta_k``; a non-root is positive with probability ``theta_k``
    when all its parents are positive and never otherwise. Object ``m`` brings
    soft (virtual) evidence ``likelihoods[m, k] = [L_k(0), L_k(1)]`` on each class,
    with ``L_k(y)`` proportional to p(score_k | Y_k = y).

    Parameters
    ----------
    hierarchy : Hierarchy
    theta : array-like of shape (K,)
        The CPD parameters, probabilities in [0, 1].
    likelihoods : array-like of shape (M, K, 2)
        Non-negative, finite; only the ratio within a pair matters. A zero is hard
        evidence; a pair [0, 0] is an error.
    version : {"full", "nbh", "indpt"}
        ``"full"``: evidence from every class. ``"nbh"``: for class ``k``, evidence
        only from ``k``, its parents and its children. ``"indpt"``: evidence only
        from ``k`` itself, combined with its prior marginal P(Y_k = 1).
    engine : {"auto", "tree", "junction", "loopy", "pgmpy", "enumerate"}
        See the module docstring. ``"auto"`` is ``"tree"`` on forests and
        ``"junction"`` on DAGs.
    **options
        ``max_clique`` (junction, default 20), ``damping``, ``tol``, ``max_iter``,
        ``return_report`` (loopy), ``max_classes`` (enumerate, default 20).

    Returns
    -------
    ndarray of shape (M, K)
        With ``engine="loopy", return_report=True``: a tuple (mlpr, report).

    Raises
    ------
    InputError
        Wrong shapes or values of ``theta`` or ``likelihoods``.
    InferenceError
        Unknown ``version`` or ``engine``, an option the engine does not take, a
        forest-only engine on a DAG, a junction tree clique wider than
        ``max_clique``, or evidence with probability zero under the network.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0])          # class 1 is a child of class 0
    >>> L = np.array([[[1.0, 1.0], [1.0, 3.0]]])       # evidence only on the child
    >>> mlpr_from_likelihoods(h, [0.5, 0.5], L).round(4)  # joint weights .5, .25, .75
    array([[0.6667, 0.5   ]])
    >>> mlpr_from_likelihoods(h, [0.5, 0.5], L, version="indpt").round(4)
    array([[0.5, 0.5]])
    """
    hierarchy = check_hierarchy(hierarchy)
    theta = theta_vector(theta, hierarchy)
    likelihoods = likelihood_array(likelihoods, hierarchy)
    if version not in VERSIONS:
        raise InferenceError(f"version must be one of {VERSIONS}, got {version!r}")
    if engine not in ENGINES:
        raise InferenceError(f"engine must be one of {ENGINES}, got {engine!r}")
    unknown = set(options) - _OPTIONS[engine]
    if unknown:
        raise InferenceError(
            f"engine={engine!r} takes the options {sorted(_OPTIONS[engine]) or 'none'}; "
            f"got unknown option(s) {sorted(unknown)}"
        )
    if engine == "auto":
        engine = "tree" if hierarchy.is_forest else "junction"
        if engine == "tree":
            options.pop("max_clique", None)
    if engine == "tree" and not hierarchy.is_forest:
        raise InferenceError(
            "engine='tree' needs a tree or forest, but the hierarchy is a DAG (some class "
            "has several parents); use engine='junction' (exact) or 'loopy'"
        )
    m = likelihoods.shape[0]
    k = hierarchy.n_classes
    if m == 0:
        empty = np.zeros((0, k))
        return (empty, _empty_report(options)) if options.get("return_report") else empty
    if engine == "pgmpy":
        from ._reference import pgmpy_mlpr

        return pgmpy_mlpr(hierarchy, theta, likelihoods, version)
    l0, l1 = log_likelihood_pairs(likelihoods)
    report = None
    if version == "indpt":
        out = _indpt(hierarchy, theta, l0, l1, engine, options)
    elif version == "full":
        out, report = _full(hierarchy, theta, l0, l1, engine, options)
    else:
        out = _nbh(hierarchy, theta, l0, l1, engine, options)
    out = np.ascontiguousarray(out.T)
    if options.get("return_report"):
        return out, report
    return out


def _full(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior with all evidence, and the loopy report (or None)."""
    if engine == "tree":
        from ._tree import tree_full

        return tree_full(hierarchy, theta, l0, l1), None
    if engine == "enumerate":
        from ._enumerate import MAX_ENUMERATE, enumerate_full

        return enumerate_full(hierarchy, theta, l0, l1, options.get("max_classes", MAX_ENUMERATE)), None
    if engine == "junction":
        from ._junction import junction_full

        return junction_full(hierarchy, theta, l0, l1, options.get("max_clique", 20)), None
    from ._loopy import loopy_full

    opts = {n: options[n] for n in ("damping", "tol", "max_iter") if n in options}
    return loopy_full(hierarchy, theta, l0, l1, **opts)


def _nbh(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior of each class given evidence on itself, its parents and children."""
    if engine == "tree":
        from ._tree import tree_nbh

        return tree_nbh(hierarchy, theta, l0, l1)
    if engine == "enumerate":
        return _nbh_by_subgraphs(hierarchy, theta, l0, l1, engine, options)
    # Classes with at most one parent whose children have no other parent: closed form.
    out, local = _nbh_local(hierarchy, theta, l0, l1)
    rest = np.flatnonzero(~local)
    if len(rest):
        out[rest] = _nbh_reduced(hierarchy, theta, l0, l1, rest, engine, options)
    return out


def _nbh_by_subgraphs(hierarchy, theta, l0, l1, engine, options, classes=None):
    """nbh by definition: one engine run per class on the sub-hierarchy of its neighbourhood."""
    # With evidence only on S = {k} + parents + children, classes with no observed
    # descendant are barren and sum out: run the engine on S and its ancestors.
    classes = range(hierarchy.n_classes) if classes is None else classes
    out = np.empty((len(classes), l0.shape[1]))
    for i, k in enumerate(classes):
        s = np.concatenate(([k], hierarchy.parent_indices[k], hierarchy.child_indices[k]))
        sub = hierarchy.subgraph([hierarchy.classes[j] for j in s])
        idx = hierarchy.indices(sub.classes)
        observed = np.isin(idx, s)
        sl0 = np.where(observed[:, None], l0[idx], 0.0)
        sl1 = np.where(observed[:, None], l1[idx], 0.0)
        sub_engine = engine
        if engine == "junction" and sub.is_forest:
            sub_engine = "tree"
        res, _ = _full(sub, theta[idx], sl0, sl1, sub_engine, options)
        out[i] = res[sub.index(hierarchy.classes[k])]
    return out


def _nbh_local(hierarchy, theta, l0, l1):
    """Closed-form nbh for classes whose neighbourhood is a tree; (K, M) and a (K,) mask.

    When ``k`` has at most one parent ``p`` and each child of ``k`` has no other
    parent, the restricted network over (Y_p, Y_k, children) is the chain
    P(Y_p) P(Y_k | Y_p) prod_c P(Y_c | Y_k), with P(Y_p = 1) the prior marginal
    of ``p`` (the product of theta over ``p`` and its ancestors, DAG or not).
    """
    from ._tree import _child_messages

    n_par = np.array([len(p) for p in hierarchy.parent_indices])
    edges = np.asarray(hierarchy.edge_indices).reshape(-1, 2)
    lone_child = n_par[edges[:, 1]] == 1
    local = n_par <= 1
    local[edges[~lone_child, 0]] = False  # a child with another parent couples k to it
    s0 = np.zeros_like(l0)
    s1 = np.zeros_like(l1)
    e = edges[lone_child & local[edges[:, 0]]]
    if len(e):
        m0, m1, _, _ = _child_messages(l0[e[:, 1]], l1[e[:, 1]], theta[e[:, 1]])
        np.add.at(s0, e[:, 0], m0)
        np.add.at(s1, e[:, 0], m1)
    with np.errstate(divide="ignore"):
        log_th = np.log(theta)[:, None]
        log_1mth = np.log1p(-theta)[:, None]
    log_pi = log_prior_marginals(hierarchy, theta)[:, None]
    with np.errstate(divide="ignore"):
        log_1mpi = np.log(-np.expm1(log_pi))
    w1 = log_th + l1 + s1
    w0 = log_1mth + l0 + s0
    nr = np.flatnonzero(local & (n_par == 1))
    if len(nr):
        pp = np.array([hierarchy.parent_indices[j][0] for j in nr], dtype=np.intp)
        par1 = log_pi[pp] + l1[pp]  # parent positive
        par0 = log_1mpi[pp] + l0[pp]  # parent negative: the class is negative
        w1[nr] += par1
        w0[nr] = np.logaddexp(par1 + log_1mth[nr], par0) + l0[nr] + s0[nr]
    out = posterior_from_logs(w0, w1)
    bad = np.isnan(out[local])
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad.any(axis=0)))
    out[~local] = np.nan
    return out, local


def _nbh_reduced(hierarchy, theta, l0, l1, classes, engine, options):
    """nbh for ``classes`` by exact inference on each neighbourhood's reduced network.

    The network of S = {k} + parents + children and their ancestors is shrunk
    without changing the distribution of the observed classes: a parent that is an
    ancestor of another parent of the same class is redundant (the other parent
    being positive implies it) and is dropped; an unobserved class with a single
    child is absorbed into that child (the child takes its parents, and theta
    becomes the product of both). Networks of the same shape share one compiled
    hierarchy (and junction tree).
    """
    from ..hierarchy import Hierarchy

    anc = hierarchy.ancestor_matrix
    parents = hierarchy.parent_indices
    topo_rank = np.empty(hierarchy.n_classes, dtype=np.intp)
    topo_rank[np.asarray(hierarchy.topological_order)] = np.arange(hierarchy.n_classes)
    shapes = {}
    out = np.empty((len(classes), l0.shape[1]))
    for i, k in enumerate(classes):
        s = np.unique(np.concatenate(([k], parents[k], hierarchy.child_indices[k])))
        keep = anc[s].any(axis=0)
        keep[s] = True
        nodes = np.flatnonzero(keep)
        nodes = nodes[np.argsort(topo_rank[nodes])]
        observed = set(s.tolist())
        th = {v: float(theta[v]) for v in nodes.tolist()}
        par = {v: _irredundant(set(parents[v].tolist()), anc) for v in nodes.tolist()}
        kids = {v: set() for v in par}
        for v, ps in par.items():
            for q in ps:
                kids[q].add(v)
        for u in nodes[::-1].tolist():  # children before parents: absorptions cascade upward
            if u in observed or len(kids[u]) != 1:
                continue
            (w,) = kids[u]
            th[w] *= th[u]
            for q in par[u]:
                kids[q].discard(u)
                kids[q].add(w)
            before = (par[w] - {u}) | par[u]
            par[w] = _irredundant(before, anc)
            for q in before - par[w]:
                kids[q].discard(w)
            del par[u], kids[u], th[u]
        order = [v for v in nodes.tolist() if v in par]
        pos = {v: j for j, v in enumerate(order)}
        key = tuple(tuple(sorted(pos[q] for q in par[v])) for v in order)
        idx = np.array(order, dtype=np.intp)
        observed = np.isin(idx, s)
        shapes.setdefault(key, []).append((i, idx, observed, [th[v] for v in order], pos[k]))
    m = l0.shape[1]
    for key, members in shapes.items():
        sub = Hierarchy.from_parents([list(p) for p in key])
        if engine == "loopy" and not sub.is_forest:
            for i, idx, observed, th, row in members:
                sl0 = np.where(observed[:, None], l0[idx], 0.0)
                sl1 = np.where(observed[:, None], l1[idx], 0.0)
                res, _ = _full(sub, np.array(th), sl0, sl1, engine, options)
                out[i] = res[row]
            continue
        # every class of this shape in one exact pass: objects of class g use
        # column g of theta; small networks by enumerating their consistent
        # labellings, larger ones by the junction tree
        from ._junction import junction_full

        g = len(members)
        sl0 = np.concatenate([np.where(obs[:, None], l0[idx], 0.0) for _, idx, obs, _, _ in members], axis=1)
        sl1 = np.concatenate([np.where(obs[:, None], l1[idx], 0.0) for _, idx, obs, _, _ in members], axis=1)
        th = np.array([t for _, _, _, t, _ in members]).T  # (n, G)
        gid = np.repeat(np.arange(g), m)
        if sub.n_classes <= _NBH_ENUMERATE:
            res = _enumerate_grouped(sub, th, sl0, sl1, gid)
        else:
            wanted = sorted({row for *_, row in members})
            res = junction_full(sub, th, sl0, sl1, options.get("max_clique", 20), gid, wanted)
        for j, (i, _, _, _, row) in enumerate(members):
            out[i] = res[row, j * m:(j + 1) * m]
    bad = np.isnan(out)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad.any(axis=0)))
    return out


_NBH_ENUMERATE = 10  # reduced neighbourhood networks up to this size are enumerated


def _enumerate_grouped(sub, theta, l0, l1, gid):
    """Exact posteriors of a small network by summing over its consistent labellings.

    ``theta`` is (n, G); object ``j`` (a column of ``l0, l1``) uses column
    ``gid[j]``. Only labellings whose positive set is closed under parents have
    non-zero prior, so only those are listed. Impossible evidence gives NaN.
    """
    n = sub.n_classes
    configs = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
    for j in range(n):
        ps = sub.parent_indices[j]
        if len(ps):
            configs = configs[~configs[:, j] | configs[:, ps].all(axis=1)]
    with np.errstate(divide="ignore"):
        log_prior = np.zeros((theta.shape[1], len(configs)))
        for j in range(n):
            on = configs[:, sub.parent_indices[j]].all(axis=1)
            p1 = np.where(on[None, :], theta[j][:, None], 0.0)
            log_prior += np.log(np.where(configs[None, :, j], p1, 1.0 - p1))
    out = np.empty_like(l0)
    m = l0.shape[1]
    cols = np.arange(n)
    idx = configs.astype(np.intp)
    cf = configs.astype(float)
    chunk = max(1, 2**22 // (len(configs) * n))
    for start in range(0, m, chunk):
        sl = slice(start, start + chunk)
        logl = np.stack([l0[:, sl].T, l1[:, sl].T], axis=2)  # (mm, n, 2)
        w = logl[:, cols, idx].sum(axis=2) + log_prior[gid[sl]]  # (mm, C)
        top = w.max(axis=1, keepdims=True)
        ok = np.isfinite(top[:, 0])
        top[~ok] = 0.0
        p = np.exp(w - top)
        with np.errstate(invalid="ignore"):
            out[:, sl] = ((p @ cf) / p.sum(axis=1, keepdims=True)).T
        out[:, start + np.flatnonzero(~ok)] = np.nan
    return out


def _irredundant(ps, anc):
    """Drop from a parent set every class that is an ancestor of another member."""
    if len(ps) < 2:
        return set(ps)
    return {q for q in ps if not any(anc[r, q] for r in ps if r != q)}


def _indpt(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior of each class from its own evidence and its prior marginal."""
    if engine == "enumerate":
        from ._enumerate import MAX_ENUMERATE, enumerate_prior

        prior = np.clip(enumerate_prior(hierarchy, theta, options.get("max_classes", MAX_ENUMERATE)), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            log_pi, log_1mpi = np.log(prior), np.log1p(-prior)
    else:
        log_pi = log_prior_marginals(hierarchy, theta)
        with np.errstate(divide="ignore"):
            log_1mpi = np.log(-np.expm1(log_pi))
    out = posterior_from_logs(log_1mpi[:, None] + l0, log_pi[:, None] + l1)
    bad = np.isnan(out)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad.any(axis=0)))
    return out


def _empty_report(options):
    from ._loopy import LoopyReport

    return LoopyReport.empty(**{n: options[n] for n in ("damping", "tol", "max_iter") if n in options})


def loopy_belief_propagation(hierarchy, theta, likelihoods, *, damping=_LOOPY_DEFAULTS["damping"],
                             tol=_LOOPY_DEFAULTS["tol"], max_iter=_LOOPY_DEFAULTS["max_iter"]):
    """Full-evidence mLPRs by batched loopy belief propagation, with a convergence report.

    Exact on forests and on polytrees (DAGs whose undirected skeleton has no
    loop); an approximation on other DAGs. One iteration is an upward sweep
    (children before parents) then a downward sweep; each object stops when it
    has converged. On cellcycle_GO (4,125 classes) every object of
    ``bench/inference.py`` converged without damping, in a median of 9 iterations. Emits :class:`ConvergenceWarning` when some
    objects do not converge within ``max_iter``.

    Parameters
    ----------
    hierarchy, theta, likelihoods
        As in :func:`mlpr_from_likelihoods`.
    damping : float in [0, 1), default 0
        Weight of the previous factor message (log-odds) in each update. The
        sequential schedule rarely needs it; it slows convergence.
    tol : float, default 1e-6
        An object has converged when no message changed by more than ``tol``
        (in log-odds) in one iteration.
    max_iter : int, default 200

    Returns
    -------
    mlpr : ndarray of shape (M, K)
    report : LoopyReport
        Per object: ``converged``, ``n_iter``, ``residual``.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, None, [0, 1]])
    >>> L = np.array([[[1.0, 2.0], [1.0, 1.0], [1.0, 4.0]]])
    >>> mlpr, report = loopy_belief_propagation(h, [0.5, 0.5, 0.5], L)
    >>> np.allclose(mlpr, mlpr_from_likelihoods(h, [0.5, 0.5, 0.5], L, engine="enumerate"))
    True
    >>> bool(report.converged[0])
    True
    """
    return mlpr_from_likelihoods(
        hierarchy, theta, likelihoods, engine="loopy", damping=damping, tol=tol,
        max_iter=max_iter, return_report=True,
    )
