"""The ``hmcpgm evaluate`` command: CAFA's protein-centric evaluation of prediction files, per namespace.

It reads the files the CAFA evaluator (``cafaeval``) reads, an ontology, predictions
(``target term score`` lines, one file or a folder of files) and a ground truth
(``target term`` lines or GAF), and prints what cafaeval computes: Fmax, Smin and
weighted Fmax with their thresholds and coverage, plus the micro AU(PRC) of the
propagated predictions over the same terms.
"""

import json
from pathlib import Path

from ..metrics._cafa import MIN_THRESHOLD_STEP
from ._go import add_evidence_option

__all__ = ["add_evaluate_parser", "command_evaluate", "evaluate_files", "format_evaluation", "read_ia"]


def read_ia(path):
    """Information accretion from a ``term ia`` file (cafaeval's ``-ia`` format): a dict term -> float."""
    from .._textfile import utf8_text
    from ..exceptions import InputError

    ia = {}
    with utf8_text(path, "IA file") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise InputError(f"IA file {path}, line {number}: expected 'term ia', got {line.strip()!r}")
            try:
                ia[fields[0]] = float(fields[1])
            except ValueError:
                raise InputError(f"IA file {path}, line {number}: {fields[1]!r} is not a number") from None
    return ia


def evaluate_files(ontology, predictions, ground_truth, *, ia=None, exclude_roots=False, normalization="cafa",
                   threshold_step=0.01, relations=("is_a", "part_of"), evidence=None, skipped=None, progress=None):
    """CAFA metrics of one predictions file against a ground truth, per namespace.

    Parameters
    ----------
    ontology : str, Path or Ontology
        An OBO file (one evaluation per namespace) or an edge list, or the ontology read
        from one (:func:`hmcpgm.ontology.read_ontology`; a folder of predictions reads it once).
    predictions : str or Path
        ``target term score`` lines.
    ground_truth : str or Path
        ``target term`` lines or a GAF file; closed upward along the ontology.
    ia : str, Path or dict, optional
        Information accretion (a ``term ia`` file or a dict); default: estimated from
        the ground truth (:func:`hmcpgm.metrics.information_accretion`).
    exclude_roots, normalization, threshold_step
        As in :func:`hmcpgm.metrics.cafa_curve`.
    relations : collection of str
        The OBO relations that make a term a child of another.
    evidence : str or collection of str, optional
        Keep only the ground truth's GAF lines of these evidence codes or named sets
        (e.g. ``"cafa"``; :func:`hmcpgm.ontology.evidence_codes`); None keeps every line.
    skipped : dict, optional
        Receives, for each namespace with ground truth that is not evaluated, why:
        ``"no prediction"`` (no line names one of its targets with one of its terms)
        or ``"below the thresholds"`` (no score reaches the first threshold).
    progress : callable, optional
        Called with the name of each step as it starts (the ground truth, the
        predictions, each namespace's metrics).

    Returns
    -------
    dict
        ``{namespace: {"n_targets", "fmax", "fmax_threshold", "fmax_coverage", "smin",
        "smin_threshold", "weighted_fmax", "weighted_fmax_threshold", "auprc"}}`` for
        each namespace with ground truth and a prediction at the first threshold or above
        (``auprc`` NaN where no positive is evaluated, e.g. a ground truth of roots alone
        with ``exclude_roots``).
    """
    from ..exceptions import LabelError
    from ..metrics import cafa_metrics, propagated_auprc
    from ..ontology import Ontology, read_annotations_per_namespace, read_cafa_predictions_per_namespace, read_ontology

    onto = ontology if isinstance(ontology, Ontology) else read_ontology(ontology, relations)
    if ia is not None and not isinstance(ia, dict):
        ia = read_ia(ia)
    step = progress or (lambda what: None)
    step("ground truth")
    annotated = read_annotations_per_namespace(ground_truth, onto, evidence=evidence)
    annotated = {ns: (targets, y) for ns, (targets, y) in annotated.items() if len(targets)}
    step("predictions")
    scores = read_cafa_predictions_per_namespace(predictions, onto, {ns: t for ns, (t, _) in annotated.items()})
    results = {}
    for ns, (targets, y) in annotated.items():
        step(ns)
        h, s = onto.hierarchy(ns), scores[ns]
        if not s.any():
            if skipped is not None:
                skipped[ns] = "no prediction"
            continue
        weights = None if ia is None else {t: ia.get(t, 0.0) for t in h.classes}  # cafaeval: a term without IA has 0
        metrics = cafa_metrics(s, y, h, ia=weights, exclude_roots=exclude_roots, normalization=normalization,
                               threshold_step=threshold_step)  # without ia: estimated from the ground truth
        if metrics["fmax_coverage"] == 0:  # no score reaches a threshold: cafaeval keeps no row of the namespace
            if skipped is not None:
                skipped[ns] = "below the thresholds"
            continue
        try:
            auprc = propagated_auprc(s, y, h, exclude_roots=exclude_roots)
        except LabelError:  # no positive left (a ground truth of roots only, roots excluded): AP undefined
            auprc = float("nan")
        results[ns] = {"n_targets": len(targets), **metrics, "auprc": auprc}
    return results


def format_evaluation(results, threshold_step=0.01):
    """The table ``hmcpgm evaluate`` prints: one line per namespace.

    Thresholds get the decimals of ``threshold_step`` (at least two), so that a finer grid's
    threshold is not printed as its neighbour: 0.125 on a grid of 0.005, not 0.12.
    """
    import numpy as np

    decimals = max(2, len(np.format_float_positional(float(threshold_step)).partition(".")[2]))
    width = decimals + 3
    tau = lambda value: f"{value:>{width}.{decimals}f}"  # noqa: E731
    head = f"{'namespace':<22} {'targets':>7} {'Fmax':>6} {'tau':>{width}} {'cov':>5} {'Smin':>7} " \
           f"{'tau':>{width}} {'wFmax':>6} {'tau':>{width}} {'AU(PRC)':>7}"
    lines = [head]
    for ns, r in results.items():
        lines.append(f"{ns:<22} {r['n_targets']:>7} {r['fmax']:>6.3f} {tau(r['fmax_threshold'])} "
                     f"{r['fmax_coverage']:>5.2f} {r['smin']:>7.3f} {tau(r['smin_threshold'])} "
                     f"{r['weighted_fmax']:>6.3f} {tau(r['weighted_fmax_threshold'])} {r['auprc']:>7.3f}")
    return "\n".join(lines)


def command_evaluate(args):
    """Run ``hmcpgm evaluate`` (see :func:`add_evaluate_parser`)."""
    from .._atomic import same_file
    from ..exceptions import HierarchyError, InputError
    from ..io import check_output
    from ..ontology import read_ontology
    from ._commands import Steps, UserError

    if args.json:
        check_output(args.json, "--json")
    try:
        import obonet  # noqa: F401  (an OBO ontology needs it)
    except ImportError:
        from ..ontology import is_obo_file

        if is_obo_file(args.ontology):
            raise UserError("reading an OBO file needs obonet: pip install \"hmcpgm[obo]\"") from None
    folder = Path(args.predictions)
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else [folder]
    if not files:
        raise UserError(f"PREDICTIONS {args.predictions!r} is a folder without files")
    order = "are the files in the order ONTOLOGY PREDICTIONS GROUND_TRUTH?"
    for name, path in (("PREDICTIONS", args.predictions), ("GROUND_TRUTH", args.ground_truth)):
        if same_file(args.ontology, path):  # an annotation file read as an edge list evaluates against a bogus graph
            raise UserError(f"ONTOLOGY and {name} are the same file {path!r} ({order})")
    ia = read_ia(args.ia) if args.ia else None
    relations = tuple(r.strip() for r in args.relations.split(",") if r.strip())
    try:
        ontology = read_ontology(args.ontology, relations)  # once for all the prediction files
    except (InputError, HierarchyError) as exc:
        raise UserError(f"ONTOLOGY: {exc} ({order})") from None
    steps = Steps(args, None, "evaluate", unit="step")
    out = {}
    try:
        for path in files:
            skipped = {}
            results = evaluate_files(ontology, path, args.ground_truth, ia=ia, exclude_roots=args.exclude_roots,
                                     normalization=args.normalization, threshold_step=args.threshold_step,
                                     relations=relations, evidence=args.evidence, skipped=skipped,
                                     progress=steps.step)
            steps.clear()  # the table prints on a clean line
            if not results and not skipped:
                raise UserError(f"GROUND_TRUTH {args.ground_truth!r} annotates no target with a term of the "
                                "ontology")
            if len(files) > 1:
                print(f"{path.relative_to(folder)}:")
            low = "below the thresholds" in skipped.values()
            why = (f"no score reaches the first threshold ({args.threshold_step:g}) on a target of GROUND_TRUTH"
                   if low else "no namespace has both ground truth and predictions")
            if not results and len(files) == 1:
                raise UserError(f"{why} in PREDICTIONS {args.predictions!r}" if low else
                                f"{why}: no line of PREDICTIONS {args.predictions!r} names a target of GROUND_TRUTH "
                                f"{args.ground_truth!r} with a term of the ontology (are the two files in the order "
                                "PREDICTIONS GROUND_TRUTH?)")
            print(format_evaluation(results, args.threshold_step) if results else why)
            out[str(path.relative_to(folder)) if len(files) > 1 else None] = results
    finally:
        steps.close()
    if not any(out.values()):
        raise UserError(f"no file of PREDICTIONS {args.predictions!r} has a namespace with both ground truth and "
                        f"predictions: none gives a target of GROUND_TRUTH {args.ground_truth!r} a score of at least "
                        f"the first threshold ({args.threshold_step:g}) for a term of the ontology")
    if not args.ia:
        print("(Smin and weighted Fmax weigh terms by information accretion estimated from GROUND_TRUTH; "
              "pass --ia FILE to use given values)")
    if args.json:
        from .._atomic import atomic_write
        from .._util import json_ready

        with atomic_write(args.json) as fh:  # "-": standard output (messages went to standard error)
            # an undefined metric (NaN) as null: JSON has no NaN
            fh.write(json.dumps(json_ready(out[None] if len(files) == 1 else out), indent=2) + "\n")
        print(f"wrote {args.json}")


def add_evaluate_parser(sub, number_in, **parser_options):
    """Add the ``evaluate`` subcommand to the subparsers ``sub``."""
    p = sub.add_parser(
        "evaluate", help="CAFA evaluation of predictions against a ground truth (Fmax, Smin, weighted Fmax)",
        description="Evaluate CAFA-format predictions (target term score lines; a folder evaluates each file) "
                    "against a ground truth (target term lines, or GAF) along an ontology (OBO, one evaluation "
                    "per namespace, or a parent,child edge list), as the CAFA evaluator (cafaeval) does: "
                    "predictions propagated to ancestors by max, thresholds 0.01 to 0.99, precision averaged "
                    "over the targets with a prediction and recall over all targets.", **parser_options)
    p.add_argument("ontology", metavar="ONTOLOGY", help="ontology: an OBO file or a 'parent,child' edge list")
    p.add_argument("predictions", metavar="PREDICTIONS",
                   help="predictions: 'target term score' lines (a file, or a folder of files)")
    p.add_argument("ground_truth", metavar="GROUND_TRUTH",
                   help="ground truth: 'target term' lines or a GAF file (closed upward)")
    p.add_argument("--ia", metavar="FILE",
                   help="information accretion, 'term ia' lines (default: estimated from GROUND_TRUTH)")
    p.add_argument("--json", metavar="OUT", help="also write the numbers as JSON")
    p.add_argument("--exclude-roots", action="store_true",
                   help="leave out the terms without parents (cafaeval's -no_orphans)")
    p.add_argument("--normalization", default="cafa", choices=("cafa", "pred", "gt"),
                   help="how precision and recall are averaged over targets (cafaeval's -norm; default cafa)")
    p.add_argument("--threshold-step", type=number_in(MIN_THRESHOLD_STEP, 1.0), default=0.01, metavar="STEP",
                   help=f"step of the threshold grid, at least {MIN_THRESHOLD_STEP:g} (default 0.01)")
    p.add_argument("--relations", default="is_a,part_of", metavar="LIST",
                   help="OBO relations that make a term a child of another (default is_a,part_of)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown only on a terminal)")
    add_evidence_option(p, "GROUND_TRUTH")
    p.set_defaults(run=command_evaluate)
    return p
