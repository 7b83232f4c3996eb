"""The neighbour stack where the network is the true model: the paper's synthetic data (issue 19).

On data drawn from the label network with the paper's score distributions, full's
mLPRs are the Bayes posteriors and a stack (a logistic regression of each label on
its own and its neighbours' calibrated scores) can only approximate them. Per seed,
this fits ``MLPR(stack=v)`` on ``make_paper_synthetic``'s training rows for a fixed
``v`` in 0 (no stack), 0.25, 0.5 and 1, and the default ``stack="auto"`` (the weight
chosen by cross-fitting on the training rows), and prints the micro AU(PRC) (%) of
each one's HierRank ranking on the test rows, with the weight the default chose.

Usage (from the repository root)::

    python bench/stack_synthetic.py                # seeds 0, 1, 2; 5000 training and 5000 test rows
    python bench/stack_synthetic.py --seeds 0 --n 2000
"""

import argparse
import warnings

import numpy as np
from version_transfer import auprc  # bench/ is on sys.path when a script runs

FIXED = (None, 0.25, 0.5, 1.0)


def main():
    from hmcpgm import MLPR
    from hmcpgm.datasets import make_paper_synthetic

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds of the synthetic data")
    parser.add_argument("--n", type=int, default=5000, help="training rows and test rows")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'seed':<6}" + "".join(f"{'stack ' + str(v or 0):>12}" for v in FIXED) + f"{'auto':>10}{'chose':>7}")
    for seed in (int(s) for s in args.seeds.split(",")):
        d = make_paper_synthetic(n_train=args.n, n_test=args.n, seed=seed)
        every = np.ones(d.hierarchy.n_classes, bool)
        scores = []
        for v in (*FIXED, "auto"):
            model = MLPR(hierarchy=d.hierarchy, stack=v).fit(d.train_scores, d.train_labels)
            scores.append(auprc(model.predict_proba(d.test_scores), d.test_labels, d.hierarchy, every))
        print(f"{seed:<6}" + "".join(f"{a:>12.2f}" for a in scores[:-1]) + f"{scores[-1]:>10.2f}"
              + f"{model.stack_weight_:>7g}", flush=True)


if __name__ == "__main__":
    main()
