"""The argparse parser of the ``hmcpgm`` command: its subcommands, shared options and value types."""

import argparse
import sys

from ..inference import ENGINES
from ..likelihood import SCORE_MODELS
from ..options import PRIORS, VERSIONS
from ..second_stage import CONSISTENCY
from ._check_inference import add_check_inference
from ._commands import (
    command_benchmark,
    command_demo,
    command_example,
    command_fit,
    command_predict,
    command_rank,
)
from ._evaluate import add_evaluate_parser
from ._go import add_evidence_option, add_ontology_options


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``hmcpgm: error: ...`` and status 2."""

    def error(self, message):
        sys.stderr.write(f"hmcpgm: error: {self.prog.removeprefix('hmcpgm ')}: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def _int_at_least(minimum, maximum=None):
    def parse(text):
        want = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum:,}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {want}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {want}, got {value}")
        return value

    return parse


def _seed(text):
    """A random seed: an integer in [0, 2**32 - 1], what numpy and scikit-learn's ``random_state`` take."""
    value = _int_at_least(0)(text)
    if value > 2**32 - 1:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**32 - 1, got {value}")
    return value


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")  # as typed: 1e-400 is 0.0
    return value


def _number_in(low, high, closed_high=False):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (low <= value and (value <= high if closed_high else value < high)):  # got: as typed (1e-400 is 0.0)
            interval = f"[{low}, {high}{']' if closed_high else ')'}"
            raise argparse.ArgumentTypeError(f"expected a number in {interval}, got {text}")
        return value

    return parse


def _auto_weight(text):
    """auto, none (None) or a weight in [0, 1]: --pool and --stack."""
    if text in ("auto", "none"):
        return None if text == "none" else text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected auto, none or a number in [0, 1], got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected auto, none or a number in [0, 1], got {value}")
    return value


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
    from ..scale import scheduler_option  # imported only when --scheduler is given

    return scheduler_option(text)


def build_parser():
    """The argparse parser of the ``hmcpgm`` command (used by the docs too)."""
    from .. import __version__
    from ..applications.clus import FIRST_STAGES

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
    p.add_argument("--n-train", type=_int_at_least(1000), default=50_000,
                   help="training objects, at least 1000 (default 50000)")
    p.add_argument("--n-test", type=_int_at_least(2), default=10_000,
                   help="test objects, half used for validation (default 10000)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--csv", metavar="DIR", help="also write the tables as CSV files into DIR")
    p.set_defaults(run=command_demo)

    p = sub.add_parser("example", help="write example input files (the paper's synthetic model) into a folder",
                       description="Write hierarchy.csv, train_scores.csv, train_labels.csv, new_scores.csv and "
                                   "new_labels.csv, drawn from the paper's synthetic model, into DIR (made if "
                                   "missing; files of these names are replaced).")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--n-train", type=_int_at_least(1000), default=5000,
                   help="training objects, at least 1000 (default 5000)")
    p.add_argument("--n-new", type=_int_at_least(1), default=1000, help="new objects to predict (default 1000)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.set_defaults(run=command_example)

    p = sub.add_parser("fit", parents=[ids, quiet, inference],
                       help="fit the second stage on training scores and labels, save the model",
                       description="Fit the label network and one score model per class. SCORES and LABELS are "
                                   "CSV files whose header names the classes; HIERARCHY is a 'parent,child' edge "
                                   "list. Files are UTF-8; rows are numbered from 1 under the header.")
    p.add_argument("scores", help="training scores CSV (header = class names)")
    p.add_argument("labels", help="training labels CSV (0/1, header = class names), or gene-term annotations "
                                  "(two columns or GAF; closed upward; needs --id-column)")
    p.add_argument("hierarchy", help="hierarchy edge list: one 'parent,child' line per edge, or an OBO file")
    p.add_argument("-o", "--output", required=True, help="where to save the model (.npz)")
    p.add_argument("--score-model", default="auto", choices=SCORE_MODELS,
                   help="how scores become evidence (default auto: per class, logistic on the scores as "
                        "they are unless kernel LPR, isotonic, Platt or pooled has a cross-validated log loss "
                        "lower by more than two standard errors)")
    p.add_argument("--tempering", default="one", choices=("one", "depth", "frequency", "none"),
                   help="evidence strength: one exponent for all classes (default), one per depth or per "
                        "frequency group, fitted by cross-fitting; none = the paper's model (exponent 1)")
    p.add_argument("--consistency", default="auto", choices=("auto", *CONSISTENCY),
                   help="what makes the mLPRs consistent with the hierarchy before ranking: auto (nothing or the max "
                        "constraint, chosen by cross-fitting), or that rule, or a classic correction applied to the "
                        "mLPRs (gpav: the least-squares consistent values)")
    p.add_argument("--pool", default="auto", type=_auto_weight,
                   help="weight of the mLPRs in their average with each class's own isotonic posterior: auto "
                        "(chosen by cross-fitting among 0, 0.25, 0.5, 0.75 and 1; default), none (the mLPRs alone) "
                        "or a number in [0, 1]")
    p.add_argument("--stack", default="auto", type=_auto_weight,
                   help="weight of the neighbour stack (a logistic regression per class on its own and its "
                        "neighbours' calibrated scores) averaged with the values after the pool: auto (chosen by "
                        "cross-fitting among 0, 0.25, 0.5, 0.75 and 1; none for the paper's model; default), none "
                        "or a number in [0, 1]")
    p.add_argument("--prior", default="auto", choices=("auto", *PRIORS),
                   help="prior of each class in nbh's and full's posteriors: the training prevalence with the "
                        "network's Bayes factor, or the network's marginal (the paper's model); auto (default): "
                        "prevalence on a DAG when the fit cross-fits, else network")
    p.add_argument("--no-recalibrate", action="store_true",
                   help="do not fit the shared recalibration map of the mLPRs (which predict applies by default)")
    p.add_argument("--close-labels", action="store_true", help="close labels upward instead of rejecting violations")
    p.add_argument("--allow-empty", action="store_true",
                   help="accept classes without positive (or negative) training labels; their scores carry no evidence")
    p.add_argument("--holdout", nargs=2, metavar=("SCORES", "LABELS"),
                   help="scores and labels of held-out objects (not trained on): refit the recalibration map on "
                        "the final model's own mLPRs there, for more powerful FDR cutoffs")
    p.add_argument("--pseudo-count", type=_number_in(0.0, float("inf")), default=0.5, metavar="C",
                   help="pseudo-count of the CPD estimates (default 0.5; 0 = plain fractions)")
    add_evidence_option(p, "LABELS and --holdout LABELS")
    add_ontology_options(p)
    p.set_defaults(run=command_fit)

    p = sub.add_parser("predict", parents=[ids, quiet, inference, scale],
                       help="compute mLPRs for new scores with a saved model",
                       description="Write the (objects x classes) matrix of recalibrated mLPRs (what 'hmcpgm rank "
                                   "--fdr' needs; --uncalibrated for the mLPRs themselves) as CSV, and with "
                                   "--decisions the 0/1 matrix of the model's decision rule (the recalibrated "
                                   "HierRank block mean of the mLPRs >= --threshold).")
    p.add_argument("model", help="a model saved by 'hmcpgm fit'")
    p.add_argument("scores", help="scores CSV (header = class names)")
    p.add_argument("-o", "--output", required=True, help="mLPR CSV to write")
    p.add_argument("--decisions", metavar="FILE", help="also write the 0/1 decisions as CSV")
    values = p.add_mutually_exclusive_group()
    values.add_argument("--calibrated", action="store_true",
                        help="write the recalibrated mLPRs (the model's shared increasing map), whose mean of "
                             "1 - value over the top of a ranking estimates its FDR, as 'hmcpgm rank --fdr' "
                             "needs: the default (the mLPRs themselves for a model fitted with --no-recalibrate)")
    values.add_argument("--uncalibrated", action="store_true",
                        help="write the mLPRs before recalibration (the paper's values); not for 'rank --fdr'")
    p.add_argument("--threshold", type=_fraction,
                   help="decision threshold on the recalibrated block means (default: the model's, 0.5)")
    p.add_argument("--format", default="csv", choices=("csv", "cafa"),
                   help="csv: the (objects x classes) matrix; cafa: 'target term score' lines (tab-separated, "
                        "for 'hmcpgm evaluate' and the CAFA evaluator)")
    p.set_defaults(run=command_predict)

    p = sub.add_parser("rank", parents=[ids, quiet, scale],
                       help="rank all (object, class) events of a value matrix, optionally with an FDR cutoff",
                       description="Rank the events of VALUES (e.g. mLPRs from 'hmcpgm predict') with HierRank or "
                                   "NaiveSort and write one row per event: rank, object (its id, or its row number "
                                   "from 1), class, value, block mean, and the decision when --fdr is given.")
    p.add_argument("values", help="values CSV (header = class names), higher = more likely")
    p.add_argument("hierarchy", help="hierarchy edge list, an OBO file, or a model saved by 'hmcpgm fit'")
    p.add_argument("-o", "--output", required=True, help="ranking CSV to write")
    p.add_argument("--method", default="hierrank", choices=("hierrank", "naive"))
    p.add_argument("--fdr", type=_fraction, metavar="ALPHA",
                   help="label the top events positive so that the estimated FDR (mean of 1 - value, values "
                        "being probabilities such as the recalibrated mLPRs 'hmcpgm predict' writes) is at most "
                        "ALPHA, in (0, 1)")
    add_ontology_options(p)
    p.set_defaults(run=command_rank)

    p = sub.add_parser("benchmark", parents=[quiet],
                       # nargs="+" would print "TRAIN [VALID] TEST [TRAIN [VALID] TEST ...]": one data set is read
                       usage="%(prog)s [-h] [--quiet] [--json OUT]\n"
                             "                        [--first-stage {joint,classwise}] [--valid-fraction F]\n"
                             "                        [--seed SEED]\n"
                             "                        TRAIN [VALID] TEST",
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
    p.add_argument("--seed", type=_seed, default=0, help="random seed of the splits and fits (default 0)")
    p.set_defaults(run=command_benchmark)

    add_evaluate_parser(sub, _number_in)
    add_check_inference(sub, _int_at_least, _number_in)
    return parser
