"""A score node that also reads its parents' labels: does the network rank better with it? (issue 19)

The augmented network makes each score ``S_k`` a child of its own label only.
With a joint first stage (one model scores every class) a negative class scores
differently inside its parent (a sibling of the positives) than outside it. This
script tries, on trees, the network whose score node ``S_k`` is a child of
``Y_k`` and of ``A_k`` ("all parents of k positive"; roots: always 1). The score
then has three densities: outside the parent (``N0``: ``A_k = 0``, so ``Y_k = 0``),
a negative inside it (``N1``) and a positive (``P``). Because ``Y_k = 1`` implies
``A_k = 1``, the factor of ``s_k`` over ``(Y_parent, Y_k)`` divided by ``f_N0(s_k)``
is ``[1, LR_k]`` on ``Y_k`` times ``[1, r_k]`` on ``Y_parent``, with
``LR_k = f_P / f_N1`` and ``r_k = f_N1 / f_N0``. So the exact posterior is the
plain tree network's with the node log ratio

    a * log LR_j + b * sum over children c of j of log r_c,

tempered by ``a`` (a class's own evidence) and ``b`` (its children's evidence
about it); ``b = 0`` drops what a negative child's score says about its parent.
``LR_k`` is fitted on the rows whose parents are all positive (labels ``Y_k``),
``r_k`` on the rows where ``k`` is negative (labels ``A_k``), each by the paper's
score model (``score_model="lpr"``, one class at a time).

The comparison that isolates the score node: the plain network (``version="full"``),
with the same score model fitted on all rows, tempered by ``a``. Both choose
their exponents on the validation rows (grid below) and are scored on the test
rows, HierRank micro AU(PRC) (%) on the evaluated classes; the default
``MLPR()`` is printed for reference.

Printed first: the node-ratio identity checked against brute-force enumeration
of the three-state model on random small trees.

Scores: as ``bench/version_transfer.py``. Trees only: on a DAG the factor on
``A_k = prod of the parents' labels`` does not split into node factors.

Usage (from the repository root)::

    python bench/score_node_parents.py --runs ImCLEF07A.joint
    python bench/score_node_parents.py   # the 10 runs on trees (about 5 minutes)
"""

import itertools
import warnings

import numpy as np
from version_transfer import auprc, load_run, run_arguments, standard_error

A_GRID = (0.1, 0.25, 0.5, 0.75, 1.0)
B_GRID = (0.0, 0.25, 0.5, 1.0)


def parents_positive(labels, hierarchy):
    """``A`` (M, K) bool: every parent of the class is positive (roots: True)."""
    y = np.asarray(labels).astype(bool)
    a = np.ones_like(y)
    for k, parents in enumerate(hierarchy.parent_indices):
        for p in parents:
            a[:, k] &= y[:, p]
    return a


def node_log_ratios(own, up, hierarchy, a, b):
    """The plain network's node log ratio equivalent to the three-state score nodes (on a tree)."""
    ell = a * own
    for k, parents in enumerate(hierarchy.parent_indices):
        for p in parents:
            ell[:, p] += b * up[:, k]
    return ell


def posterior(network, ell):
    """Exact mLPRs of the plain network from node log ratios (the library's tree engine)."""
    from hmcpgm.inference import mlpr_from_likelihoods

    ell = np.clip(ell, -50.0, 50.0)
    return mlpr_from_likelihoods(network, np.stack([np.exp(-ell / 2), np.exp(ell / 2)], axis=-1), version="full")


def enumerate_three_state(log_f, hierarchy, theta):
    """Brute force: ``log_f`` (M, K, 3) log densities of ``s_k`` under N0, N1, P; marginals P(Y_k = 1 | s)."""
    k_all = hierarchy.n_classes
    num, total = np.zeros((len(log_f), k_all)), np.zeros(len(log_f))
    for bits in itertools.product((0, 1), repeat=k_all):
        y = np.array(bits)
        parents_on = np.array([all(y[p] for p in ps) for ps in hierarchy.parent_indices])
        if np.any(y & ~parents_on):
            continue
        prior = np.prod(np.where(parents_on, np.where(y == 1, theta, 1 - theta), 1.0))
        state = np.where(y == 1, 2, np.where(parents_on, 1, 0))
        w = prior * np.exp(log_f[:, np.arange(k_all), state].sum(axis=1))
        total += w
        num += w[:, None] * y
    return num / total[:, None]


def check_identity(n_trees=20, seed=0):
    """Largest gap between the node-ratio route and enumeration over random trees of 2-7 classes."""
    from hmcpgm import Hierarchy
    from hmcpgm.network import LabelNetwork

    rng = np.random.default_rng(seed)
    gap = 0.0
    for _ in range(n_trees):
        k_all = int(rng.integers(2, 8))
        names = [f"c{i}" for i in rng.permutation(k_all)]  # columns not in topological order
        edges = [(names[int(rng.integers(0, i))], names[i]) for i in range(1, k_all) if rng.random() < 0.8]
        h = Hierarchy.from_edges(edges, classes=list(rng.permutation(names)))
        theta = rng.uniform(0.1, 0.9, k_all)
        log_f = rng.normal(size=(30, k_all, 3))
        own = log_f[..., 2] - log_f[..., 1]
        up = log_f[..., 1] - log_f[..., 0]
        got = posterior(LabelNetwork(h, theta), node_log_ratios(own, up, h, 1.0, 1.0))
        gap = max(gap, float(np.abs(got - enumerate_three_state(log_f, h, theta)).max()))
    return gap


def class_log_ratio(s_fit, y_fit, s_apply):
    """log L(1) / L(0) of one class's score model (``"lpr"``) fitted on (s_fit, y_fit), at each of ``s_apply``;
    0 (no evidence) when either label has fewer than two rows."""
    from hmcpgm import Hierarchy
    from hmcpgm.likelihood import fit_score_model
    from hmcpgm.tempering import log_evidence_ratio

    n1 = int(y_fit.sum())
    if n1 < 2 or len(y_fit) - n1 < 2:
        return [np.zeros(len(s)) for s in s_apply]
    model = fit_score_model(s_fit[:, None], y_fit[:, None].astype(int), Hierarchy.from_edges([], classes=["k"]), "lpr")
    return [log_evidence_ratio(model.likelihoods(s[:, None]))[:, 0] for s in s_apply]


def three_state_ratios(z, hierarchy):
    """``own`` (log LR_k) and ``up`` (log r_k) on the validation and test rows, fitted on the training rows."""
    s, y = z["s_train"], z["y_train"]
    a = parents_positive(y, hierarchy)
    parts = [z["s_valid"], z["s_test"]]
    own = [np.zeros((len(p), hierarchy.n_classes)) for p in parts]
    up = [np.zeros((len(p), hierarchy.n_classes)) for p in parts]
    for k in range(hierarchy.n_classes):
        inside = a[:, k]
        for out, v in zip(own, class_log_ratio(s[inside, k], y[inside, k], [p[:, k] for p in parts])):
            out[:, k] = v
        if len(hierarchy.parent_indices[k]):
            negative = y[:, k] == 0
            for out, v in zip(up, class_log_ratio(s[negative, k], a[negative, k], [p[:, k] for p in parts])):
                out[:, k] = v
    return own, up


def main():
    from hmcpgm import MLPR
    from hmcpgm.likelihood import fit_score_model
    from hmcpgm.network import LabelNetwork
    from hmcpgm.tempering import log_evidence_ratio

    args = run_arguments(__doc__)
    warnings.simplefilter("ignore")
    print(f"node-ratio identity against enumeration (20 random trees): max |difference| {check_identity():.1e}\n")
    print("HierRank micro AU(PRC) (%), valid / test; exponents chosen on the validation rows")
    print(f"{'run':<24}{'default':>14}{'plain full (a)':>22}{'three-state (a, b)':>28}{'gain: test':>12}")
    gains = []
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        if not h.is_forest:
            print(f"{run:<24} skipped: not a tree")
            continue
        ev = np.asarray(z["evaluated"], bool)
        parts = ("valid", "test")
        model = MLPR(hierarchy=h, allow_empty=True).fit(z["s_train"], z["y_train"])
        default = [auprc(model.predict_proba(z[f"s_{p}"]), z[f"y_{p}"], h, ev) for p in parts]
        net = LabelNetwork.from_labels(z["y_train"], h)
        plain_model = fit_score_model(z["s_train"], z["y_train"], h, "lpr", allow_empty=True)
        plain_ratio = [log_evidence_ratio(plain_model.likelihoods(z[f"s_{p}"])) for p in parts]
        plain = {a: [auprc(posterior(net, a * r), z[f"y_{p}"], h, ev) for r, p in zip(plain_ratio, parts)]
                 for a in A_GRID}
        own, up = three_state_ratios(z, h)
        three = {(a, b): [auprc(posterior(net, node_log_ratios(o, u, h, a, b)), z[f"y_{p}"], h, ev)
                          for o, u, p in zip(own, up, parts)]
                 for a in A_GRID for b in B_GRID}
        pa = max(plain, key=lambda k: plain[k][0])
        ta = max(three, key=lambda k: three[k][0])
        gains.append(three[ta][1] - plain[pa][1])
        print(f"{run:<24}{default[0]:>7.2f}/{default[1]:<6.2f}"
              f"{f'{plain[pa][0]:.2f}/{plain[pa][1]:.2f} ({pa})':>22}"
              f"{f'{three[ta][0]:.2f}/{three[ta][1]:.2f} {ta}':>28}{gains[-1]:>+12.2f}", flush=True)
    if gains:
        print(f"\nthree-state minus plain full, test rows: mean {np.mean(gains):+.2f} "
              f"(+- {float(standard_error(gains)):.2f}) over {len(gains)} runs; worst {min(gains):+.2f}, "
              f"best {max(gains):+.2f}")


if __name__ == "__main__":
    main()
