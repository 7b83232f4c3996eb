"""Is mLPR-full's low AU(PRC) on the Gene Ontology the model's fault or loopy BP's?

The paper's fixed model (kernel LPR score models, evidence exponent 1) is fitted on
the out-of-fold joint first-stage scores of cellcycle_GO's training rows, as in the
benchmark. On the first ``--objects`` test rows its full-version mLPRs are computed
twice, by the exact sparse junction tree and by loopy BP (the engine the benchmark
used for mLPR-full on the GO sets), and both are scored by the micro AU(PRC) of
their HierRank rankings over the evaluated classes, beside indpt's on the same rows.

Usage (from the repository root)::

    python bench/full_exact_vs_loopy.py --objects 200
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _paths import HMC_DATA, require_data  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cellcycle_GO")
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, default=DATA)
    args = parser.parse_args(argv)

    from hmcpgm import MLPR, hier_rank
    from hmcpgm.datasets import load_hmc_arff
    from hmcpgm.first_stage import default_classifier, fit_first_stage, out_of_fold_scores, predict_scores
    from hmcpgm.inference import mlpr_from_likelihoods
    from hmcpgm.metrics import average_precision

    require_data(args.data_dir, f"{args.dataset}.train.arff", f"{args.dataset}.test.arff")
    train = load_hmc_arff(args.data_dir / f"{args.dataset}.train.arff")
    test = load_hmc_arff(args.data_dir / f"{args.dataset}.test.arff")
    h = train.hierarchy
    s_train = out_of_fold_scores(train.features, train.labels, default_classifier(), seed=0, joint=True,
                                 progress=False)
    fitted = fit_first_stage(train.features, train.labels, default_classifier(), joint=True, progress=False)
    rows = slice(0, args.objects)
    s_test, y_test = predict_scores(fitted, test.features[rows]), test.labels[rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MLPR(hierarchy=h, version="full", score_model="lpr", tempering=None, recalibrate=False,
                     allow_empty=True).fit(s_train, train.labels)
    keep = [c for c, e in zip(h.classes, train.evaluated) if e]
    cols = h.indices(keep)

    def auprc(p):
        r = hier_rank(p, h).restrict(keep)
        return 100 * average_precision(-r.ranks.astype(float), y_test[:, cols], exclude_roots=False)

    L = model.likelihoods(s_test)
    out = {"indpt": (model.lpr(s_test), 0.0)}
    for engine in ("sparse", "loopy"):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[f"full ({engine})"] = (mlpr_from_likelihoods(model.network_, L, version="full", engine=engine),
                                       time.perf_counter() - t0)
    exact = out["full (sparse)"][0]
    print(f"{args.dataset}, first {len(s_test)} test rows, joint first stage, the paper's model (exponent 1):")
    for name, (p, sec) in out.items():
        err = np.abs(p - exact).max()
        print(f"  {name:14s} AU(PRC) {auprc(p):6.2f}%  max |p - exact full| {err:.3g}  ({sec:.1f} s)")


if __name__ == "__main__":
    main()
