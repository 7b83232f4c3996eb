"""Stacking the neighbours' scores: a discriminative rival to the network's evidence (issue 19).

The network reads each first-stage score through its own class's label only
(``S_k`` independent of everything else given ``Y_k``); nbh and full reach the
neighbours' scores through the labels, with fitted exponents that temper the
evidence counted twice. A discriminative second stage reads the neighbours' scores
directly. This script fits, per class ``k`` on the training rows,

    logit P(Y_k = 1) = b0 + b1 L_k + b2 min_{p parent} L_p + b3 max_{c child} L_c
                       + b4 log sum_{c child} exp(L_c)

with ``L`` the Platt-calibrated logits of the first-stage scores
(:func:`hmcpgm.corrections.fit_calibration`, fitted on the same training rows; a
root has no parent term, a leaf no child terms), by penalised maximum likelihood
with a Gaussian prior of precision ``lam`` centred on ``b1 = 1`` and the other
slopes 0 (the class's own calibrated score) and a flat prior on ``b0``. ``lam``
is picked per run on the validation rows among ``--lams``. The stacked values are
ranked by HierRank, as the default's.

Printed per run, AU(PRC) points on the test rows (evaluated classes) minus the best
of the leaderboard's 18 corrections picked on the test rows (the leaderboard's
strongest baseline, :func:`hmcpgm.applications.leaderboard.correction_values`):
the default ``MLPR()``; the stack; the default fitted on the stacked values of the
training rows instead of the scores (the stack as a first stage: ``on stack``);
the default and the stack averaged (``avg``); the default averaged with the stack's
Platt-calibrated scores alone, without the neighbours (``avg flat``: is the gain the
neighbours, or a second opinion of any kind?); the average of the default and the
stack with the weight of the default (0, 0.25, 0.5, 0.75 or 1) that ranks the
validation rows best (``avg picked``); the same average of the default and the
stack with the stack's precision picked without the validation rows, by the
AU(PRC) of its out-of-fold values on the training rows (5 folds, ``avg cv``): what a
second stage could do on its own, with the picks of the stack's precision and of
that weight and the stack's fit in seconds. Then, over the runs, each second stage's
mean and worst gap, and on how many runs it is ahead of the default.

The stack's training values are in-sample (five coefficients per class under the
prior); the first-stage scores it reads are out of fold, as everywhere in the
benchmark.

Scores: as ``bench/version_transfer.py`` (``--cache-dir``, else made from the
ARFF files with the benchmark's first stage; minutes).

Usage (from the repository root)::

    python bench/stacking.py --runs ImCLEF07A.joint
    python bench/stacking.py --runs all   # the 16 runs of the leaderboard (about 40 minutes)
"""

import time
import warnings

import numpy as np
from scipy.special import expit, logit
from version_transfer import TREE_RUNS, auprc, load_run, run_arguments


def neighbour_terms(L, hierarchy):
    """Per class: min of the parents' logits, max of the children's, log-sum-exp of the children's; and
    which classes have parents and children."""
    m, k = L.shape
    parents, children = [[] for _ in range(k)], [[] for _ in range(k)]
    for p, c in hierarchy.edge_indices:
        parents[c].append(p)
        children[p].append(c)
    low_parent, top_child, sum_child = np.zeros((m, k)), np.zeros((m, k)), np.zeros((m, k))
    for j in range(k):
        if parents[j]:
            low_parent[:, j] = L[:, parents[j]].min(axis=1)
        if children[j]:
            top_child[:, j] = L[:, children[j]].max(axis=1)
            sum_child[:, j] = np.logaddexp.reduce(L[:, children[j]], axis=1)
    has = (np.array([bool(p) for p in parents]), np.array([bool(c) for c in children]))
    return low_parent, top_child, sum_child, has


def _design(L, terms, j):
    low_parent, top_child, sum_child, (has_parent, has_child) = terms
    cols = [np.ones(len(L)), L[:, j]]
    if has_parent[j]:
        cols.append(low_parent[:, j])
    if has_child[j]:
        cols += [top_child[:, j], sum_child[:, j]]
    return np.column_stack(cols)


def _penalised_logistic(X, y, lam, n_iter=100):
    """Newton's method with step halving; prior N(mu, 1/lam) on the slopes, mu = (1, 0, ...), almost flat on
    the intercept."""
    mu = np.zeros(X.shape[1])
    mu[1] = 1.0
    prec = np.full(X.shape[1], lam)
    prec[0] = 1e-6

    def objective(w):
        eta = X @ w
        return np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * np.sum(prec * (w - mu) ** 2)

    w = mu.copy()
    f = objective(w)
    for _ in range(n_iter):
        p = expit(X @ w)
        step = np.linalg.solve((X * (p * (1 - p))[:, None]).T @ X + np.diag(prec), X.T @ (p - y) + prec * (w - mu))
        t = 1.0
        while t > 1e-10 and objective(w - t * step) > f + 1e-12 * (abs(f) + 1):
            t /= 2
        w = w - t * step
        f = objective(w)
        if np.abs(t * step).max() < 1e-9:
            break
    return w


class Stack:
    """The per-class stacked logistic regressions, fitted on training scores and labels."""

    def __init__(self, s, y, hierarchy, lam):
        from hmcpgm.corrections import fit_calibration

        self.hierarchy = hierarchy
        self.calibration = fit_calibration(s, y, method="platt")
        L = self._logits(s)
        terms = neighbour_terms(L, hierarchy)
        n_pos = y.sum(axis=0)
        self.coef = [_penalised_logistic(_design(L, terms, j), y[:, j].astype(float), lam)
                     if 0 < n_pos[j] < len(y) else None for j in range(L.shape[1])]

    def _logits(self, s):
        return logit(np.clip(self.calibration.transform(s), 1e-6, 1 - 1e-6))

    def predict(self, s):
        L = self._logits(s)
        terms = neighbour_terms(L, self.hierarchy)
        out = expit(L)
        for j, w in enumerate(self.coef):
            if w is not None:
                out[:, j] = expit(_design(L, terms, j) @ w)
        return out


def cross_validated_lam(s, y, hierarchy, lams, evaluated, cv=5, seed=0):
    """The precision whose stack ranks its out-of-fold values of the training rows best (HierRank AU(PRC))."""
    from sklearn.model_selection import KFold

    out = {lam: np.empty_like(s) for lam in lams}
    for fit_rows, held in KFold(cv, shuffle=True, random_state=seed).split(s):
        for lam in lams:
            out[lam][held] = Stack(s[fit_rows], y[fit_rows], hierarchy, lam).predict(s[held])
    return max(lams, key=lambda lam: auprc(out[lam], y, hierarchy, evaluated))


def best_correction(s_train, y_train, s_test, y_test, hierarchy, evaluated):
    """The leaderboard's correction with the best AU(PRC) on the test rows (picked on them): its label and
    AU(PRC)."""
    from hmcpgm.applications.leaderboard import correction_values

    corrections, _ = correction_values(s_train, y_train, [s_test], hierarchy)
    best = {k: auprc(v[0], y_test, hierarchy, evaluated) for k, v in corrections.items()}
    top = max(best, key=best.get)
    return top, best[top]


def print_summary(gaps, n_runs, width):
    """Each second stage's mean and worst gap over the runs, and on how many it is ahead of ``gaps["default"]``."""
    print(f"\nover {n_runs} runs, minus the best correction: mean / worst; runs ahead of the default")
    for k, g in gaps.items():
        ahead = sum(a > d for a, d in zip(g, gaps["default"]))
        print(f"{k:<{width}} {np.mean(g):+.2f} / {np.min(g):+.2f}; {ahead} of {n_runs}")


def main():
    from hmcpgm import MLPR

    def extra(parser):
        parser.add_argument("--lams", default="3,10,30,100", help="comma-separated prior precisions to pick from")

    args = run_arguments(__doc__, TREE_RUNS, extra=extra)
    lams = [float(x) for x in args.lams.split(",")]
    warnings.simplefilter("ignore")
    keys = ("default", "stack", "on stack", "avg", "avg flat", "avg picked", "avg cv")
    weights = (0.0, 0.25, 0.5, 0.75, 1.0)
    print("AU(PRC) points on the test rows minus the best correction picked on them")
    print(f"{'run':<24}{'best correction':>16}{'its AU(PRC)':>12}" + "".join(f"{k:>11}" for k in keys)
          + f"{'lam':>6}{'lam cv':>7}{'w':>6}{'stack s':>9}", flush=True)
    gaps = {k: [] for k in keys}
    for run in args.runs:
        name, first_stage = run.split(".")
        z, h = load_run(name, first_stage, args.cache_dir, args.data_dir)
        ev = np.asarray(z["evaluated"], bool)
        s_train, y_train = np.asarray(z["s_train"], float), np.asarray(z["y_train"])
        parts = {p: (np.asarray(z[f"s_{p}"], float), np.asarray(z[f"y_{p}"])) for p in ("valid", "test")}
        default = MLPR(hierarchy=h, allow_empty=True).fit(s_train, y_train)
        fits = {}
        for lam in lams:
            t0 = time.perf_counter()
            fits[lam] = (Stack(s_train, y_train, h, lam), time.perf_counter() - t0)
        lam = max(lams, key=lambda v: auprc(fits[v][0].predict(parts["valid"][0]), parts["valid"][1], h, ev))
        stack, stack_seconds = fits[lam]
        on_stack = MLPR(hierarchy=h, allow_empty=True).fit(stack.predict(s_train), y_train)
        lam_cv = cross_validated_lam(s_train, y_train, h, lams, ev)
        stack_cv = fits[lam_cv][0]
        score = {}
        for part, (s, y) in parts.items():
            d, v = default.predict_proba(s), stack.predict(s)
            score["default", part] = auprc(d, y, h, ev)
            score["stack", part] = auprc(v, y, h, ev)
            score["on stack", part] = auprc(on_stack.predict_proba(v), y, h, ev)
            flat = stack.calibration.transform(s)
            score["avg flat", part] = auprc(0.5 * d + 0.5 * flat, y, h, ev)
            for w in weights:
                score[w, part] = auprc(w * d + (1 - w) * v, y, h, ev)
            score["avg", part] = score[0.5, part]
            score["avg cv", part] = auprc(0.5 * d + 0.5 * stack_cv.predict(s), y, h, ev)
        picked = max(weights, key=lambda w: score[w, "valid"])
        score["avg picked", "test"] = score[picked, "test"]
        top, top_auprc = best_correction(s_train, y_train, *parts["test"], h, ev)
        for k in keys:
            gaps[k].append(score[k, "test"] - top_auprc)
        print(f"{run:<24}{top:>16}{top_auprc:>12.2f}" + "".join(f"{gaps[k][-1]:>+11.2f}" for k in keys)
              + f"{lam:>6g}{lam_cv:>7g}{picked:>6g}{stack_seconds:>9.1f}", flush=True)
    print_summary(gaps, len(args.runs), 10)


if __name__ == "__main__":
    main()
