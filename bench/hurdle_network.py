"""A label network whose children may not all be negative under a positive class: does it rank better? (issue 19)

``bench/child_exhaustiveness.py`` shows that the label network puts far more
prior mass than the data on "a positive class with no positive child" (about
0.15-0.29 against 0.00-0.17 on the benchmark trees). This script tries the
smallest change of the network that removes that misfit, on trees: given a
positive parent ``p``, its children's labels follow a hurdle distribution,
``P(no child positive) = q_p`` and otherwise independent Bernoullis
``theta'_c`` conditioned on at least one being positive. ``q_p`` and ``theta'``
are maximum-likelihood fits on the training labels (pseudo-count 0.5). Exact
posteriors come from a sum-product pass over the tree that handles each
family's hurdle in time linear in its children (written here, in numpy).

Checks printed first: the hurdle pass against brute-force enumeration on random
small trees, and, with ``q_p = prod_c (1 - theta_c)`` (which makes it the plain
network), against hmcpgm's tree engine on a real run.

Then, per run on a tree, the default ``MLPR()``'s fit (score models, own-evidence
exponent ``own`` of indpt) is reused; the full version of the hurdle network is
tempered like the default's full (others' evidence at ``a``, each class's own at
``own``), ``a`` chosen on the cross-fitted training rows (per fold: hurdle
parameters from the other folds' labels) by flat micro AU(PRC) over the grid
0.03-1. Printed: HierRank micro AU(PRC) (%) of the test rows for the default,
its indpt version and the hurdle network's full version, and the cross-fitted
AU(PRC) of indpt and of the hurdle network at the chosen ``a``.

Scores: as ``bench/version_transfer.py`` (``<cache-dir>/<data set>.<first
stage>.npz`` when it exists, else made by the benchmark's first stage).

Usage (from the repository root)::

    python bench/hurdle_network.py --runs ImCLEF07A.joint,Enron_corr.classwise
    python bench/hurdle_network.py   # the 10 runs on trees (minutes)
"""

import argparse
import dataclasses
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from version_transfer import CACHE, DATA, TREES, auprc, load_run  # noqa: E402

GRID = (0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)


def fit_hurdle(labels, hierarchy, pseudo_count=0.5, n_iter=200):
    """``theta`` (roots: P(Y = 1); others: theta'), and ``q`` (per class with children) from 0/1 labels."""
    y = np.asarray(labels).astype(bool)
    theta, q = np.full(hierarchy.n_classes, 0.5), np.zeros(hierarchy.n_classes)
    c = pseudo_count
    for k in range(hierarchy.n_classes):
        if not len(hierarchy.parent_indices[k]):
            theta[k] = (y[:, k].sum() + c) / (len(y) + 2 * c)
        children = hierarchy.child_indices[k]
        if not len(children):
            continue
        below = y[y[:, k]][:, children]
        none = ~below.any(axis=1)
        q[k] = (none.sum() + c) / (len(below) + 2 * c)
        some = below[~none]
        mean = (some.sum(axis=0) + c) / (len(some) + 2 * c)
        t = mean.copy()
        for _ in range(n_iter):  # ML of a Bernoulli product conditioned on >= 1 success: mean = t / (1 - prod(1 - t))
            t = np.clip(mean * (1.0 - np.prod(1.0 - t)), 1e-9, 1 - 1e-9)
        theta[children] = t
    return theta, q


def hurdle_posterior(llr, hierarchy, theta, q):
    """P(Y_k = 1 | evidence) on a tree; ``llr`` (M, K): log L_k(1) / L_k(0). ``q = prod(1 - theta)`` gives the
    plain network."""
    lam1 = 1.0 / (1.0 + np.exp(-llr))
    lam0 = 1.0 - lam1
    m, k_all = llr.shape
    b0, b1 = np.empty((m, k_all)), np.empty((m, k_all))  # evidence below and at k, given Y_k (normalised)
    order = list(hierarchy.topological_order)
    for k in reversed(order):
        ch = hierarchy.child_indices[k]
        u0 = u1 = np.ones(m)
        if len(ch):
            t = theta[ch]
            u0 = np.prod(b0[:, ch], axis=1)
            some = np.prod(t * b1[:, ch] + (1 - t) * b0[:, ch], axis=1) - np.prod((1 - t) * b0[:, ch], axis=1)
            u1 = q[k] * u0 + (1 - q[k]) / (1 - np.prod(1 - t)) * some
        x0, x1 = lam0[:, k] * u0, lam1[:, k] * u1
        b0[:, k], b1[:, k] = x0 / (x0 + x1), x1 / (x0 + x1)
    a0, a1 = np.empty((m, k_all)), np.empty((m, k_all))  # evidence outside k's subtree, joint with Y_k
    for k in order:
        if not len(hierarchy.parent_indices[k]):
            a0[:, k], a1[:, k] = 1 - theta[k], theta[k]
        ch = hierarchy.child_indices[k]
        if not len(ch):
            continue
        t = theta[ch]
        log_b0 = np.log(b0[:, ch])
        log_mix = np.log(t * b1[:, ch] + (1 - t) * b0[:, ch])
        log_none = np.log(1 - t) + log_b0
        others = {name: np.exp(v.sum(axis=1, keepdims=True) - v)  # products over the siblings
                  for name, v in (("b0", log_b0), ("mix", log_mix), ("none", log_none))}
        up0 = (a0[:, k] * lam0[:, k])[:, None]
        up1 = (a1[:, k] * lam1[:, k])[:, None]
        z = 1 - np.prod(1 - t)
        c1 = up1 * (1 - q[k]) / z * t * others["mix"]
        c0 = up0 * others["b0"] + up1 * (q[k] * others["b0"]
                                         + (1 - q[k]) / z * (1 - t) * (others["mix"] - others["none"]))
        a0[:, ch], a1[:, ch] = c0 / (c0 + c1), c1 / (c0 + c1)
    return a1 * b1 / (a1 * b1 + a0 * b0)


def enumerate_hurdle(llr, hierarchy, theta, q):
    """Brute force over every label vector of a small tree (the reference of :func:`hurdle_posterior`)."""
    k_all = hierarchy.n_classes
    post_num, total = np.zeros((len(llr), k_all)), np.zeros(len(llr))
    for bits in itertools.product((0, 1), repeat=k_all):
        y = np.array(bits, bool)
        prior = 1.0
        for k in range(k_all):
            parents = hierarchy.parent_indices[k]
            if not len(parents):
                prior *= theta[k] if y[k] else 1 - theta[k]
            elif not y[parents[0]] and y[k]:
                prior = 0.0
        for k in range(k_all):
            ch = hierarchy.child_indices[k]
            if len(ch) and y[k]:
                t = theta[ch]
                if not y[ch].any():
                    prior *= q[k]
                else:
                    prior *= (1 - q[k]) * np.prod(np.where(y[ch], t, 1 - t)) / (1 - np.prod(1 - t))
        weight = prior * np.exp(llr[:, y].sum(axis=1))
        total += weight
        post_num[:, y] += weight[:, None]
    return post_num / total[:, None]


def checks(rng):
    """Largest differences: hurdle pass vs enumeration on random trees; vs the tree engine as the plain network."""
    from hmcpgm import Hierarchy

    worst = 0.0
    for _ in range(20):
        n = int(rng.integers(2, 9))
        parents = [None] + [int(rng.integers(0, i)) for i in range(1, n)]
        perm = rng.permutation(n)  # columns not in topological order
        inv = np.argsort(perm)
        h = Hierarchy.from_parents([None if parents[perm[i]] is None else int(inv[parents[perm[i]]])
                                    for i in range(n)])
        theta, q = rng.uniform(0.05, 0.95, n), rng.uniform(0.0, 0.9, n)
        llr = rng.normal(0, 2, (5, n))
        worst = max(worst, float(np.abs(hurdle_posterior(llr, h, theta, q) - enumerate_hurdle(llr, h, theta, q)).max()))
    return worst


def log_ratio(likelihoods):
    """log L(1) / L(0), clipped to +-50 (hard evidence)."""
    lik = np.maximum(likelihoods, 1e-300)
    return np.clip(np.log(lik[..., 1]) - np.log(lik[..., 0]), -50, 50)


def own_at(p, llr, a, own):
    """Each class's own evidence at ``own`` and the others' at ``a`` (hmcpgm.tempering.own_evidence's rule)."""
    p = np.clip(p, 1e-300, 1 - 1e-16)
    return 1.0 / (1.0 + np.exp(-(np.log(p) - np.log1p(-p) + (own - a) * llr)))


def main():
    from hmcpgm import LabelNetwork
    from hmcpgm.inference import mlpr_from_likelihoods
    from hmcpgm.metrics import average_precision
    from hmcpgm.selection import fit_second_stage_auto

    def flat_ap(values, labels):  # micro AU(PRC) of the values, no hierarchy (the default's exponent criterion)
        return average_precision(values, labels, exclude_roots=False)

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default=",".join(f"{d}.{f}" for f in ("joint", "classwise") for d in TREES))
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"check: hurdle pass vs enumeration on 20 random trees, max abs diff {checks(np.random.default_rng(0)):.1e}")
    print(f"{'run':<24} {'default':>8} {'version':<6} {'indpt':>6} {'hurdle':>7} {'a':>5}   "
          f"{'cv indpt':>8} {'cv hurdle':>9}")
    checked = False
    for run in args.runs.split(","):
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        cols = np.flatnonzero(ev)
        y = np.asarray(z["y_train"]).astype(int)
        stage, details = fit_second_stage_auto(z["s_train"], y, h, allow_empty=True, seed=0, return_predictions=True)
        crossfit, own = details["crossfit"], np.broadcast_to(details["versions"]["indpt"]["a"], (h.n_classes,))
        llr_train, llr_test = log_ratio(crossfit.likelihoods), log_ratio(stage.likelihoods(z["s_test"]))
        if not checked:
            net = LabelNetwork.from_labels(y, h, pseudo_count=0.5)
            plain_q = np.array([np.prod(1 - net.theta[h.child_indices[k]]) for k in range(h.n_classes)])
            lik = np.stack([1 / (1 + np.exp(llr_test)), 1 / (1 + np.exp(-llr_test))], axis=-1)
            diff = np.abs(hurdle_posterior(llr_test, h, net.theta, plain_q)
                          - mlpr_from_likelihoods(net, lik, version="full", engine="tree")).max()
            print(f"check: plain network (q = prod(1 - theta)) vs hmcpgm's tree engine on {run}: {diff:.1e}")
            checked = True
        folds = crossfit.folds
        fold_params = {f: fit_hurdle(y[folds != f], h) for f in np.unique(folds)}
        cv = {}
        for a in GRID:
            p = np.empty(llr_train.shape)
            for f, (theta, q) in fold_params.items():
                rows = folds == f
                p[rows] = hurdle_posterior(a * llr_train[rows], h, theta, q)
            cv[a] = flat_ap(own_at(p, llr_train, a, own)[:, cols], y[:, cols])
        a = max(cv, key=cv.get)
        theta, q = fit_hurdle(y, h)
        hurdle = auprc(own_at(hurdle_posterior(a * llr_test, h, theta, q), llr_test, a, own), z["y_test"], h, ev)
        indpt_stage = dataclasses.replace(stage, version="indpt", a=own, own=None, consistency="hierrank")
        default = auprc(stage.predict_proba(z["s_test"]), z["y_test"], h, ev)
        indpt = auprc(indpt_stage.predict_proba(z["s_test"]), z["y_test"], h, ev)
        cv_indpt = flat_ap(details["versions"]["indpt"]["mlpr"][:, cols], y[:, cols])
        print(f"{run:<24} {default:>8.2f} {stage.version:<6} {indpt:>6.2f} {hurdle:>7.2f} {a:>5.2f}   "
              f"{100 * cv_indpt:>8.2f} {100 * cv[a]:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
