"""``hmcpgm check-inference``: engines side by side on a hierarchy, and where loopy BP errs.

A thin layer over :func:`hmcpgm.inference.compare_engines`: read the hierarchy (a
CSV edge list, an OBO ontology or the class attribute of a Clus HMC ARFF file), take
the network and the evidence from a fitted model and a scores file, or make them up
(:func:`hmcpgm.inference.synthetic_evidence`), print the report and loopy's errors
grouped by the number of parents and the depth of the class.
"""

import json
import re
from pathlib import Path

from .._util import json_records
from ..inference import engine_names, get_engine
from ..inference._registry import size_text
from ._commands import UserError
from ._go import add_ontology_options, namespace_hierarchy, obo_ontology, refuse_namespace
from ._wording import command_line_wording

__all__ = ["add_check_inference", "command_check_inference"]

MAX_OBJECTS = 10**6  # --objects: every engine runs on them all, and their evidence and answers are in memory
_EVIDENCE_HELP = (
    "synthetic evidence when no --scores are given: log likelihood ratios N(+-0.5, 1) by the drawn label "
    "(weak, the default), N(+-3, 1) (strong), or N(0, 2) whatever the label (random, often against the "
    "hierarchy)"
)


def add_check_inference(sub, int_at_least, number_in):
    """Add the ``check-inference`` subcommand to the subparsers ``sub`` (value parsers passed in)."""
    p = sub.add_parser(
        "check-inference",
        help="compare mLPR engines (exact and loopy BP) on a hierarchy, and show where loopy BP errs",
        description="Run several engines on the same objects (full mLPRs) and report each one's largest and mean "
                    "absolute error against an exact reference (the fastest exact engine that fits the memory "
                    "budget, or --reference), its time and memory, loopy BP's iterations, and loopy's error by "
                    "the number of parents and the depth of the class (worst_object: the object's row, from 1). "
                    "HIERARCHY is a 'parent,child' CSV edge list, an .obo ontology (one namespace: --namespace, or "
                    "the one holding --model's classes, restricted to them as 'fit' does), or an .arff file (its "
                    "hierarchical class attribute; theta then comes from its labels).")
    p.add_argument("hierarchy", metavar="HIERARCHY", help="edge list CSV, .obo or .arff file")
    p.add_argument("--model", metavar="M.npz", help="a model saved by 'hmcpgm fit': its theta (and, with --scores, "
                                                    "its likelihoods of those scores)")
    p.add_argument("--scores", metavar="S.csv", help="scores CSV (header = class names); needs --model")
    p.add_argument("--id-column", metavar="NAME",
                   help="a column of object identifiers in --scores, as 'fit' and 'predict' read it (the report "
                        "still counts objects by row)")
    p.add_argument("--evidence", choices=("weak", "strong", "random"), default="weak", help=_EVIDENCE_HELP)
    p.add_argument("--objects", type=int_at_least(1, MAX_OBJECTS), default=20, metavar="N",
                   help=f"objects (synthetic evidence, or the first N rows of --scores; default 20, at most "
                        f"{MAX_OBJECTS:,})")
    p.add_argument("--engines", nargs="+", metavar="ENGINE",
                   choices=engine_names(references=True),
                   help="engines to run (default: every engine the inference plan says applies)")
    p.add_argument("--reference", default="auto",
                   choices=("auto", *(n for n in engine_names(references=True) if get_engine(n).exact_everywhere)),
                   help="the exact reference (default auto: the fastest exact engine that fits)")
    p.add_argument("--budget-gb", type=number_in(0.001, float("inf")), default=4.0, metavar="G",
                   help="memory budget in GiB (default 4) of the plan, of the reference chosen by auto and of "
                        "the engines that take one (sparse, pyagrum); the dense junction tree is bounded by "
                        "--max-clique instead")
    p.add_argument("--max-clique", type=int_at_least(1), default=20, metavar="N",
                   help="dense junction tree: the largest clique allowed (default 20)")
    p.add_argument("--damping", type=number_in(0.0, 1.0), metavar="D", help="loopy BP damping in [0, 1) (default 0)")
    p.add_argument("--max-iter", type=int_at_least(1), metavar="N", help="loopy BP iteration cap (default 200)")
    p.add_argument("--json", metavar="OUT", help="also write the report and the grouped errors as JSON")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="random seed of the synthetic evidence and theta")
    p.add_argument("--quiet", action="store_true", help="no progress bar (shown only on a terminal)")
    add_ontology_options(p)
    p.set_defaults(run=command_check_inference)
    return p


def _read_hierarchy(path, args, model=None):
    """(hierarchy, labels or None) from a CSV edge list, an OBO file or an ARFF file.

    An OBO file gives one namespace (``--namespace``, needed when it has several and
    no ``--model`` names its terms). With ``--model`` it gives the namespace holding
    the model's classes, restricted to them as ``hmcpgm fit`` restricts it.
    """
    from ..io import read_hierarchy
    from ..ontology import is_obo_file, restrict_hierarchy

    if is_obo_file(path):
        ontology = obo_ontology(path, args)
        if model is None:
            return namespace_hierarchy(ontology, path, args), None
        # the namespace holding the model's classes
        classes = list(model.hierarchy_.classes)
        namespaces = [args.namespace] if args.namespace else list(ontology.namespaces)
        holding = [ns for ns in namespaces if all(c in ontology.hierarchy(ns) for c in classes)]
        if not holding:
            raise UserError(f"--model {args.model!r} was fitted on classes that are not all terms of "
                            f"{'namespace ' + repr(args.namespace) if args.namespace else 'one namespace'} "
                            f"of {path}")
        return restrict_hierarchy(ontology.hierarchy(holding[0]), classes), None
    refuse_namespace(path, args)
    if Path(path).suffix.lower() == ".arff":
        from ..datasets import load_hmc_arff

        data = load_hmc_arff(path)
        return data.hierarchy, data.labels
    return read_hierarchy(path), None


def _network_and_evidence(args, hierarchy, labels, model):
    """(network, likelihoods, what the evidence is); the network's hierarchy is the model's with --model."""
    import numpy as np

    from ..inference import synthetic_evidence
    from ..network import LabelNetwork

    if args.model:
        from ..io import read_matrix

        same = set(model.hierarchy_.classes) == set(hierarchy.classes) and set(model.hierarchy_.edges) == set(
            hierarchy.edges)
        if not same:
            raise UserError(f"--model {args.model!r} was fitted on another hierarchy than {args.hierarchy!r}")
        network = model.network_
        if args.scores:
            _, scores = read_matrix(args.scores, model.hierarchy_, "scores", id_column=args.id_column)
            scores = scores[: args.objects]
            return network, model.likelihoods(scores), f"the model's likelihoods of the first {len(scores)} rows " \
                                                        f"of {args.scores}"
    elif labels is not None:
        network = LabelNetwork.from_labels(labels, hierarchy)
    else:
        theta = np.random.default_rng(args.seed).uniform(0.2, 0.8, size=hierarchy.n_classes)
        network = LabelNetwork(hierarchy, theta)
    _, lik = synthetic_evidence(network, args.objects, args.evidence, seed=args.seed)
    where = "the model's theta" if args.model else ("theta from the ARFF labels" if labels is not None
                                                   else "theta ~ U(0.2, 0.8)")
    return network, lik, f"synthetic {args.evidence} evidence on {args.objects} objects ({where})"


def _format(report):
    import pandas as pd

    show = report[["engine", "exact", "max_abs_error", "mean_abs_error", "worst_class", "worst_object", "seconds",
                   "setup_seconds", "peak_memory", "loopy_iterations_mean", "loopy_converged"]].copy()
    show["exact"] = show["exact"].map({True: "yes", False: "no"}).fillna("")  # "": refused, no answer
    show["peak_memory"] = show["peak_memory"].map(lambda b: "" if pd.isna(b) else size_text(b))
    show["worst_class"] = show["worst_class"].map(lambda c: "" if c is None else str(c))
    show["worst_object"] = show["worst_object"].map(lambda o: "" if pd.isna(o) else str(int(o) + 1))  # rows from 1
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 30):
        return show.to_string(index=False, na_rep="", float_format=lambda x: f"{x:.3g}")


def _as_reference(text):
    """An engine's refusal worded for --reference, which takes exact engines only: not "--engines tree", "'loopy'"."""
    return _without_advice(re.sub(r"engine='(\w+)'", r"reference='\1'", text), "reference", "loopy")


def _without_advice(text, option, name):
    """``text`` without its advice to use ``option='name'``, a choice the command's flag does not offer
    (--engines has no auto, --reference no loopy): "A, B, or X" -> "A or B", "A, X, or B" -> "A or B",
    "A or X" -> "A", "...; use X" -> "..."."""
    item = rf"{option}='\w+'(?: \([^)]*\))?"
    named = rf"(?:{option}=)?'{name}'(?: \([^)]*\))?"
    text = re.sub(rf"({item}), ({item}),? or {named}", r"\1 or \2", text)
    text = re.sub(rf", {named}, or ", " or ", text)
    text = re.sub(rf",? or (?:use )?{named}", "", text)
    return re.sub(rf"; use {named}", "", text)


def command_check_inference(args):
    """Run the engines, print the report and loopy's errors by class structure."""
    import pandas as pd

    from ..inference import compare_engines, errors_by_class_structure
    from ..io import check_output

    if args.json:
        check_output(args.json, "--json")
    if args.scores and not args.model:
        raise UserError("--scores needs --model: the model's score models turn scores into evidence")
    if args.id_column and not args.scores:
        raise UserError("--id-column names a column of --scores, and no --scores is given")
    model = None
    if args.model:
        from ..persist import load_model

        model = load_model(args.model)
    hierarchy, labels = _read_hierarchy(args.hierarchy, args, model)
    try:
        network, lik, what = _network_and_evidence(args, hierarchy, labels, model)
    except MemoryError:  # numpy's, for the (objects x classes) arrays
        raise UserError(f"--objects {args.objects:,}: not enough memory for the evidence of {args.objects:,} objects "
                        f"of {hierarchy.n_classes} classes; give fewer --objects") from None
    hierarchy = network.hierarchy
    engines = args.engines
    loopy_opts = {n: v for n, v in (("damping", args.damping), ("max_iter", args.max_iter)) if v is not None}
    if engines is not None and loopy_opts:
        engines = [("loopy", loopy_opts) if e == "loopy" else e for e in engines]
    elif loopy_opts:
        from ..inference import inference_plan

        plan = inference_plan(hierarchy, budget_bytes=int(args.budget_gb * 2**30), max_clique=args.max_clique)
        engines = [("loopy", loopy_opts) if e.engine == "loopy" else e.engine for e in plan.estimates if e.applies]
    if loopy_opts and not any(isinstance(e, tuple) for e in engines):  # set, and nothing would read them
        flags = " and ".join(f"--{n.replace('_', '-')}" for n in loopy_opts)
        raise UserError(f"{flags} set{'s' if len(loopy_opts) == 1 else ''} loopy BP's options, and no loopy BP runs: "
                        "add loopy to --engines, or leave them out")
    report, mlprs = compare_engines(network, lik, engines=engines, reference=args.reference,
                                    budget_bytes=int(args.budget_gb * 2**30), max_clique=args.max_clique,
                                    return_mlpr=True, progress=not args.quiet)
    if args.reference != "auto" and report.attrs["reference"] is None:  # asked for, and it could not run
        refused = report.loc[report["reference"], "note"]
        text = refused.iloc[0].removeprefix("refused: ") if len(refused) else report.attrs["reference_reason"]
        raise UserError(command_line_wording(_as_reference(text), "check-inference"))
    kind = f"{hierarchy.n_classes} classes ({hierarchy.kind}), {len(hierarchy.edge_indices)} edges"
    print(f"check-inference: {args.hierarchy}: {kind}; {what}")
    reason = command_line_wording(report.attrs["reference_reason"], "check-inference")
    print(f"reference: {report.attrs['reference'] or 'none'} ({reason})")
    print(_format(report))
    for note in report.loc[report["note"].str.startswith("refused"), ["engine", "note", "reference"]].itertuples():
        text = note.note
        text = _as_reference(text) if note.reference else _without_advice(text, "engine", "auto")
        print(f"{note.engine}: {command_line_wording(text, 'check-inference')}")
    grouped = {}
    loopy = [e for e in report["engine"] if e.startswith("loopy") and e in mlprs]
    if "reference" in mlprs:
        for name in loopy:
            # a small table: parents 0, 1, 2, 3+; depths in bins of a width that gives at most 5 bins
            width = max(1, -(-(int(max(hierarchy.depth, default=0)) + 1) // 5))
            table = errors_by_class_structure(hierarchy, mlprs[name], mlprs["reference"], max_parents=3,
                                              depth_bin=width)
            grouped[name] = table
            print(f"\nwhere {name} errs (absolute error against {report.attrs['reference']}, by class structure):")
            with pd.option_context("display.width", 200):
                print(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    elif loopy:
        print("\nno exact reference: loopy BP's errors cannot be located")
    if args.json:
        out = {
            "hierarchy": str(args.hierarchy), "n_classes": hierarchy.n_classes, "evidence": what,
            "reference": report.attrs["reference"], "reference_reason": report.attrs["reference_reason"],
            "memory_method": report.attrs["memory_method"],
            "engines": json_records(report.assign(worst_object=report["worst_object"] + 1)),  # rows from 1
            "loopy_errors_by_class_structure": {n: json_records(t) for n, t in grouped.items()},
        }
        from .._atomic import atomic_write

        with atomic_write(args.json) as fh:  # "-": standard output (messages went to standard error)
            fh.write(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
