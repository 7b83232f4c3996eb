"""The nbh version: each class's posterior given the scores of itself, its parents and its children.

On forests the tree engine has a closed form. On DAGs: a closed form for classes
whose neighbourhood is a tree; the other neighbourhoods are reduced without
changing the answer (a parent that is an ancestor of another parent is dropped, an
unobserved class with a single child is merged into it), grouped by shape, and each
shape is solved once for all its classes (enumeration up to ``_NBH_ENUMERATE``
classes, else the dense junction tree, or the sparse one where the dense tree's
largest clique is wider than ``max_clique``). The engine registry's ``nbh`` field says how an
engine takes part: ``"grouped"`` (exact engines: the shared solver above),
``"own_on_dags"`` (approximate engines run themselves on the neighbourhoods that
are not forests) or ``"subgraphs"`` (one run per class on its neighbourhood).
"""

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .._numba import jit
from .._util import preview
from ..exceptions import InferenceError, TooLargeError
from ..network import LabelNetwork
from ._common import impossible_evidence, posterior_from_logs
from ._registry import MAX_CLIQUE, get_engine
from ._sparse_junction import DEFAULT_BUDGET


def nbh_posterior(hierarchy, theta, l0, l1, engine, options):
    """(K, M) posterior of each class given evidence on itself, its parents and children.

    Raises InferenceError for the objects whose evidence some class's neighbourhood rules out (counted over
    every class: each solver leaves NaN there)."""
    spec = get_engine(engine)
    if spec.nbh == "subgraphs":
        out = _nbh_by_subgraphs(hierarchy, theta, l0, l1, engine, options)
    else:
        # Classes with at most one parent whose children have no other parent: closed form.
        out, local = _nbh_local(hierarchy, theta, l0, l1)
        rest = np.flatnonzero(~local)
        if len(rest):
            out[rest] = _nbh_reduced(hierarchy, theta, l0, l1, rest, spec, options)
    bad = np.isnan(out).any(axis=0)
    if bad.any():
        raise impossible_evidence(hierarchy, np.flatnonzero(bad))
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
        spec = get_engine(engine)
        if spec.nbh == "grouped" and _dense_too_wide(sub, options):  # exact, as the reduced networks: the sparse tree
            spec = get_engine("sparse")
        out[i] = _run_or_nan(spec, sub, theta[idx], sl0, sl1, options)[sub.index(hierarchy.classes[k])]
    return out


def _run_or_nan(spec, sub, theta, l0, l1, options):
    """``spec.run`` on one neighbourhood network, NaN for the objects whose evidence it rules out (the engine
    raises for them: they are found object by object, so that nbh counts them over every class)."""
    try:
        return spec.run(sub, theta, l0, l1, options)[0]
    except InferenceError:
        out = np.full(l0.shape, np.nan)
        for t in range(l0.shape[1]):
            try:
                out[:, t] = spec.run(sub, theta, l0[:, t:t + 1], l1[:, t:t + 1], options)[0][:, 0]
            except InferenceError:
                pass
        return out


def _dense_too_wide(hierarchy, options):
    """Whether the dense junction tree of ``hierarchy`` has a clique wider than ``max_clique`` (min-fill)."""
    from ._triangulation import triangulation

    return max(len(c) for c in triangulation(hierarchy, "min-fill")[0]) > options.get("max_clique", MAX_CLIQUE)


def _nbh_local(hierarchy, theta, l0, l1):
    """Closed-form nbh for classes whose neighbourhood is a tree; (K, M) and a (K,) mask.

    NaN outside the mask, and where the class's neighbourhood rules out the evidence.

    When ``k`` has at most one parent ``p`` and each child of ``k`` has no other
    parent, the restricted network over (Y_p, Y_k, children) is the chain
    P(Y_p) P(Y_k | Y_p) prod_c P(Y_c | Y_k), with P(Y_p = 1) the prior marginal
    of ``p`` (the product of theta over ``p`` and its ancestors, DAG or not).
    """
    from ._tree import child_messages

    local, e, nr, pp, parents = _local_plan(hierarchy)
    s0 = np.zeros_like(l0)
    s1 = np.zeros_like(l1)
    if len(e):
        m0, m1, _, _ = child_messages(l0[e[:, 1]], l1[e[:, 1]], theta[e[:, 1]])
        np.add.at(s0, e[:, 0], m0)
        np.add.at(s1, e[:, 0], m1)
    with np.errstate(divide="ignore"):
        log_th = np.log(theta)[:, None]
        log_1mth = np.log1p(-theta)[:, None]
    w1 = log_th + l1 + s1
    w0 = log_1mth + l0 + s0
    if len(nr):
        log_pi = LabelNetwork(hierarchy, theta).log_prior_marginals[parents]  # log P(Y_p = 1)
        with np.errstate(divide="ignore"):
            log_1mpi = np.log(-np.expm1(log_pi))
        par1 = log_pi[pp, None] + l1[parents[pp]]  # parent positive
        par0 = log_1mpi[pp, None] + l0[parents[pp]]  # parent negative: the class is negative
        w1[nr] += par1
        w0[nr] = np.logaddexp(par1 + log_1mth[nr], par0) + l0[nr] + s0[nr]
    out = posterior_from_logs(w0, w1)  # NaN: evidence the neighbourhood rules out
    out[~local] = np.nan
    return out, local


@lru_cache(maxsize=8)
def _local_plan(hierarchy):
    """What :func:`_nbh_local` needs of the hierarchy: the mask of its classes, the (parent, child)
    edges whose messages it sums, the classes with one parent (``nr``) and the position of that
    parent in ``parents`` (``pp``)."""
    n_par = np.array([len(p) for p in hierarchy.parent_indices])
    edges = np.asarray(hierarchy.edge_indices).reshape(-1, 2)
    lone_child = n_par[edges[:, 1]] == 1
    local = n_par <= 1
    local[edges[~lone_child, 0]] = False  # a child with another parent couples k to it
    e = edges[lone_child & local[edges[:, 0]]]
    nr = np.flatnonzero(local & (n_par == 1))
    parents, pp = np.unique(np.array([hierarchy.parent_indices[j][0] for j in nr], dtype=np.intp),
                            return_inverse=True)
    return local, e, nr, pp, parents


def _nbh_reduced(hierarchy, theta, l0, l1, classes, spec, options):
    """nbh for ``classes`` by exact inference on each neighbourhood's reduced network.

    The network of S = {k} + parents + children and their ancestors is shrunk
    without changing the distribution of the observed classes: a parent that is an
    ancestor of another parent of the same class is dropped (the other parent
    being positive implies it) and an unobserved class with a single child is
    absorbed into that child (the child takes its parents, and theta becomes the
    product of both). Networks of the same shape share one compiled hierarchy (and
    junction tree). The reduction depends only on the hierarchy and is cached
    (:func:`_reduced_shapes`), with the gather indices of every shape's evidence
    and theta products: per call, one ``multiply.reduceat`` forms every product of
    theta and each shape is solved in one pass for all its networks and objects.
    """
    reduction = _reduced_shapes(hierarchy, tuple(int(k) for k in classes))
    theta = np.asarray(theta, dtype=float)
    products = np.multiply.reduceat(theta[reduction.members], reduction.starts)
    # a merged theta below the float range (1e-300 * 1e-300) is not zero: those networks are solved unreduced
    lost = (products < np.finfo(float).tiny) & np.minimum.reduceat(theta[reduction.members] > 0, reduction.starts)
    redo = []
    out = np.empty((len(classes), l0.shape[1]))
    for shape in reduction.shapes:
        sub, n, g = shape.sub, shape.sub.n_classes, len(shape.positions)
        th = products[shape.offset:shape.offset + n * g].reshape(g, n).T  # (n, G): column g is network g
        unreduced = lost[shape.offset:shape.offset + n * g].reshape(g, n).any(axis=1)
        redo.extend(shape.positions[unreduced])
        if spec.nbh == "own_on_dags" and not sub.is_forest:  # an approximate engine answers for itself
            for j, i in enumerate(shape.positions):
                if unreduced[j]:  # its zero theta product would make the engine call the evidence impossible
                    continue
                obs = shape.observed[:, j, None]
                sl0 = np.where(obs, l0[shape.index[:, j]], 0.0)
                sl1 = np.where(obs, l1[shape.index[:, j]], 0.0)
                out[i] = _run_or_nan(spec, sub, th[:, j].copy(), sl0, sl1, options)[shape.rows[j]]
            continue
        # every network of this shape in one exact pass: small networks by
        # enumerating their consistent labellings, larger ones by the junction tree
        if n <= _NBH_ENUMERATE:
            out[shape.positions] = _enumerate_grouped(sub, th, l0, l1, shape.index, shape.observed, shape.rows)
        else:
            out[shape.positions] = _junction_reduced(hierarchy, shape, th, l0, l1, options)
    if redo:  # the engine itself on each unreduced neighbourhood (its thetas as they are, in log space)
        # (an exact engine's dense junction tree wider than max_clique: the sparse one, see _nbh_by_subgraphs)
        redo = np.sort(np.asarray(redo, dtype=np.intp))
        out[redo] = _nbh_by_subgraphs(hierarchy, theta, l0, l1, spec.name, options,
                                      classes=np.asarray(classes)[redo])
    return out  # NaN: evidence the neighbourhood rules out


def _junction_reduced(hierarchy, shape, theta, l0, l1, options):
    """(G, M) exact posteriors in the G networks of one shape by a junction tree: the dense one, all
    networks in one compiled pass, when its largest clique fits ``max_clique``; else the sparse one
    (within ``budget_bytes``), network by network. A refusal names the class whose neighbourhood it is."""
    from ._junction import junction_grouped
    from ._sparse_junction import sparse_junction_full

    sub = shape.sub
    max_clique = options.get("max_clique", MAX_CLIQUE)
    try:  # the dense tree (compiled once per shape and cached), unless wider than max_clique or the budget
        return junction_grouped(sub, theta, l0, l1, shape.index, shape.observed, shape.rows, max_clique)
    except TooLargeError:
        pass
    out = np.empty((len(shape.positions), l0.shape[1]))
    j = 0
    try:
        for j in range(len(shape.positions)):
            obs = shape.observed[:, j, None]
            sl0 = np.where(obs, l0[shape.index[:, j]], 0.0)
            sl1 = np.where(obs, l1[shape.index[:, j]], 0.0)
            res = sparse_junction_full(sub, theta[:, j].copy(), sl0, sl1,
                                       budget_bytes=options.get("budget_bytes", DEFAULT_BUDGET), impossible_nan=True)
            out[j] = res[shape.rows[j]]
    except TooLargeError as exc:
        names = [hierarchy.classes[v] for v in shape.index[:, j]]
        raise TooLargeError(f"version='nbh': the reduced network of the neighbourhood of class "
                            f"{names[shape.rows[j]]!r} ({len(names)} classes: {preview(names, 8)}): {exc}") from None
    return out


class _Shape(NamedTuple):
    """The G reduced networks of one shape: ``sub`` (n classes), their ``positions`` in the classes asked
    for, the original class of each node (``index``, (n, G)), whether it carries evidence (``observed``),
    the node of the class itself (``rows``, (G,)) and where their theta products start (``offset``)."""

    sub: object
    positions: np.ndarray
    index: np.ndarray
    observed: np.ndarray
    rows: np.ndarray
    offset: int


class _Reduction(NamedTuple):
    """Every shape, and the theta products of their nodes: node ``i`` (shape by shape, network by network,
    node by node) has theta ``prod(theta[members[starts[i]:starts[i + 1]]])``."""

    shapes: list
    members: np.ndarray
    starts: np.ndarray


@lru_cache(maxsize=8)
def _reduced_shapes(hierarchy, classes):
    """The reduced neighbourhood network of each class, grouped by shape (a :class:`_Reduction`).

    ``groups`` below are the original classes whose thetas multiply into each
    node's theta.
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
    out, members, lengths = [], [], []
    offset = 0
    for key, nets in shapes.items():
        out.append(_Shape(
            Hierarchy.from_parents([list(p) for p in key]),
            np.array([i for i, *_ in nets], dtype=np.intp),
            np.stack([idx for _, idx, *_ in nets], axis=1),
            np.stack([obs for _, _, obs, *_ in nets], axis=1),
            np.array([row for *_, row in nets], dtype=np.intp),
            offset,
        ))
        for *_, groups, _ in nets:
            members.extend(v for grp in groups for v in grp)
            lengths.extend(len(grp) for grp in groups)
        offset += len(key) * len(nets)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp)
    return _Reduction(out, np.array(members, dtype=np.intp), starts)


_NBH_ENUMERATE = 10  # reduced neighbourhood networks up to this size are enumerated


def _enumerate_grouped(sub, theta, l0, l1, index, observed, rows):
    """Exact posteriors in G small networks of one shape by summing over their consistent labellings.

    Network ``g`` has the parameters ``theta[:, g]`` ((n, G)) and its node ``v``
    the evidence ``l0[index[v, g]], l1[index[v, g]]`` where ``observed[v, g]``.
    Returns the (G, M) posterior of node ``rows[g]`` in network ``g``. Only
    labellings whose positive set is closed under parents have non-zero prior, so
    only those are listed (:func:`_consistent_labellings`). Impossible evidence gives NaN.
    """
    configs, parent_mask = _consistent_labellings(sub)
    out = np.empty((len(rows), l0.shape[1]))
    _enumerate_kernel(configs, parent_mask, np.ascontiguousarray(theta, dtype=float), l0, l1,
                      np.ascontiguousarray(index, dtype=np.int64), np.ascontiguousarray(observed, dtype=np.bool_),
                      np.asarray(rows, dtype=np.int64), out)
    return out


@lru_cache(maxsize=1024)
def _consistent_labellings(sub):
    """The labellings of ``sub`` closed under parents, as bit masks (bit ``v`` is node ``v``), and each
    node's mask of parents."""
    n = sub.n_classes
    configs = np.arange(2**n, dtype=np.int64)
    parent_mask = np.array([sum(1 << int(q) for q in sub.parent_indices[v]) for v in range(n)], dtype=np.int64)
    for v in range(n):
        on = (configs >> v) & 1 == 1
        configs = configs[~on | ((configs & parent_mask[v]) == parent_mask[v])]
    return configs, parent_mask


@jit
def _enumerate_kernel(configs, parent_mask, theta, l0, l1, index, observed, rows, out):
    """The sums of :func:`_enumerate_grouped`: for each network, log P(labelling) by the CPD rule of
    :func:`hmcpgm.network.log_cpd`; for each object, the weight of each labelling and the posterior of the row."""
    n = len(parent_mask)
    n_conf = len(configs)
    logp = np.empty(n_conf)
    w = np.empty(n_conf)
    e0 = np.empty(n)
    e1 = np.empty(n)
    for g in range(theta.shape[1]):
        for c in range(n_conf):
            lp = 0.0
            for v in range(n):
                p1 = theta[v, g] if (configs[c] & parent_mask[v]) == parent_mask[v] else 0.0
                lp += np.log(p1 if (configs[c] >> v) & 1 else 1.0 - p1)
            logp[c] = lp
        row = rows[g]
        for t in range(l0.shape[1]):
            for v in range(n):
                e0[v] = l0[index[v, g], t] if observed[v, g] else 0.0
                e1[v] = l1[index[v, g], t] if observed[v, g] else 0.0
            top = -np.inf
            for c in range(n_conf):
                s = 0.0
                for v in range(n):
                    s += e1[v] if (configs[c] >> v) & 1 else e0[v]
                w[c] = s + logp[c]
                top = max(top, w[c])
            if not np.isfinite(top):
                out[g, t] = np.nan
                continue
            num, den = 0.0, 0.0
            for c in range(n_conf):
                p = np.exp(w[c] - top)
                den += p
                if (configs[c] >> row) & 1:
                    num += p
            out[g, t] = num / den


def _irredundant(ps, anc):
    """Drop from a parent set every class that is an ancestor of another member."""
    if len(ps) < 2:
        return set(ps)
    return {q for q in ps if not any(anc[r, q] for r in ps if r != q)}
