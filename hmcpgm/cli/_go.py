"""Gene Ontology inputs of ``fit``, ``predict`` and ``rank``: an OBO file as the hierarchy, annotations as labels.

- HIERARCHY may be an OBO file: the terms of one namespace (``--namespace``, needed
  when the file has several), joined by the ``--relations`` (default ``is_a,part_of``),
  restricted to the classes the matrix file's header names (each term keeps its
  nearest ancestors among them as parents, see :func:`hmcpgm.ontology.restrict_hierarchy`);
- LABELS may be gene-term annotations (two columns, or GAF 2.x) instead of a 0/1
  matrix: closed upward along the ontology (or the hierarchy), and matched to the
  scores by the ``--id-column`` ids; a gene without annotation is negative everywhere;
  ``--evidence`` keeps the GAF lines of some evidence codes only (also ``evaluate``'s
  ground truth).
"""

__all__ = ["add_evidence_option", "add_ontology_options", "annotation_labels", "hierarchy_argument", "refuse_namespace",
           "namespace_hierarchy", "obo_ontology", "with_term_names"]


def add_ontology_options(parser):
    """Add ``--namespace`` and ``--relations`` (used when the hierarchy is an OBO file)."""
    group = parser.add_argument_group("when HIERARCHY is an OBO file (pip install \"hmcpgm[obo]\")")
    group.add_argument("--namespace", metavar="NAME",
                       help="the ontology's namespace, e.g. biological_process (needed when it has several)")
    group.add_argument("--relations", default="is_a,part_of", metavar="LIST",
                       help="relations that make a term a child of another (default is_a,part_of)")


def _evidence(text):
    """The ``--evidence`` value: a frozenset of GO evidence codes (argparse type)."""
    import argparse

    from ..exceptions import InputError
    from ..ontology import evidence_codes

    try:
        return evidence_codes(text)
    except InputError as exc:  # argparse names the option: "argument --evidence: ..."
        raise argparse.ArgumentTypeError(str(exc).removeprefix("evidence: ")) from None


def add_evidence_option(parser, files):
    """Add ``--evidence`` (GO evidence codes of the GAF lines kept) to a command reading annotations ``files``."""
    from ..ontology import EVIDENCE_SETS

    parser.add_argument("--evidence", type=_evidence, metavar="CODES",
                        help=f"keep only the GAF lines of {files} whose GO evidence code (column 7) is one "
                             f"of CODES: comma-separated codes (EXP,IDA,...) or named sets: {', '.join(EVIDENCE_SETS)} "
                             "(cafa: EXP,IDA,IPI,IMP,IGI,IEP,TAS,IC, what CAFA's ground truths count); default: every "
                             "line")


def _header_classes(path, id_column):
    """The class names a matrix file's header holds (CSV or Parquet)."""
    from pathlib import Path

    from ..io import PARQUET

    if Path(path).suffix.lower() in PARQUET:
        import pyarrow.parquet as pq

        names = list(pq.read_schema(path).names)
    else:  # as read_matrix reads it (pandas' delimiter sniffing split 'GO:0009987' at the colon)
        from ..io import read_header

        names = read_header(path)
    return [c for c in names if c != id_column]


def obo_ontology(path, args):
    """The ontology of an OBO file given as HIERARCHY, joined by ``--relations``."""
    from ..ontology import read_ontology
    from ._errors import UserError

    relations = tuple(r.strip() for r in (args.relations or "").split(",") if r.strip())
    try:
        return read_ontology(path, relations)
    except ImportError:
        raise UserError(f"{path} is an OBO file, and reading it needs obonet: pip install \"hmcpgm[obo]\"") from None


def namespace_hierarchy(ontology, path, args):
    """The hierarchy of ``--namespace`` (or of the ontology's only namespace)."""
    from ._errors import UserError

    if args.namespace is None and len(ontology.namespaces) > 1:
        raise UserError(f"{path} has {len(ontology.namespaces)} namespaces ({', '.join(ontology.namespaces)}); "
                        "choose one with --namespace")
    return ontology.hierarchy(args.namespace)


def refuse_namespace(path, args):
    """Refuse ``--namespace`` for a HIERARCHY that is not an OBO file (it would be ignored: it has no namespaces)."""
    from ._errors import UserError

    if getattr(args, "namespace", None) is not None:
        raise UserError(f"--namespace picks a namespace of an OBO file, and {path} is not one: leave it out")


def hierarchy_argument(path, args, matrix_path):
    """``(hierarchy, ontology)`` from a HIERARCHY argument: an OBO file or an edge list (ontology None)."""
    from ..io import read_hierarchy
    from ..ontology import is_obo_file, restrict_hierarchy
    from ._errors import UserError

    if not is_obo_file(path):
        refuse_namespace(path, args)
        return read_hierarchy(path), None
    ontology = obo_ontology(path, args)
    full = namespace_hierarchy(ontology, path, args)
    classes = _header_classes(matrix_path, getattr(args, "id_column", None))
    outside = [c for c in classes if c not in full]
    if outside:
        where = f"namespace {args.namespace!r}" if args.namespace else "the ontology"
        hint = ""
        if outside == classes[:1] and getattr(args, "id_column", None) is None:
            hint = f"; if it holds the objects' ids, pass --id-column {outside[0]}"
        elif ontology.alt_ids.get(outside[0]):  # a term merged into another since the scores were made
            hint = f"; it is an alternative id of {', '.join(ontology.alt_ids[outside[0]])}: rename the column"
        raise UserError(f"{matrix_path}: {len(outside)} columns are not terms of {where} in {path} "
                        f"(first: {outside[0]!r}){hint}")
    return restrict_hierarchy(full, classes), ontology


def annotation_labels(path, hierarchy, ontology, ids, args):
    """The (M, K) labels of the scores' objects ``ids`` from gene-term annotations, closed upward."""
    import numpy as np

    from ..ontology import read_annotations
    from ._errors import UserError

    if ids is None:
        raise UserError(f"{path} holds gene-term annotations: pass --id-column naming the scores' column of gene "
                        "ids, so that rows can be matched to genes")
    genes, labels = read_annotations(path, hierarchy, ontology, namespace=args.namespace,
                                     evidence=getattr(args, "evidence", None))
    row = {g: i for i, g in enumerate(genes)}
    out = np.zeros((len(ids), hierarchy.n_classes), dtype=np.int8)
    found = [(i, row[g]) for i, g in enumerate(ids) if g in row]
    if not found:
        raise UserError(f"no gene of {path} is an id of the scores file (first scores id: {ids[0]!r}, "
                        f"first annotated gene: {genes[0] if len(genes) else None!r})")
    mine, theirs = (np.array(x) for x in zip(*found))
    out[mine] = labels[theirs]
    # a scored gene without annotation is a negative, and an annotation file may cover genes that were not scored
    # (a whole GAF, a held-out split): both are normal. An annotated gene that is a scored, unannotated id once
    # case and spaces are ignored is one gene spelt two ways, and would silently become a negative
    unannotated = {str(g).strip().casefold(): g for g in ids if g not in row}
    scored = set(ids)
    twins = [(g, unannotated[str(g).strip().casefold()]) for g in genes
             if g not in scored and str(g).strip().casefold() in unannotated]
    if twins:
        from .._util import warn

        gene, twin = twins[0]
        warn(f"{len(twins)} annotated genes of {path} are ids of the scores file only when case and spaces are "
             f"ignored (first: {gene!r} and the scores' {twin!r}); they are not matched, so those scored genes are "
             "negatives for every term: spell the ids alike in both files", UserWarning)
    return ids, out


def with_term_names(table, ontology, column="class"):
    """Add a ``name`` column after ``column`` when the ontology names the terms."""
    if ontology is None or not ontology.names:
        return table
    position = list(table.columns).index(column) + 1
    table.insert(position, "name", table[column].map(lambda t: ontology.names.get(t, "")))
    return table
