"""The ``hmcpgm`` command line: a thin layer over the public API.

Every failure a user can cause prints one line ``hmcpgm: error: ...`` and exits
with status 2; outputs and option values are checked before any work starts.
Warnings print as ``hmcpgm: warning: ...`` lines after the progress bars. Run
``hmcpgm COMMAND --help`` for the options of each command.
"""

import argparse
import os
import re
import sys
import warnings
from pathlib import Path

from .options import ENGINES, SCORE_MODELS, VERSIONS

__all__ = ["main", "build_parser"]

# Python-side advice in library messages, said the command-line way.
_CLI_ADVICE = [
    (r"drop those classes \(Hierarchy\.subgraph\) or pass allow_empty=True", "drop those classes or pass --allow-empty"),
    (r"pass allow_empty=True", "pass --allow-empty"),
    (r"Close the labels upward with Hierarchy\.close_labels", "Close the labels upward with --close-labels"),
    (r"Hierarchy\.close_labels", "--close-labels"),
    (r"max_clique=(\d+)", r"--max-clique \1"),
    (r"\bmax_clique\b", "--max-clique"),
    (r"max_iter=(\d+)", r"--max-iter \1"),
    (r"raise max_iter or damping", "raise --max-iter or --damping"),
    (r"engine='(\w+)'", r"--engine \1"),
    (r"pseudo_count=(\d+)", r"--pseudo-count \1"),
    (r"pass pseudo_count > 0", "pass --pseudo-count > 0"),
    (r"^fdr needs", "--fdr needs"),
]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``hmcpgm: error: ...`` and status 2."""

    def error(self, message):
        sys.stderr.write(f"hmcpgm: error: {self.prog.removeprefix('hmcpgm ')}: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def _int_at_least(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
        return value

    return parse


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {value}")
    return value


def _number_in(low, high, closed_high=False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value and (value <= high if closed_high else value < high)):
            raise argparse.ArgumentTypeError(f"expected a number in [{low}, {high}{']' if closed_high else ')'}, got {value}")
        return value

    return parse


# ---------------------------------------------------------------------- shared options
def _shared_parents():
    ids = _Parser(add_help=False)
    ids.add_argument("--id-column", metavar="NAME",
                     help="a column of object identifiers: rows are matched by id across files and ids are "
                          "written to every output")
    quiet = _Parser(add_help=False)
    quiet.add_argument("--quiet", action="store_true", help="no progress bars")
    inference = _Parser(add_help=False)
    group = inference.add_argument_group("inference")
    group.add_argument("--mlpr-version", choices=("auto", *VERSIONS),
                       help="mLPR version (fit: default auto, chosen by cross-fitting on the training rows; "
                            "predict: the model's)")
    group.add_argument("--engine", choices=ENGINES, help="inference engine (default: auto)")
    group.add_argument("--budget-gb", type=_number_in(0.001, float("inf")), metavar="G",
                       help="memory budget of the exact engines in GiB (default 4): beyond it, auto falls "
                            "back to loopy BP with a warning")
    group.add_argument("--max-clique", type=_int_at_least(1), metavar="N",
                       help="junction tree: the largest clique allowed (default 20)")
    group.add_argument("--damping", type=_number_in(0.0, 1.0), metavar="D",
                       help="loopy BP: weight of the previous message, in [0, 1) (default 0)")
    group.add_argument("--max-iter", type=_int_at_least(1), metavar="N", help="loopy BP: iteration cap (default 200)")
    scale = _Parser(add_help=False)
    group = scale.add_argument_group("at scale (CSV or Parquet files by suffix; see docs/scale.md)")
    group.add_argument("--chunk-size", type=_int_at_least(1), metavar="N",
                       help="read, compute and write N objects at a time (bounded memory; same results)")
    group.add_argument("--scheduler", type=_scheduler, metavar="ADDRESS",
                       help="run the chunks on dask: 'local' (a local cluster) or a scheduler address "
                            "(tcp://host:8786); needs --chunk-size and pip install \"hmcpgm[scale]\"")
    return ids, quiet, inference, scale


def _scheduler(text):
    from .scale import scheduler_option  # imported only when --scheduler is given

    return scheduler_option(text)


def _scale_requested(args, *paths):
    """Whether a command goes through hmcpgm.scale: --chunk-size, or a Parquet file."""
    from .io import PARQUET

    if args.scheduler and args.chunk_size is None:
        raise _UserError("--scheduler needs --chunk-size: the objects go to the workers in chunks of that many")
    return args.chunk_size is not None or any(p and Path(p).suffix.lower() in PARQUET for p in paths)


def _inference_options(args):
    opts = {}
    if args.budget_gb is not None:
        opts["budget_bytes"] = int(args.budget_gb * 2**30)
    if args.max_clique is not None:
        opts["max_clique"] = args.max_clique
    if args.damping is not None:
        opts["damping"] = args.damping
    if args.max_iter is not None:
        opts["max_iter"] = args.max_iter
    return opts


def build_parser():
    """The argparse parser of the ``hmcpgm`` command (used by the docs too)."""
    from . import __version__
    from .applications.clus import FIRST_STAGES

    parser = _Parser(
        prog="hmcpgm",
        description=(
            "Hierarchical multi-label classification, second stage: mLPRs from a Bayesian "
            "network, HierRank rankings and FDR-controlled decisions."
        ),
    )
    parser.add_argument("--version", action="version", version=f"hmcpgm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    ids, quiet, inference, scale = _shared_parents()

    p = sub.add_parser("demo", parents=[quiet], help="run the paper's synthetic experiment and print its tables",
                       description="Draw data from the paper's 25-class model, fit mLPRs, rank with NaiveSort and "
                                   "HierRank, and print the paper's Criterion I and II tables with legends.")
    p.add_argument("--n-train", type=_int_at_least(200), default=50_000, help="training objects (default 50000)")
    p.add_argument("--n-test", type=_int_at_least(2), default=10_000,
                   help="test objects, half used for validation (default 10000)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="random seed (default 0)")
    p.add_argument("--csv", metavar="DIR", help="also write the tables as CSV files into DIR")
    p.set_defaults(run=_run_demo)

    p = sub.add_parser("example", help="write example input files (the paper's synthetic model) into a folder",
                       description="Write hierarchy.csv, train_scores.csv, train_labels.csv, new_scores.csv and "
                                   "new_labels.csv, drawn from the paper's synthetic model, into DIR (made if "
                                   "missing; files of these names are replaced).")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--n-train", type=_int_at_least(200), default=5000, help="training objects (default 5000)")
    p.add_argument("--n-new", type=_int_at_least(1), default=1000, help="new objects to predict (default 1000)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="random seed (default 0)")
    p.set_defaults(run=_run_example)

    p = sub.add_parser("fit", parents=[ids, quiet, inference],
                       help="fit the second stage on training scores and labels, save the model",
                       description="Fit the label network and one score model per class. SCORES and LABELS are "
                                   "CSV files whose header names the classes; HIERARCHY is a 'parent,child' edge "
                                   "list. Files are UTF-8; rows are numbered from 1 under the header.")
    p.add_argument("scores", help="training scores CSV (header = class names)")
    p.add_argument("labels", help="training labels CSV (0/1, header = class names)")
    p.add_argument("hierarchy", help="hierarchy edge list: one 'parent,child' line per edge")
    p.add_argument("-o", "--output", required=True, help="where to save the model (.npz)")
    p.add_argument("--score-model", default="auto", choices=SCORE_MODELS,
                   help="how scores become evidence (default auto: per class, the best of kernel LPR, "
                        "isotonic, Platt and pooled by cross-validated log loss)")
    p.add_argument("--tempering", default="one", choices=("one", "depth", "frequency", "none"),
                   help="evidence strength: one exponent for all classes (default), one per depth or per "
                        "frequency group, fitted by cross-fitting; none = the paper's model (exponent 1)")
    p.add_argument("--no-recalibrate", action="store_true",
                   help="do not fit the shared recalibration map of the mLPRs (used by predict --calibrated)")
    p.add_argument("--close-labels", action="store_true", help="close labels upward instead of rejecting violations")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept classes without positive (or negative) training labels; their scores carry no evidence")
    p.add_argument("--pseudo-count", type=_number_in(0.0, float("inf")), default=0.5, metavar="C",
                   help="pseudo-count of the CPD estimates (default 0.5; 0 = plain fractions)")
    p.set_defaults(run=_run_fit)

    p = sub.add_parser("predict", parents=[ids, quiet, inference, scale],
                       help="compute mLPRs for new scores with a saved model",
                       description="Write the (objects x classes) mLPR matrix as CSV, and with --decisions the 0/1 "
                                   "matrix of the model's decision rule (HierRank block mean >= --threshold).")
    p.add_argument("model", help="a model saved by 'hmcpgm fit'")
    p.add_argument("scores", help="scores CSV (header = class names)")
    p.add_argument("-o", "--output", required=True, help="mLPR CSV to write")
    p.add_argument("--decisions", metavar="FILE", help="also write the 0/1 decisions as CSV")
    p.add_argument("--calibrated", action="store_true",
                   help="write the recalibrated mLPRs (the model's shared increasing map), whose mean of "
                        "1 - value over the top of a ranking estimates its FDR (for 'hmcpgm rank --fdr')")
    p.add_argument("--threshold", type=_fraction, help="decision threshold on block means (default: the model's, 0.5)")
    p.set_defaults(run=_run_predict)

    p = sub.add_parser("rank", parents=[ids, quiet, scale],
                       help="rank all (object, class) events of a value matrix, optionally with an FDR cutoff",
                       description="Rank the events of VALUES (e.g. mLPRs from 'hmcpgm predict') with HierRank or "
                                   "NaiveSort and write one row per event: rank, object (its id, or its row number "
                                   "from 1), class, value, block mean, and the decision when --fdr is given.")
    p.add_argument("values", help="values CSV (header = class names), higher = more likely")
    p.add_argument("hierarchy", help="hierarchy edge list, or a model saved by 'hmcpgm fit'")
    p.add_argument("-o", "--output", required=True, help="ranking CSV to write")
    p.add_argument("--method", default="hierrank", choices=("hierrank", "naive"))
    p.add_argument("--fdr", type=_fraction, metavar="ALPHA",
                   help="label the top events positive so that the estimated FDR (mean of 1 - value, values "
                        "being probabilities such as 'hmcpgm predict --calibrated' writes) is at most ALPHA, "
                        "in (0, 1)")
    p.set_defaults(run=_run_rank)

    p = sub.add_parser("benchmark", parents=[quiet],
                       help="run the real-data benchmark on Clus HMC ARFF files (train, [valid,] test)",
                       description="First-stage classifiers (out-of-fold on TRAIN), the second stage fitted on "
                                   "TRAIN, cutoffs chosen on VALID (without it, a seeded fraction of TRAIN), and "
                                   "the evaluation on TEST: micro AU(PRC) over non-root classes, precision/recall "
                                   "at kappa, F1, the Bayesian FDR cutoff's calls and realised FDP, violations.")
    p.add_argument("files", nargs="+", metavar="TRAIN [VALID] TEST",
                   help="two ARFF files (train, test) or three (train, valid, test)")
    p.add_argument("--json", metavar="OUT", help="also write every number of the table as JSON")
    p.add_argument("--first-stage", default="joint", choices=FIRST_STAGES,
                   help="joint ridge regression on all classes (default) or one logistic regression per class")
    p.add_argument("--valid-fraction", type=_fraction, default=0.3, metavar="F",
                   help="without VALID: the fraction of TRAIN rows held out for validation (default 0.3)")
    p.add_argument("--seed", type=_int_at_least(0), default=0)
    p.set_defaults(run=_run_benchmark)
    return parser


# ---------------------------------------------------------------------- progress
class _Steps:
    """A progress bar over named steps (tqdm on stderr; off with --quiet or when not a terminal)."""

    def __init__(self, args, total, desc):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, disable=True if args.quiet else None, leave=False, file=sys.stderr)

    def step(self, what, n=1):
        self.bar.set_postfix_str(what, refresh=False)
        self.bar.update(n)

    def close(self):
        self.bar.close()


# ---------------------------------------------------------------------- commands
def _run_demo(args):
    from .applications.paper import format_tables, synthetic_experiment
    from .io import check_output

    if args.csv:
        folder = Path(args.csv)
        if folder.exists() and not folder.is_dir():
            raise _UserError(f"--csv {args.csv!r} is a file; give a folder for the tables")
        check_output(folder / "precision.csv", "--csv")
    result = synthetic_experiment(n_train=args.n_train, n_test=args.n_test, seed=args.seed, progress=not args.quiet)
    print(format_tables(result))
    if args.csv:
        for path in result.to_csv(args.csv):
            print(f"wrote {path}")


def _run_example(args):
    from .datasets import make_paper_synthetic
    from .io import write_hierarchy, write_matrix

    folder = Path(args.dir)
    if folder.exists() and not folder.is_dir():
        raise _UserError(f"DIR {args.dir!r} is a file; give a folder")
    data = make_paper_synthetic(n_train=args.n_train, n_test=args.n_new, seed=args.seed)
    folder.mkdir(parents=True, exist_ok=True)
    h = data.hierarchy
    write_hierarchy(h, folder / "hierarchy.csv")
    write_matrix(folder / "train_scores.csv", data.train_scores, h)
    write_matrix(folder / "train_labels.csv", data.train_labels, h)
    write_matrix(folder / "new_scores.csv", data.test_scores, h)
    write_matrix(folder / "new_labels.csv", data.test_labels, h)
    print(f"wrote hierarchy.csv, train_scores.csv, train_labels.csv ({args.n_train} objects), new_scores.csv "
          f"and new_labels.csv ({args.n_new} objects) of {h.n_classes} classes into {folder}")


def _run_fit(args):
    import numpy as np

    from .estimator import MLPR
    from .io import align_by_id, check_output, read_hierarchy, read_matrix
    from .persist import save_model

    check_output(args.output, "-o")
    steps = _Steps(args, 4, "fit")
    hierarchy = read_hierarchy(args.hierarchy)
    ids, scores = read_matrix(args.scores, hierarchy, "scores", id_column=args.id_column)
    label_ids, labels = read_matrix(args.labels, hierarchy, "labels", id_column=args.id_column, binary=True)
    steps.step("read")
    if ids is not None:
        labels = labels[align_by_id(label_ids, ids, "labels file", "scores file")]
    elif len(scores) != len(labels):
        raise _UserError(
            f"scores has {len(scores)} rows but labels has {len(labels)}; rows are paired by position "
            "(pass --id-column to pair them by id)"
        )
    if not args.close_labels:
        where = (lambda r: f"row {r + 1} (line {r + 2})") if ids is None else (lambda r: f"the object with id {ids[r]!r}")
        hierarchy.check_labels(labels, f"the labels of {args.labels}", where=where)
    model = MLPR(
        hierarchy=hierarchy, version=args.mlpr_version or "auto", score_model=args.score_model,
        tempering=None if args.tempering == "none" else args.tempering, recalibrate=not args.no_recalibrate,
        engine=args.engine or "auto", close_labels=args.close_labels, allow_empty=args.allow_empty,
        pseudo_count=args.pseudo_count, inference_options=_inference_options(args) or None,
    ).fit(scores, labels)
    steps.step("fitted", 2)
    save_model(model, args.output)
    steps.step("saved")
    steps.close()
    chosen = f"version {model.version_}"
    if model.cv_results_ is not None:
        chosen += f" (evidence exponent {'/'.join(f'{a:.2f}' for a in np.unique(model.tempering_))})"
    print(f"fitted on {len(scores)} objects x {hierarchy.n_classes} classes, {chosen}; saved {args.output}")


def _run_predict(args):
    import numpy as np

    from .io import check_output, read_matrix, write_matrix
    from .persist import load_model

    check_output(args.output, "-o")
    if args.decisions:
        check_output(args.decisions, "--decisions")
    at_scale = _scale_requested(args, args.scores, args.output, args.decisions)
    model = load_model(args.model)
    if args.mlpr_version and args.mlpr_version != model.version_:
        if args.mlpr_version == "auto" or model.cv_results_ is not None:
            raise _UserError(
                f"--mlpr-version {args.mlpr_version}: the model in {args.model} was fitted for version "
                f"{model.version_} (its evidence exponents and recalibration were cross-fitted for it); "
                f"refit it with 'hmcpgm fit --mlpr-version {args.mlpr_version}'"
            )
        model.set_params(version=args.mlpr_version)  # the paper's model: any version, same fit
        model.version_ = args.mlpr_version
    if args.engine:
        model.set_params(engine=args.engine)
    if _inference_options(args):
        model.set_params(inference_options={**(model.inference_options or {}), **_inference_options(args)})
    if args.threshold is not None:
        model.set_params(threshold=args.threshold)
    if at_scale:
        from .scale import predict_files

        if args.calibrated:
            raise _UserError("--calibrated is not available with --chunk-size or --scheduler yet; "
                             "run predict without them")
        n, positives = predict_files(model, args.scores, args.output, decisions=args.decisions,
                                     id_column=args.id_column, chunk_size=args.chunk_size,
                                     scheduler=args.scheduler, progress=not args.quiet)
        return _predicted(model, args, n, positives)
    ids, scores = read_matrix(args.scores, model.hierarchy_, "scores", id_column=args.id_column)
    chunk = 2000
    steps = _Steps(args, len(scores), "predict")
    parts, decisions = [], []
    for start in range(0, len(scores), chunk):
        part = (model.calibrated_proba if args.calibrated else model.predict_proba)(scores[start:start + chunk])
        parts.append(part)
        if args.decisions:
            decisions.append(model.predict(scores[start:start + chunk]))
        steps.step("objects", len(part))
    steps.close()
    k = model.hierarchy_.n_classes
    mlpr = np.concatenate(parts) if parts else np.zeros((0, k))
    id_column = args.id_column or "id"
    write_matrix(args.output, mlpr, model.hierarchy_, ids=ids, id_column=id_column)
    if args.decisions:
        d = np.concatenate(decisions) if decisions else np.zeros((0, k), dtype=np.int8)
        write_matrix(args.decisions, d, model.hierarchy_, ids=ids, id_column=id_column)
    _predicted(model, args, len(mlpr), int(d.sum()) if args.decisions else None)


def _predicted(model, args, n, positives):
    engine, exact = model.engine_in_use()
    how = f"{model.version_} version" if engine == "indpt" else \
        f"{model.version_} version, {engine} engine, {'exact' if exact else 'approximate'}"
    what = "recalibrated mLPRs" if getattr(args, "calibrated", False) else "mLPRs"
    print(f"wrote {what} of {n} objects ({how}) to {args.output}")
    if args.decisions:
        print(f"wrote {positives} positive decisions (block mean >= {model.threshold}) to {args.decisions}")


def _load_hierarchy_or_model(path):
    from .io import read_hierarchy
    from .persist import is_model_file, load_model

    if is_model_file(path):
        return load_model(path).hierarchy_
    return read_hierarchy(path)


def _run_rank(args):
    import numpy as np

    from .decision import bayes_cutoff
    from .io import check_output, read_matrix
    from .ranking import Ranking, hier_rank, naive_sort

    check_output(args.output, "-o")
    at_scale = _scale_requested(args, args.values, args.output)
    hierarchy = _load_hierarchy_or_model(args.hierarchy)
    if at_scale:
        from .scale import rank_files

        n, cut = rank_files(args.values, hierarchy, args.output, fdr=args.fdr, method=args.method,
                            id_column=args.id_column, chunk_size=args.chunk_size, scheduler=args.scheduler,
                            progress=not args.quiet)
        if cut is not None:
            print(f"{cut.rank} of {n} events called positive at estimated FDR <= {args.fdr}")
        print(f"wrote the ranking of {n} events to {args.output}")
        return
    steps = _Steps(args, 3, "rank")
    ids, values = read_matrix(args.values, hierarchy, "values", id_column=args.id_column)
    if args.fdr is not None and values.size and (values.min() < 0 or values.max() > 1):
        raise _UserError(f"--fdr needs values that are probabilities (mLPRs in [0, 1]); {args.values} holds values "
                         f"from {values.min():.3g} to {values.max():.3g}")
    steps.step("read")
    ranked = (hier_rank if args.method == "hierrank" else naive_sort)(values, hierarchy)
    index = ids if ids is not None else np.arange(1, len(values) + 1)
    ranked = Ranking(ranked.order, ranked.n_objects, hierarchy.classes, block_means=ranked.block_means,
                     method=ranked.method, index=index)
    steps.step("ranked")
    table = ranked.to_frame(values).rename(columns={"object": args.id_column or "object"})
    if args.fdr is not None:
        cut = bayes_cutoff(ranked, values, rule="fdr", alpha=args.fdr)
        table["positive"] = (table["rank"] <= cut.rank).astype(int)
        print(f"{cut.rank} of {len(table)} events called positive at estimated FDR <= {args.fdr}")
    table.to_csv(args.output, index=False)
    steps.step("written")
    steps.close()
    print(f"wrote the ranking of {len(table)} events to {args.output}")


def _run_benchmark(args):
    import json

    from .applications.clus import format_benchmark, run_benchmark
    from .io import check_output

    if len(args.files) not in (2, 3):
        raise _UserError(f"benchmark takes TRAIN [VALID] TEST: two or three ARFF files, got {len(args.files)}")
    if args.json:
        check_output(args.json, "--json")
    train, *middle, test = args.files
    result = run_benchmark(
        train, test, middle[0] if middle else None, first_stage=args.first_stage,
        valid_fraction=args.valid_fraction, seed=args.seed, progress=not args.quiet,
    )
    print(format_benchmark(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json}")


# ---------------------------------------------------------------------- entry point
class _UserError(Exception):
    pass


def _for_the_command_line(message):
    for pattern, replacement in _CLI_ADVICE:
        message = re.sub(pattern, replacement, message)
    return " ".join(str(message).split())  # one line


def main(argv=None):
    """Entry point of the ``hmcpgm`` command; returns the exit status."""
    from .exceptions import HmcpgmError

    args = build_parser().parse_args(argv)
    status = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # record each warning once, print them after the progress bars
        try:
            args.run(args)
        except (HmcpgmError, _UserError, OSError) as exc:  # OSError: missing files, unwritable outputs
            if isinstance(exc, BrokenPipeError):
                return _closed_pipe()
            system = isinstance(exc, OSError) and exc.strerror and exc.filename  # raised by the OS, not by hmcpgm
            message = f"{exc.strerror}: {exc.filename!r}" if system else str(exc)
            print(f"hmcpgm: error: {_for_the_command_line(message)}", file=sys.stderr)
            status = 2
        except KeyboardInterrupt:
            print("hmcpgm: interrupted", file=sys.stderr)
            return 130
    try:
        for w in caught:
            print(f"hmcpgm: warning: {_for_the_command_line(str(w.message))}", file=sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:
        return _closed_pipe()
    return status


def _closed_pipe():
    """The reader of our output went away (``hmcpgm demo | head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
