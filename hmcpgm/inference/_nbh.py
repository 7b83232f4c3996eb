"""The nbh version: each class's posterior given the scores of itself, its parents and its children.

On forests the tree engine has a closed form. On DAGs: a closed form for classes
whose neighbourhood is a tree; the other neighbourhoods are reduced without
changing the answer (a parent that is an ancestor of another parent is dropped, an
unobserved class with a single child is merged into it), grouped by shape, and each
shape is solved once for all its classes (enumeration up to ``_NBH_ENUMERATE``
classes, else the junction tree). The engine registry's ``nbh`` field says how an
engine takes part: ``"grouped"`` (exact engines: the shared solver above),
``"own_on_dags"`` (approximate engines run themselves on the neighbourhoods that
are not forests) or ``"subgraphs"`` (one run per class on its neighbourhood).
"""

from functools import lru_cache

import numpy as np

from ..network import LabelNetwork, log_prior
from ._common import impossible_evidence, posterior_from_logs
from ._registry import get_engine


def nbh_posterior(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior of each class given evidence on itself, its parents and children."""
    spec = get_engine(engine)
    if spec.nbh == "subgraphs":
        return _nbh_by_subgraphs(hierarchy, theta, l0, l1, engine, options)
    # Classes with at most one parent whose children have no other parent: closed form.
    out, local = _nbh_local(hierarchy, theta, l0, l1)
    rest = np.flatnonzero(~local)
    if len(rest):
        out[rest] = _nbh_reduced(hierarchy, theta, l0, l1, rest, spec, options)
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
        res, _ = get_engine(engine).run(sub, theta[idx], sl0, sl1, options)
        out[i] = res[sub.index(hierarchy.classes[k])]
    return out


def _nbh_local(hierarchy, theta, l0, l1):
    """Closed-form nbh for classes whose neighbourhood is a tree; (K, M) and a (K,) mask.

    When ``k`` has at most one parent ``p`` and each child of ``k`` has no other
    parent, the restricted network over (Y_p, Y_k, children) is the chain
    P(Y_p) P(Y_k | Y_p) prod_c P(Y_c | Y_k), with P(Y_p = 1) the prior marginal
    of ``p`` (the product of theta over ``p`` and its ancestors, DAG or not).
    """
    from ._tree import child_messages

    n_par = np.array([len(p) for p in hierarchy.parent_indices])
    edges = np.asarray(hierarchy.edge_indices).reshape(-1, 2)
    lone_child = n_par[edges[:, 1]] == 1
    local = n_par <= 1
    local[edges[~lone_child, 0]] = False  # a child with another parent couples k to it
    s0 = np.zeros_like(l0)
    s1 = np.zeros_like(l1)
    e = edges[lone_child & local[edges[:, 0]]]
    if len(e):
        m0, m1, _, _ = child_messages(l0[e[:, 1]], l1[e[:, 1]], theta[e[:, 1]])
        np.add.at(s0, e[:, 0], m0)
        np.add.at(s1, e[:, 0], m1)
    with np.errstate(divide="ignore"):
        log_th = np.log(theta)[:, None]
        log_1mth = np.log1p(-theta)[:, None]
    log_pi = LabelNetwork(hierarchy, theta).log_prior_marginals[:, None]
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


def _nbh_reduced(hierarchy, theta, l0, l1, classes, spec, options):
    """nbh for ``classes`` by exact inference on each neighbourhood's reduced network.

    The network of S = {k} + parents + children and their ancestors is shrunk
    without changing the distribution of the observed classes: a parent that is an
    ancestor of another parent of the same class is dropped (the other parent
    being positive implies it) and an unobserved class with a single child is
    absorbed into that child (the child takes its parents, and theta becomes the
    product of both). Networks of the same shape share one compiled hierarchy (and
    junction tree). The reduction depends only on the hierarchy and is cached
    (:func:`_reduced_shapes`); only the products of theta are formed per call.
    """
    shapes = {
        sub: [(i, idx, observed, [float(np.prod(theta[list(g)])) for g in groups], row)
              for i, idx, observed, groups, row in members]
        for sub, members in _reduced_shapes(hierarchy, tuple(int(k) for k in classes)).items()
    }
    out = np.empty((len(classes), l0.shape[1]))
    m = l0.shape[1]
    for sub, members in shapes.items():
        if spec.nbh == "own_on_dags" and not sub.is_forest:  # an approximate engine answers for itself
            for i, idx, observed, th, row in members:
                sl0 = np.where(observed[:, None], l0[idx], 0.0)
                sl1 = np.where(observed[:, None], l1[idx], 0.0)
                res, _ = spec.run(sub, np.array(th), sl0, sl1, options)
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


@lru_cache(maxsize=8)
def _reduced_shapes(hierarchy, classes):
    """The reduced neighbourhood network of each class, grouped by shape.

    Returns ``{sub: [(i, idx, observed, groups, row), ...]}``: ``sub`` the shape's
    Hierarchy, ``i`` the position in ``classes``, ``idx`` the original class of each
    node of the reduced network, ``observed`` which nodes carry evidence, ``groups``
    the original classes whose thetas multiply into each node's theta, ``row`` the
    node of the class itself.
    """
    from ..hierarchy import Hierarchy

    anc = hierarchy.ancestor_matrix
    parents = hierarchy.parent_indices
    topo_rank = np.empty(hierarchy.n_classes, dtype=np.intp)
    topo_rank[np.asarray(hierarchy.topological_order)] = np.arange(hierarchy.n_classes)
    shapes = {}
    for i, k in enumerate(classes):
        s = np.unique(np.concatenate(([k], parents[k], hierarchy.child_indices[k])))
        keep = anc[s].any(axis=0)
        keep[s] = True
        nodes = np.flatnonzero(keep)
        nodes = nodes[np.argsort(topo_rank[nodes])]
        observed = set(s.tolist())
        group = {v: (v,) for v in nodes.tolist()}
        par = {v: _irredundant(set(parents[v].tolist()), anc) for v in nodes.tolist()}
        kids = {v: set() for v in par}
        for v, ps in par.items():
            for q in ps:
                kids[q].add(v)
        for u in nodes[::-1].tolist():  # children before parents: absorptions cascade upward
            if u in observed or len(kids[u]) != 1:
                continue
            (w,) = kids[u]
            group[w] = group[w] + group[u]
            for q in par[u]:
                kids[q].discard(u)
                kids[q].add(w)
            before = (par[w] - {u}) | par[u]
            par[w] = _irredundant(before, anc)
            for q in before - par[w]:
                kids[q].discard(w)
            del par[u], kids[u], group[u]
        order = [v for v in nodes.tolist() if v in par]
        pos = {v: j for j, v in enumerate(order)}
        key = tuple(tuple(sorted(pos[q] for q in par[v])) for v in order)
        idx = np.array(order, dtype=np.intp)
        shapes.setdefault(key, []).append((i, idx, np.isin(idx, s), [group[v] for v in order], pos[k]))
    return {Hierarchy.from_parents([list(p) for p in key]): members for key, members in shapes.items()}


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
    logp = log_prior(sub, theta, configs)  # (G, C)
    out = np.empty_like(l0)
    m = l0.shape[1]
    cols = np.arange(n)
    idx = configs.astype(np.intp)
    cf = configs.astype(float)
    chunk = max(1, 2**22 // (len(configs) * n))
    for start in range(0, m, chunk):
        sl = slice(start, start + chunk)
        logl = np.stack([l0[:, sl].T, l1[:, sl].T], axis=2)  # (mm, n, 2)
        w = logl[:, cols, idx].sum(axis=2) + logp[gid[sl]]  # (mm, C)
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
