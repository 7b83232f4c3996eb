"""The ``hmcpgm`` command line: a thin layer over the public API.

Every command prints ``hmcpgm: error: ...`` on one line and exits with status 2
when its input is wrong; it never prints a traceback for a user's mistake.
Run ``hmcpgm COMMAND --help`` for the options of each command.
"""

import argparse
import sys
import warnings
from pathlib import Path

__all__ = ["main"]

_VERSIONS = ("full", "nbh", "indpt")
_ENGINES = ("auto", "tree", "junction", "sparse", "loopy", "pgmpy", "enumerate")


def _add_demo(sub):
    p = sub.add_parser(
        "demo",
        help="run the paper's synthetic experiment (its sizes; seconds on a laptop)",
        description=(
            "Draw data from the paper's 25-class model, fit mLPRs, rank with NaiveSort and "
            "HierRank, and print the paper's Criterion I and II tables."
        ),
    )
    p.add_argument("--n-train", type=int, default=50_000, help="training objects (default 50000, the paper's)")
    p.add_argument("--n-test", type=int, default=10_000, help="test objects, half used for validation (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--csv", metavar="DIR", help="also write the tables as CSV files into DIR")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_run_demo)


def _add_fit(sub):
    p = sub.add_parser(
        "fit",
        help="fit the second stage on training scores and labels, save the model",
        description=(
            "Fit mLPR score models and the Bayesian network. SCORES and LABELS are CSV files whose "
            "header names the classes; HIERARCHY is a 'parent,child' edge list (CSV or TSV)."
        ),
    )
    p.add_argument("scores", help="training scores CSV (header = class names)")
    p.add_argument("labels", help="training labels CSV (0/1, header = class names)")
    p.add_argument("hierarchy", help="hierarchy edge list: one 'parent,child' line per edge")
    p.add_argument("-o", "--output", required=True, help="where to save the model (.npz)")
    p.add_argument("--score-model", default="lpr", choices=("lpr", "gaussian", "kde", "precision"),
                   help="how scores become evidence (default lpr: kernel-density local precision rate)")
    p.add_argument("--version", default="full", choices=_VERSIONS, help="default mLPR version for predict")
    p.add_argument("--engine", default="auto", choices=_ENGINES)
    p.add_argument("--close-labels", action="store_true", help="close labels upward instead of rejecting violations")
    p.add_argument("--id-column", help="name of an object-identifier column in the CSV files")
    p.set_defaults(run=_run_fit)


def _add_predict(sub):
    p = sub.add_parser(
        "predict",
        help="compute mLPRs for new scores with a saved model",
        description="Write the (objects x classes) mLPR matrix as CSV.",
    )
    p.add_argument("model", help="a model saved by 'hmcpgm fit'")
    p.add_argument("scores", help="scores CSV (header = class names)")
    p.add_argument("-o", "--output", required=True, help="mLPR CSV to write")
    p.add_argument("--version", choices=_VERSIONS, help="mLPR version (default: the model's)")
    p.add_argument("--engine", choices=_ENGINES, help="inference engine (default: the model's)")
    p.add_argument("--id-column", help="name of an object-identifier column in SCORES")
    p.set_defaults(run=_run_predict)


def _add_rank(sub):
    p = sub.add_parser(
        "rank",
        help="rank all (object, class) events of a value matrix, optionally with an FDR cutoff",
        description=(
            "Rank the events of VALUES (e.g. mLPRs from 'hmcpgm predict') with HierRank or NaiveSort "
            "and write one row per event: rank, object, class, value, and the decision when a "
            "cutoff is asked for."
        ),
    )
    p.add_argument("values", help="values CSV (header = class names), higher = more likely")
    p.add_argument("hierarchy", help="hierarchy edge list, or a model saved by 'hmcpgm fit'")
    p.add_argument("-o", "--output", required=True, help="ranking CSV to write")
    p.add_argument("--method", default="hierrank", choices=("hierrank", "naive"))
    p.add_argument(
        "--fdr", type=float, metavar="ALPHA",
        help="label the top events positive so that the estimated FDR (mean of 1 - value, "
        "values being mLPRs) is at most ALPHA",
    )
    p.add_argument("--id-column", help="name of an object-identifier column in VALUES")
    p.set_defaults(run=_run_rank)


def _add_benchmark(sub):
    p = sub.add_parser(
        "benchmark",
        help="run the real-data benchmark on Clus HMC ARFF files (train, valid, test)",
        description=(
            "First-stage classifiers (out-of-fold on TRAIN), the second stage fitted on TRAIN, "
            "cutoffs chosen on VALID, and the evaluation on TEST: micro AU(PRC) over non-root "
            "classes, precision/recall at kappa, F1 and hierarchy violations."
        ),
    )
    p.add_argument("train")
    p.add_argument("valid")
    p.add_argument("test")
    p.add_argument("--json", metavar="OUT", help="also write every number of the table as JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_run_benchmark)


def build_parser():
    """The argparse parser of the ``hmcpgm`` command (used by the docs too)."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="hmcpgm",
        description=(
            "Hierarchical multi-label classification, second stage: mLPRs from a Bayesian "
            "network, HierRank rankings and FDR-controlled decisions."
        ),
    )
    parser.add_argument("--version", action="version", version=f"hmcpgm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in (_add_demo, _add_fit, _add_predict, _add_rank, _add_benchmark):
        add(sub)
    return parser


# ---------------------------------------------------------------------- commands
def _run_demo(args):
    from .experiment import format_tables, synthetic_experiment

    result = synthetic_experiment(
        n_train=args.n_train, n_test=args.n_test, seed=args.seed, progress=not args.quiet
    )
    print(format_tables(result))
    if args.csv:
        for path in result.to_csv(args.csv):
            print(f"wrote {path}")


def _run_fit(args):
    from .estimator import MLPR
    from .io import read_hierarchy, read_matrix
    from .persist import save_model

    hierarchy = read_hierarchy(args.hierarchy)
    _, scores = read_matrix(args.scores, hierarchy, "scores", id_column=args.id_column)
    _, labels = read_matrix(args.labels, hierarchy, "labels", id_column=args.id_column)
    if len(scores) != len(labels):
        raise _user_error(f"scores has {len(scores)} rows but labels has {len(labels)}")
    model = MLPR(
        version=args.version, score_model=args.score_model, engine=args.engine,
        close_labels=args.close_labels,
    ).fit(scores, labels, hierarchy)
    save_model(model, args.output)
    print(f"fitted on {len(scores)} objects x {hierarchy.n_classes} classes; saved {args.output}")


def _run_predict(args):
    from .io import read_matrix, write_matrix
    from .persist import load_model

    model = load_model(args.model)
    if args.version:
        model.set_params(version=args.version)
    if args.engine:
        model.set_params(engine=args.engine)
    ids, scores = read_matrix(args.scores, model.hierarchy_, "scores", id_column=args.id_column)
    mlpr = model.predict_proba(scores)
    write_matrix(args.output, mlpr, model.hierarchy_, ids=ids, id_column=args.id_column or "id")
    print(f"wrote mLPRs of {len(mlpr)} objects to {args.output}")


def _load_hierarchy_or_model(path):
    from .io import read_hierarchy
    from .persist import is_model_file, load_model

    if is_model_file(path):
        return load_model(path).hierarchy_
    return read_hierarchy(path)


def _run_rank(args):
    import numpy as np
    import pandas as pd

    from .decision import bayes_cutoff
    from .io import read_matrix
    from .ranking import hier_rank, naive_sort

    hierarchy = _load_hierarchy_or_model(args.hierarchy)
    ids, values = read_matrix(args.values, hierarchy, "values", id_column=args.id_column)
    n_classes = hierarchy.n_classes
    if args.method == "hierrank":
        order, _, block_mean = hier_rank(values, hierarchy, return_blocks=True)
    else:
        order = naive_sort(values, hierarchy)
        block_mean = None
    objects, classes = np.divmod(order, n_classes)
    table = {
        "rank": np.arange(1, len(order) + 1),
        args.id_column or "object": np.asarray(ids)[objects],
        "class": np.asarray([str(c) for c in hierarchy.classes], dtype=object)[classes],
        "value": values.ravel()[order],
    }
    if block_mean is not None:
        table["block_mean"] = np.asarray(block_mean).ravel()[order]
    if args.fdr is not None:
        if not 0 < args.fdr < 1:
            raise _user_error(f"--fdr must be in (0, 1), got {args.fdr}")
        if values.min() < 0 or values.max() > 1:
            raise _user_error("--fdr needs values that are probabilities (mLPRs in [0, 1])")
        cut = bayes_cutoff(order, values, rule="fdr", alpha=args.fdr)
        table["positive"] = (np.arange(len(order)) < cut.rank).astype(int)
        print(f"{cut.rank} of {len(order)} events called positive at estimated FDR <= {args.fdr}")
    pd.DataFrame(table).to_csv(args.output, index=False)
    print(f"wrote the ranking of {len(order)} events to {args.output}")


def _run_benchmark(args):
    import json

    from .benchmark import benchmark_arff, format_benchmark

    result = benchmark_arff(args.train, args.valid, args.test, seed=args.seed, progress=not args.quiet)
    print(format_benchmark(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json}")


class _UserError(Exception):
    pass


def _user_error(message):
    return _UserError(message)


def main(argv=None):
    """Entry point of the ``hmcpgm`` command; returns the exit status."""
    from .exceptions import HmcpgmError

    parser = build_parser()
    args = parser.parse_args(argv)
    _quiet_pgmpy()
    try:
        with warnings.catch_warnings():  # restores the warning hooks afterwards
            warnings.showwarning = _show_warning  # one line each, no source echo
            args.run(args)
    except (HmcpgmError, _UserError, OSError) as exc:  # OSError: missing files, unwritable outputs
        print(f"hmcpgm: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hmcpgm: interrupted", file=sys.stderr)
        return 130
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"hmcpgm: warning: {message}", file=sys.stderr)


def _quiet_pgmpy():
    import logging

    logging.getLogger("pgmpy").setLevel(logging.ERROR)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
