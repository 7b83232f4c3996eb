"""Gene Ontology files: OBO ontologies, gene-term annotations (two columns or GAF), CAFA prediction files.

The files the protein-function community exchanges, read the way the CAFA evaluator
(``cafaeval`` 1.3) reads them, so that a file means the same to hmcpgm and to it:

- an **ontology**: an OBO file (read with obonet, the ``[obo]`` extra) gives one
  :class:`~hmcpgm.Hierarchy` per namespace, with the ``is_a`` and ``part_of`` relations
  (edges to another namespace and obsolete terms are left out), the term names and
  the alternative ids; an edge-list file (``parent,child`` lines, :func:`hmcpgm.io.read_hierarchy`)
  gives a single namespace, ``"all"``;
- **annotations**: ``target term`` lines (whitespace, tab or comma separated; the CAFA
  ground-truth format) or a GAF 2.x file (column 2 the object id, column 5 the GO id,
  lines whose qualifier holds ``NOT`` left out, and, on request, the lines whose
  evidence code, column 7, is not among chosen ones: :data:`EXPERIMENTAL`, :data:`CAFA`,
  ...); alternative ids are replaced by their term; the label matrix is closed upward
  along the ontology;
- **predictions**: ``target term score`` lines (the CAFA format); a pair given twice
  keeps its largest score.
"""

import csv
import re
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ._obo import read_obo_graph, relation_names, term_namespaces, unescaped
from ._textfile import check_input_file, open_text, utf8_text
from ._util import warn
from .exceptions import HierarchyError, InputError
from .hierarchy import Hierarchy

__all__ = [
    "CAFA",
    "CAFA5",
    "EVIDENCE_CODES",
    "EVIDENCE_SETS",
    "EXPERIMENTAL",
    "HIGH_THROUGHPUT",
    "MANUAL",
    "Ontology",
    "evidence_codes",
    "is_annotation_file",
    "is_obo_file",
    "read_annotations",
    "read_annotations_per_namespace",
    "read_cafa_predictions",
    "read_cafa_predictions_per_namespace",
    "read_ontology",
    "restrict_hierarchy",
    "write_cafa_predictions",
]

#: The namespace of an ontology read from an edge list.
EDGE_LIST_NAMESPACE = "all"

_GAF_COLUMNS = 15  # GAF 1.0 has 15 columns, GAF 2.x 17
_GAF_EVIDENCE = 6  # GAF's column 7: the evidence code

# GO evidence codes (GAF column 7), grouped as the GO Consortium's "Guide to GO evidence codes"
# (geneontology.org/docs/guide-go-evidence-codes/) groups them; the list is the one the Evidence
# and Conclusion Ontology maps to ECO terms (purl.obolibrary.org/obo/eco/gaf-eco-mapping.txt).

#: The GO Consortium's experimental evidence codes: inferred from experiment, direct assay, physical
#: interaction, mutant phenotype, genetic interaction, expression pattern.
EXPERIMENTAL = frozenset({"EXP", "IDA", "IPI", "IMP", "IGI", "IEP"})
#: The GO Consortium's high-throughput experimental codes (the high-throughput counterparts of
#: EXP, IDA, IMP, IGI and IEP).
HIGH_THROUGHPUT = frozenset({"HTP", "HDA", "HMP", "HGI", "HEP"})
_PHYLOGENETIC = frozenset({"IBA", "IBD", "IKR", "IRD"})
_COMPUTATIONAL = frozenset({"ISS", "ISO", "ISA", "ISM", "IGC", "RCA"})
_AUTHOR = frozenset({"TAS", "NAS"})
_CURATOR = frozenset({"IC", "ND"})
_ELECTRONIC = frozenset({"IEA"})
#: Every GO evidence code: the groups of the GO guide (experimental, high-throughput, phylogenetic,
#: computational, author statement TAS/NAS, curator statement IC/ND, electronic IEA) and IMR, the
#: retired code that IKR replaced, still in ECO's GAF mapping.
EVIDENCE_CODES = (EXPERIMENTAL | HIGH_THROUGHPUT | _PHYLOGENETIC | _COMPUTATIONAL | _AUTHOR | _CURATOR
                  | _ELECTRONIC | {"IMR"})
#: CAFA's experimental annotations, what a CAFA ground truth counts: the experimental codes, traceable
#: author statement TAS and inferred by curator IC, as the README of the CAFA3 final benchmark says
#: (benchmark20171115, made by the protocol of Jiang et al. 2016, CAFA2; the CAFA3 preliminary
#: benchmark had the six experimental codes only, :data:`EXPERIMENTAL`).
CAFA = EXPERIMENTAL | {"TAS", "IC"}
#: CAFA 5's training annotations (the Kaggle CAFA 5 data page: experimental or high-throughput
#: evidence, TAS or IC): :data:`CAFA` and :data:`HIGH_THROUGHPUT`.
CAFA5 = CAFA | HIGH_THROUGHPUT
#: The codes a curator assigns: all but IEA, the only code the GO guide says no curator assigns.
MANUAL = EVIDENCE_CODES - _ELECTRONIC
#: The named sets ``evidence=`` (and ``--evidence`` on the command line) accepts beside codes: name -> codes
#: (read-only).
EVIDENCE_SETS = MappingProxyType({"experimental": EXPERIMENTAL, "high-throughput": HIGH_THROUGHPUT, "cafa": CAFA,
                                  "cafa5": CAFA5, "manual": MANUAL})


def evidence_codes(evidence):
    """The GO evidence codes an ``evidence`` argument stands for: codes and named sets, joined.

    Parameters
    ----------
    evidence : str or collection of str
        Evidence codes (``"IDA"``, any case) and names of :data:`EVIDENCE_SETS`
        (``"experimental"``, ``"high-throughput"``, ``"cafa"``, ``"cafa5"``, ``"manual"``),
        as a collection or as one comma-separated string (``"cafa,HTP"``).

    Returns
    -------
    frozenset of str
        The upper-case codes, the union of what each item stands for.

    Raises
    ------
    InputError
        For an item that is neither a GO evidence code nor a named set, or when no code is given.

    Examples
    --------
    >>> sorted(evidence_codes("cafa"))
    ['EXP', 'IC', 'IDA', 'IEP', 'IGI', 'IMP', 'IPI', 'TAS']
    >>> sorted(evidence_codes(["experimental", "iba"])) == sorted(EXPERIMENTAL | {"IBA"})
    True
    """
    items = evidence.split(",") if isinstance(evidence, str) else list(evidence)
    codes = set()
    for item in items:
        word = item.strip() if isinstance(item, str) else item
        if word == "":
            continue
        name = word.lower().replace("_", "-") if isinstance(word, str) else None
        if name in EVIDENCE_SETS:
            codes |= EVIDENCE_SETS[name]
        elif isinstance(word, str) and word.upper() in EVIDENCE_CODES:
            codes.add(word.upper())
        else:
            raise InputError(f"evidence: {word!r} is neither a GO evidence code ({', '.join(sorted(EVIDENCE_CODES))}) "
                             f"nor a named set of them ({', '.join(EVIDENCE_SETS)})")
    if not codes:
        raise InputError(f"evidence: no evidence code given (got {evidence!r}); pass codes such as EXP,IDA or a named "
                         f"set ({', '.join(EVIDENCE_SETS)})")
    return frozenset(codes)


@dataclass(frozen=True)
class Ontology:
    """An ontology split by namespace.

    Attributes
    ----------
    hierarchies : dict of str to Hierarchy
        One hierarchy per namespace, in file order.
    names : dict of str to str
        Term id -> term name (empty for an edge list).
    alt_ids : dict of str to tuple of str
        Alternative id -> the terms that list it.
    """

    hierarchies: dict
    names: dict = field(default_factory=dict)
    alt_ids: dict = field(default_factory=dict)

    @property
    def namespaces(self):
        """tuple of str: the namespaces, in file order."""
        return tuple(self.hierarchies)

    def hierarchy(self, namespace=None):
        """The hierarchy of one namespace (the only one when ``namespace`` is None).

        Parameters
        ----------
        namespace : str, optional
            Needed when the ontology has several namespaces.

        Returns
        -------
        Hierarchy
            The terms of that namespace.
        """
        if namespace is None:
            if len(self.hierarchies) == 1:
                return next(iter(self.hierarchies.values()))
            raise InputError(f"the ontology has {len(self.hierarchies)} namespaces; choose one with namespace= "
                             f"(one of {', '.join(self.namespaces)})")
        if namespace not in self.hierarchies:
            raise InputError(f"namespace {namespace!r} is not in the ontology; it has {', '.join(self.namespaces)}")
        return self.hierarchies[namespace]

    def canonical(self, term):
        """The terms an id stands for: itself, or the terms of an alternative id (empty when unknown).

        Parameters
        ----------
        term : str
            A term id or an alternative id.

        Returns
        -------
        tuple of str
            Canonical term ids.
        """
        if any(term in h for h in self.hierarchies.values()):
            return (term,)
        return self.alt_ids.get(term, ())


_OBO_FIRST_LINES = ("format-version:", "data-version:", "ontology:", "[Term]", "[Typedef]")


def is_obo_file(path):
    """Whether ``path`` is an OBO file: an ``.obo`` suffix (or ``.obo.gz``, ``.obo.bz2``, ``.obo.xz``), or a first
    line (after blank lines and ``!`` comments) that starts an OBO header or stanza (``format-version:``,
    ``data-version:``, ``ontology:``, ``[Term]``, ``[Typedef]``).

    Parameters
    ----------
    path : str or Path
        A file.

    Returns
    -------
    bool
        True for an OBO file.
    """
    path = Path(path)
    if path.name.lower().endswith((".obo", ".obo.gz", ".obo.bz2", ".obo.xz")):
        return True
    try:
        with open_text(path) as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("!"):
                    return line.startswith(_OBO_FIRST_LINES)
    except (OSError, EOFError, UnicodeDecodeError):
        return False
    return False


def read_ontology(path, relations=("is_a", "part_of")):
    """Read an ontology: an OBO file (one hierarchy per namespace) or an edge list.

    Parameters
    ----------
    path : str or Path
        An OBO file, or a ``parent,child`` edge list (see :func:`hmcpgm.io.read_hierarchy`).
    relations : str or collection of str, default ("is_a", "part_of")
        The OBO relations that make a term a child of another (CAFA's choice by default).
        None of them in the file is an error (a misspelt name would drop every edge); one
        missing other than is_a and part_of is a warning.

    Returns
    -------
    Ontology
        Obsolete terms and terms without a namespace (or of namespace ``external``)
        are left out, as are edges between namespaces; when no term names its
        namespace (e.g. the Human Phenotype Ontology), every term is in the header's
        ``default-namespace``. An edge to a term the file neither defines nor marks
        obsolete is left out with a warning. Lines are read as OBO means them
        (indented, with a comment's ``!`` right after an identifier, blank lines inside
        a stanza), which obonet alone does not.

    Raises
    ------
    ImportError
        For an OBO file when obonet is missing (``pip install 'hmcpgm[obo]'``).
    """
    if not is_obo_file(path):
        from .io import read_hierarchy

        return Ontology({EDGE_LIST_NAMESPACE: read_hierarchy(path)})
    wanted = relation_names(relations)
    path = Path(path)
    graph, terms = read_obo_graph(path, wanted)
    relations = set(wanted)
    by_namespace, names, alt_ids = {}, {}, {}
    # no term names its namespace (the Human Phenotype Ontology): the header's default-namespace holds them all;
    # cafaeval reads no term there
    for term, ns in term_namespaces(graph, terms).items():
        if not ns or ns == "external":
            continue
        data = graph.nodes[term]
        by_namespace.setdefault(ns, []).append(term)
        if "name" in data:
            names[term] = unescaped(data["name"])  # OBO's escapes read, as pronto reads them
        for alt in data.get("alt_id", ()):
            alt_ids.setdefault(alt, []).append(term)
    namespace_of = {t: ns for ns, terms in by_namespace.items() for t in terms}
    edges = {ns: {} for ns in by_namespace}  # dicts as ordered sets: is_a and part_of may join the same pair
    for child, parent, relation in graph.edges(keys=True):
        if relation in relations and child in namespace_of and namespace_of.get(parent) == namespace_of[child]:
            edges[namespace_of[child]][(parent, child)] = None
    if not by_namespace:
        raise InputError(f"ontology file {path} has no term with a namespace")
    hierarchies = {}
    for ns, terms in by_namespace.items():
        try:
            hierarchies[ns] = Hierarchy.from_edges(list(edges[ns]), classes=terms)
        except HierarchyError as exc:
            raise HierarchyError(f"ontology file {path}, namespace {ns}: {exc}") from None
    return Ontology(hierarchies, names, {a: tuple(t) for a, t in alt_ids.items()})


def restrict_hierarchy(hierarchy, classes):
    """The hierarchy among ``classes`` only: each keeps its nearest ancestors among them as parents.

    A class's parents are the kept ancestors that are not an ancestor of another kept
    ancestor (the transitive reduction of the ancestor order restricted to ``classes``),
    so a scores file over a few GO terms gets the hierarchy the full ontology implies
    among those terms. One pass over the hierarchy in topological order: time and
    memory follow the number of (class, kept ancestor) pairs, and a chain of
    classes that are not kept shares one set (``python bench/restrict_hierarchy.py``).

    Parameters
    ----------
    hierarchy : Hierarchy
        The full hierarchy (e.g. one namespace of the Gene Ontology).
    classes : sequence
        Classes of ``hierarchy``; their order is the column order of the result.

    Returns
    -------
    Hierarchy
        Over exactly ``classes``.

    Examples
    --------
    >>> h = Hierarchy.from_edges([("r", "a"), ("a", "b"), ("b", "c"), ("r", "d")])
    >>> restrict_hierarchy(h, ["c", "r", "d"]).edges
    (('r', 'c'), ('r', 'd'))
    """
    classes = list(classes)
    unknown = [c for c in classes if c not in hierarchy]
    if unknown:
        raise InputError(f"{len(unknown)} classes are not in the ontology (first: {unknown[0]!r})")
    import networkx as nx

    graph, kept, position = hierarchy.graph, set(classes), {c: k for k, c in enumerate(classes)}
    # one pass in topological order: per class, its kept proper ancestors (above) and the nearest of them (the
    # kept ancestors below no other kept ancestor). A class's nearest kept ancestors are among its kept parents
    # and its other parents' nearest ones; of those candidates, the ones above no other candidate.
    above, nearest, none = {}, {}, frozenset()
    for c in nx.topological_sort(graph):
        parents = list(graph.predecessors(c))
        if len(parents) == 1 and parents[0] not in kept:  # a chain of dropped classes shares its sets
            above[c], nearest[c] = above[parents[0]], nearest[parents[0]]
            continue
        up, candidates = set(), set()
        for p in parents:
            up |= above[p]
            if p in kept:
                up.add(p)
                candidates.add(p)
            else:
                candidates |= nearest[p]
        above[c] = up or none
        nearest[c] = candidates if len(candidates) < 2 else {
            a for a in candidates if not any(a in above[b] for b in candidates if b != a)}
    edges = [(a, c) for c in classes  # by child, then parent, in the order of classes
             for a in (nearest[c] if len(nearest[c]) < 2 else sorted(nearest[c], key=position.__getitem__))]
    return Hierarchy.from_edges(edges, classes=classes)


def _fields(line):
    """The fields of a text line: tab separated; else comma separated when its first word holds a comma (a
    CSV row); else whitespace separated, as cafaeval reads them (``T1 GO:0000002 IDA,PMID:1`` is a target,
    a term and an evidence column, not two fields split at the comma)."""
    if "\t" in line:
        return [f.strip() for f in line.split("\t")]
    words = line.split()
    if words and "," in words[0]:
        return [f.strip() for f in line.split(",")]
    return words


def _annotation_fields(line, fields, known):
    """The fields of a ``target term`` line, given its :func:`_fields`, except that a tab-separated line whose
    second tab field is no term ``known`` (a callable: term -> the terms it stands for) but whose second word is
    one is split at any whitespace, as cafaeval splits it: ``T1<tab>GO:2 IDA`` names GO:2."""
    if "\t" in line and len(fields) > 1 and not known(fields[1]):
        words = line.split()
        if len(words) > 1 and known(words[1]):
            return words
    return fields


def _spaced(field):
    """Whether a field holds whitespace (a stripped field: inside it); every whitespace but the space is
    unprintable."""
    return " " in field or not field.isprintable()


def _shape(name):
    """The shape of a name: each run of letters as ``a``, each run of digits as ``9`` (``GO:0008150`` -> ``a:9``,
    ``01.01`` -> ``9.9``)."""
    return _DIGITS.sub("9", _LETTERS.sub("a", name))


_LETTERS = re.compile(r"[^\W\d_]+")
_DIGITS = re.compile(r"\d+")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_annotation_file(path, classes=None, id_column=None):
    """Whether ``path`` holds gene-term annotations (GAF, or two columns of names) rather than a label matrix.

    Parameters
    ----------
    path : str or Path
        A file.
    classes : collection of str, optional
        The class names a label matrix would have as columns. With them, terms that
        look like numbers (FunCat's ``01.01``) are told from 0/1 cells.
    id_column : str, optional
        The name of a label matrix's id column.

    Returns
    -------
    bool
        True for a GAF file (``!gaf-version`` header, or 15 or more tab-separated
        columns) or a file whose first lines have two or three fields (CAFA 5's
        ``EntryID term aspect``), the second not a number (a label matrix has 0/1
        cells) or one of ``classes``, the first not one of ``classes`` (a label
        matrix's header). False for a file whose first line names ``id_column`` and
        one of ``classes``: a label matrix, whatever its columns' order.
    """
    try:
        with open_text(path) as fh:
            lines = []
            for line in fh:
                if line.startswith("!gaf-version"):
                    return True
                if line.strip() and not line.startswith(("!", "#")):
                    lines.append(line.rstrip("\r\n"))
                if len(lines) == 2:
                    break
    except (OSError, EOFError, UnicodeDecodeError):
        return False
    if lines and len(lines[0].split("\t")) >= _GAF_COLUMNS:  # a GAF file without its header
        return True
    rows = [_fields(line) for line in lines]
    known = frozenset(classes or ())
    if rows and id_column is not None and id_column in rows[0] and known.intersection(rows[0]):
        return False  # the header of a label matrix with its id column

    def annotation(r):
        return len(r) in (2, 3) and r[0] not in known and (r[1] in known or not _is_number(r[1]))

    return bool(rows) and all(annotation(r) for r in rows)



def _annotation_pairs(path, known, evidence=None):
    """The targets and the terms of the annotation lines of a two-column file or a GAF file, as two lists in file
    order, and whether the first pair may be a header (the first line of a file of columns); with ``evidence`` (a
    set of codes), the GAF lines of those evidence codes only. ``known``: term -> the terms it stands for (see
    :func:`_annotation_fields`)."""
    path = check_input_file(path, "annotation file")  # before the work below; utf8_text would say the same
    targets, terms, gaf, header = [], [], None, False
    dropped = {}  # evidence code -> lines the filter left out
    with utf8_text(path, "annotation file") as fh:
        for number, line in enumerate(fh, 1):
            if line.startswith(("!", "#")):
                if line.startswith("!gaf-version"):
                    gaf = True
                continue
            if line.isspace():  # a line read from a file is never empty
                continue
            if gaf is None:  # the first line of data: a GAF file stripped of its header still has its columns
                gaf = line.count("\t") + 1 >= _GAF_COLUMNS
                header = not gaf
            if gaf:
                n_columns = line.count("\t") + 1
                if n_columns < _GAF_COLUMNS:
                    raise InputError(f"annotation file {path}, line {number}: a GAF line has at least 15 tab-separated "
                                     f"columns, this one has {n_columns}")
                row = line.split("\t", _GAF_EVIDENCE + 1)  # the columns up to the evidence code, which are not the last
                if "NOT" in row[3] and "NOT" in row[3].split("|"):
                    continue
                if evidence is not None:
                    code = row[_GAF_EVIDENCE].strip().upper()
                    if code not in evidence:
                        dropped[code] = dropped.get(code, 0) + 1
                        continue
                targets.append(row[1])
                terms.append(row[4])
            else:
                if evidence is not None:
                    raise InputError(f"annotation file {path} has no evidence column (it holds 'target term' lines, "
                                     "not GAF): an evidence filter cannot apply to it; pass evidence=None")
                row = _fields(line)
                if len(row) > 1 and (not row[1] or _spaced(row[0]) or _spaced(row[1])):  # else split alike
                    row = _annotation_fields(line, row, known)
                if len(row) < 2:
                    obo = line.strip().startswith("[") or line.startswith("format-version:")
                    raise InputError(
                        f"annotation file {path}, line {number}: expected 'target term', got {line.strip()!r}"
                        + (" (an OBO ontology? annotations are 'target term' lines or GAF)" if obo else "")
                    )
                targets.append(row[0])
                terms.append(row[1])
    if evidence is not None and not terms:
        found = ", ".join(f"{c or '(empty)'} ({n})" for c, n in sorted(dropped.items(), key=lambda cn: -cn[1]))
        raise InputError(f"annotation file {path}: no line has an evidence code of evidence "
                         f"({', '.join(sorted(evidence))}); " + (f"its lines have {found}" if found else
                                                                   "it has no annotation line other than NOT ones"))
    return targets, terms, header


def read_annotations(path, hierarchy, ontology=None, *, namespace=None, evidence=None):
    """Read gene-term annotations as a 0/1 label matrix closed upward.

    Parameters
    ----------
    path : str or Path
        ``target term`` lines (tab, comma or whitespace separated) or a GAF file
        (GAF 2.x, or 1.0: 15 or more tab-separated columns); GAF lines whose
        qualifier (column 4) holds ``NOT`` are left out.
    hierarchy : Hierarchy
        The classes of the matrix (a namespace of ``ontology``, or some of its terms).
    ontology : Ontology, optional
        Closes the annotations upward along the full ontology before keeping the
        classes of ``hierarchy`` (a term outside ``hierarchy`` still makes its kept
        ancestors positive) and maps alternative ids. Without it, the terms must be
        classes of ``hierarchy``, and they are closed along it.
    namespace : str, optional
        The namespace of ``ontology`` that ``hierarchy`` is drawn from (default: the
        one holding its first class).
    evidence : str or collection of str, optional
        Keep only the GAF lines whose evidence code (column 7) is one of these (see
        :func:`evidence_codes`): codes such as ``{"EXP", "IDA"}``, or named sets,
        e.g. ``"experimental"`` (:data:`EXPERIMENTAL`) or ``"cafa"`` (:data:`CAFA`,
        what a CAFA ground truth counts). None (default) keeps every line. A file
        without an evidence column (``target term`` lines) is refused with a filter.

    Returns
    -------
    ids : ndarray of str
        The targets with at least one annotation among the classes, in file order.
    labels : ndarray of int8, shape (len(ids), K)
        Closed upward; columns in ``hierarchy.classes`` order.

    Raises
    ------
    InputError
        For an unknown evidence code, a filter on a file without evidence column,
        or a filter that keeps no line of the file.

    Warns
    -----
    UserWarning
        When lines name terms that no namespace of the ontology knows (they are left out),
        and when a first line naming an unknown id was read as a header.

    Examples
    --------
    >>> import tempfile
    >>> h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:1", "GO:3")])
    >>> columns = ["DB", "{}", "sym", "", "{}", "PMID:1", "{}", "", "P", "", "", "protein", "taxon:1", "20240101", "DB"]
    >>> line = "\\t".join(columns) + "\\n"  # GAF: object id, GO id and evidence code in columns 2, 5 and 7
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d, "a.gaf")
    ...     _ = path.write_text(line.format("P1", "GO:2", "IDA") + line.format("P2", "GO:3", "IEA"))
    ...     every, y = read_annotations(path, h)
    ...     kept, y_cafa = read_annotations(path, h, evidence="cafa")
    >>> every.tolist(), kept.tolist(), y_cafa.tolist()
    (['P1', 'P2'], ['P1'], [[1, 1, 0]])
    """
    known = _canonical(hierarchy, ontology)
    targets, terms, header = _annotation_pairs(path, known, None if evidence is None else evidence_codes(evidence))
    if ontology is not None and namespace is None:
        namespace = next((ns for ns, h in ontology.hierarchies.items() if hierarchy.classes[0] in h), None)
    names = hierarchy.classes if ontology is None else _all_terms(ontology)
    pairs = _known_pairs(targets, terms, header, known, names, path, ontology)
    return _label_matrix(pairs, hierarchy, ontology, namespace)


def read_annotations_per_namespace(path, ontology, *, evidence=None):
    """Read gene-term annotations once into one label matrix per namespace of ``ontology``.

    Parameters
    ----------
    path : str or Path
        As in :func:`read_annotations`.
    ontology : Ontology
        Its hierarchies give the columns.
    evidence : str or collection of str, optional
        As in :func:`read_annotations`.

    Returns
    -------
    dict of str to (ndarray, ndarray)
        Namespace -> ``(ids, labels)`` as :func:`read_annotations` gives them for
        ``ontology.hierarchy(namespace)``; one pass over the file (GOA files are large).

    Warns
    -----
    UserWarning
        Once, when lines name terms that no namespace of the ontology knows; once, when a first
        line naming an unknown id was read as a header.
    """
    targets, terms, header = _annotation_pairs(path, ontology.canonical,
                                               None if evidence is None else evidence_codes(evidence))
    pairs = _known_pairs(targets, terms, header, ontology.canonical, _all_terms(ontology), path, ontology)
    return {ns: _label_matrix(pairs, h, ontology, ns) for ns, h in ontology.hierarchies.items()}


def _canonical(hierarchy, ontology):
    """term -> the terms it stands for: the ontology's (alternative ids mapped), else the hierarchy's own."""
    if ontology is not None:
        return ontology.canonical
    return lambda t: (t,) if t in hierarchy else ()


def _all_terms(ontology):
    return [c for h in ontology.hierarchies.values() for c in h.classes]


def _known_pairs(targets, terms, header, known, names, path, ontology):
    """The annotation pairs of a file without its header line (:func:`_without_header`), its unknown terms
    warned of (:func:`_warn_unknown`)."""
    kept = _without_header(targets, terms, header, known, names)
    if len(kept[1]) < len(terms) and any(ch.isdigit() for ch in terms[0]):  # an id, not a header's word
        where = "ontology" if ontology is not None else "hierarchy"
        warn(f"the first line of {path} ({targets[0]!r}, {terms[0]!r}) was read as a header and left out: its term "
             f"is not in the {where} and is shaped like none of the {where}'s terms, or its target like no other",
             UserWarning)
    pairs = _Pairs(*kept, known)
    _warn_unknown(pairs, path, ontology, header and len(kept[1]) == len(terms))
    return pairs


def _without_header(targets, terms, header, known, names):
    """The pairs without the first when it is a header line, e.g. CAFA 5's ``EntryID term aspect``: a first line
    (``header``) whose term is not ``known`` and either has the shape of none of ``names`` or whose target has
    the shape of no other line's target (:func:`_shape`). A first line naming an unknown term of a known shape
    (``GO:0099999``) for a target like the others is data, warned of with the other unknown terms, not dropped
    without a word."""
    if header and not known(terms[0]):
        target = _shape(targets[0])  # the search stops at the first target alike: on the next line, as a rule
        if (_shape(terms[0]) not in {_shape(name) for name in names}
                or not any(_shape(t) == target for t in targets[1:])):
            return targets[1:], terms[1:]
    return targets, terms


class _Pairs:
    """Annotation pairs by number: the distinct targets and terms (in order of first appearance), for each pair
    the number of its target (``target_codes``) and of its term (``term_codes``), int arrays, and for each
    distinct term the terms it stands for (``stands_for``, by ``canonical``: see :func:`_canonical`)."""

    def __init__(self, targets, terms, canonical):
        self.targets, self.target_codes = _codes(targets)
        self.terms, self.term_codes = _codes(terms)
        self.stands_for = [canonical(term) for term in self.terms]


def _codes(items):
    """The distinct items, in order of first appearance, and the position of each item among them."""
    first = {}
    codes = np.array([first.setdefault(x, len(first)) for x in items], dtype=np.intp)
    return list(first), codes


def _warn_unknown(pairs, path, ontology, first_line=False):
    """Warn of the pairs whose term is unknown; ``first_line``: the first pair is the file's first line, kept
    (an unknown term there without a digit, a word such as ``class``, may be a header's: the warning says so)."""
    unknown = ~np.array([bool(terms) for terms in pairs.stands_for], dtype=bool)[pairs.term_codes]
    if unknown.any():
        where = "ontology" if ontology is not None else "hierarchy"
        first = pairs.terms[pairs.term_codes[np.argmax(unknown)]]
        n = np.count_nonzero(unknown)
        lines = f"{n} annotation lines of {path} name terms" if n > 1 else f"1 annotation line of {path} names a term"
        header = first_line and unknown[0] and not any(ch.isdigit() for ch in first)  # a word, no id
        where_first = ", on the first line of data: a header?" if header else ""
        warn(f"{lines} that {'are' if n > 1 else 'is'} not in the {where} (first: {first!r}{where_first}); "
             f"{'they are' if n > 1 else 'it is'} left out", UserWarning)


def _label_matrix(pairs, hierarchy, ontology, namespace):
    """The ids with an annotation among ``hierarchy``'s classes and their labels, closed upward along the
    namespace of the full ontology (or along ``hierarchy`` without one).

    Each distinct term is closed once, into the columns of it and its ancestors; the (target, term) pairs times
    the (term, column) closure, a product of sparse 0/1 matrices, are the labels.
    """
    from scipy import sparse

    full = hierarchy if ontology is None else ontology.hierarchy(namespace)
    column = {c: k for k, c in enumerate(hierarchy.classes)}
    full_column = np.array([column.get(c, -1) for c in full.classes], dtype=np.intp)
    closure = {}  # a term of full -> the columns of it and its ancestors
    for term, reach in _with_ancestors(full, {t for terms in pairs.stands_for for t in terms if t in full}).items():
        columns = full_column[list(reach)]
        closure[term] = columns[columns >= 0]
    none = np.zeros(0, dtype=np.intp)
    term_columns = [np.concatenate([closure[t] for t in terms if t in closure] or [none]) for terms in pairs.stands_for]
    n_columns = np.array([len(c) for c in term_columns], dtype=np.intp)
    kept = n_columns[pairs.term_codes] > 0
    # the targets in order of their first pair with a column (the targets of no such pair have no row)
    targets, first = np.unique(pairs.target_codes[kept], return_index=True)
    targets = targets[np.argsort(first)]
    row = np.full(len(pairs.targets), -1, dtype=np.intp)
    row[targets] = np.arange(len(targets))
    ids = np.array([pairs.targets[i] for i in targets.tolist()], dtype=object)
    labels = np.zeros((len(ids), hierarchy.n_classes), dtype=np.int8)
    if not len(ids):
        return ids, labels
    target_term = sparse.csr_matrix((np.ones(np.count_nonzero(kept), dtype=bool),
                                     (row[pairs.target_codes[kept]], pairs.term_codes[kept])),
                                    shape=(len(ids), len(pairs.terms)))
    term_column = sparse.csr_matrix((np.ones(n_columns.sum(), dtype=bool), np.concatenate(term_columns),
                                     np.concatenate([[0], np.cumsum(n_columns)])),
                                    shape=(len(pairs.terms), hierarchy.n_classes))
    product = (target_term @ term_column).tocsr()  # True where a pair's closure reaches a column
    cells = np.repeat(np.arange(len(ids)) * hierarchy.n_classes, np.diff(product.indptr)) + product.indices
    labels.reshape(-1)[cells] = 1  # flat: one-dimensional fancy indexing is the fast kind
    return ids, labels


def _with_ancestors(hierarchy, names):
    """name -> the column indices of it and of its ancestors in ``hierarchy``, for each of ``names`` (classes of
    ``hierarchy``): a class's set is made from its parents' sets, each made once, by a depth-first walk up."""
    parents = hierarchy.parent_indices
    closed = {}
    for name in names:
        stack = [hierarchy.index(name)]
        while stack:
            k = stack[-1]
            if k in closed:
                stack.pop()
                continue
            above = parents[k].tolist()
            todo = [p for p in above if p not in closed]
            if todo:
                stack += todo
            else:
                closed[stack.pop()] = {k}.union(*(closed[p] for p in above))
    return {name: closed[hierarchy.index(name)] for name in names}


def read_cafa_predictions(path, hierarchy, targets, ontology=None):
    """Read ``target term score`` lines into an (M, K) value matrix for the given targets.

    Parameters
    ----------
    path : str or Path
        CAFA-format predictions, ``target term score`` lines (extra columns ignored), split
        at any whitespace as cafaeval splits them; a target or term whose name holds a
        space (an edge-list ontology's) is read from a tab-separated line.
    hierarchy : Hierarchy
        The classes (columns).
    targets : sequence of str
        The rows: lines about other targets are ignored, targets without a line score 0.
    ontology : Ontology, optional
        Maps alternative ids to their terms.

    Returns
    -------
    ndarray of float, shape (len(targets), K)
        The largest score given to each (target, term) pair, 0 when none is.

    Raises
    ------
    InputError
        A line's score is not a number (but on a first, header line) or is
        infinite (``inf`` or ``-inf``), naming the file and line.
    """
    return _read_predictions(path, [(hierarchy, targets)], ontology)[0]


def read_cafa_predictions_per_namespace(path, ontology, targets):
    """Read ``target term score`` lines once into one value matrix per namespace.

    Parameters
    ----------
    path : str or Path
        CAFA-format predictions, ``target term score`` lines (extra columns ignored), split
        at any whitespace as cafaeval splits them; a target or term whose name holds a
        space (an edge-list ontology's) is read from a tab-separated line.
    ontology : Ontology
        Its hierarchies give the columns; alternative ids count for their terms.
    targets : dict of str to sequence of str
        Namespace -> its rows (e.g. the targets annotated in it).

    Returns
    -------
    dict of str to ndarray of float
        Namespace -> ``(len(targets[namespace]), K)`` matrix, as :func:`read_cafa_predictions`
        gives it; one pass over the file (CAFA files run to gigabytes).
    """
    names = list(targets)
    matrices = _read_predictions(path, [(ontology.hierarchy(ns), targets[ns]) for ns in names], ontology)
    return dict(zip(names, matrices))


#: the first words of a CAFA submission's lines that are not predictions (AUTHOR x, MODEL 1, END, ...)
_SUBMISSION_KEYS = frozenset({"AUTHOR", "MODEL", "KEYWORDS", "ACCURACY", "END"})


def _read_predictions(path, tables, ontology):
    """One ``(len(targets), K)`` matrix per ``(hierarchy, targets)`` of ``tables``, in one pass over ``path``.

    Line by line, only the fields are split and the target looked up; the lines about a target of a table are
    kept, a batch at a time, for a :class:`_PredictionReader` to read together.
    """
    path = check_input_file(path, "predictions file")  # before the work below; utf8_text would say the same
    reader = _PredictionReader([_PredictionTable(h, targets) for h, targets in tables], ontology, path)
    target_code = reader.target_code
    pending = numbers, targets, terms, texts = [], [], [], []  # the lines about a target: not read yet
    n_short, first_short = 0, None  # non-blank lines without the three fields "target term score"
    # a target or term whose name holds a space (an edge-list ontology may name a term "R 1", which cafaeval's
    # split at any whitespace reads as "R"): none in the Gene Ontology, so lines are split as cafaeval splits them
    terms_known = {t for table in reader.tables for t in table.column} | set(getattr(ontology, "alt_ids", ()))
    spaced = {str(t) for t in [*terms_known, *target_code] if len(str(t).split()) != 1}
    with utf8_text(path, "predictions file") as fh:
        for start, lines in _batches(fh):
            for number, line in enumerate(lines, start):
                fields = line.split()
                if spaced and "\t" in line and len(fields) > 3:
                    fields = _tab_fields(line, spaced) or fields
                if len(fields) < 3:
                    if fields and fields[0] not in _SUBMISSION_KEYS:
                        n_short, first_short = n_short + 1, first_short or number
                    continue
                code = target_code.get(fields[0])
                if code is not None:
                    numbers.append(number)
                    targets.append(code)
                    terms.append(fields[1])
                    texts.append(fields[2])
            reader.read(*pending)
            for column in pending:
                column.clear()
    if reader.n_odd:
        warn(f"{reader.n_odd} lines of predictions file {path} hold a NaN score or one outside [0, 1] (first: "
             f"line {reader.first_odd}); read as cafaeval reads them: NaN as no prediction, the others as they are, "
             "above or below every threshold", UserWarning)
    if n_short:
        warn(f"{n_short} lines of predictions file {path} have fewer than the three fields 'target term "
             f"score' (first: line {first_short}); skipped, as cafaeval skips them", UserWarning)
    return [table.values for table in reader.tables]


def _tab_fields(line, spaced):
    """``target term score`` of a tab-separated line whose target or term is one of the names ``spaced`` (names
    holding a space), the score its third field's first word; else None (the line is split at any whitespace)."""
    fields = [f for f in map(str.strip, line.split("\t")) if f]
    if len(fields) >= 3 and (fields[0] in spaced or fields[1] in spaced):
        return fields[:2] + fields[2].split()[:1]
    return None


class _PredictionReader:
    """Reads batches of prediction lines into the value matrices of ``tables`` (:class:`_PredictionTable`).

    Each distinct target and term is numbered once; a line counts where its target is a row and its term has a
    column, and its score is read there only (a line that counts nowhere may hold anything); each matrix takes
    the scores of a batch with one ``np.maximum.at``.
    """

    def __init__(self, tables, ontology, path):
        self.tables, self.ontology, self.path = tables, ontology, path
        self.target_code = {t: j for j, t in enumerate(dict.fromkeys(t for table in tables for t in table.row))}
        for table in tables:
            table.number_rows(self.target_code)
        self.term_code = {}  # a term met in the file -> its number
        self.n_odd, self.first_odd = 0, None  # lines of NaN scores and scores outside [0, 1]

    def read(self, numbers, targets, terms, texts):
        """Read the lines ``numbers`` (in file order), of target numbers ``targets``, terms and score texts."""
        numbers, targets = np.asarray(numbers, dtype=np.intp), np.asarray(targets, dtype=np.intp)
        codes = np.array([self.term_code.get(t, -1) for t in terms], dtype=np.intp)
        new = np.flatnonzero(codes < 0).tolist()
        if new:  # number the new terms and find their columns in each table
            names = list(dict.fromkeys(terms[i] for i in new))
            self.term_code.update(zip(names, range(len(self.term_code), len(self.term_code) + len(names))))
            stands_for = [self.ontology.canonical(t) if self.ontology is not None else (t,) for t in names]
            for table in self.tables:
                table.add_terms(stands_for)
            codes[new] = [self.term_code[terms[i]] for i in new]
        counts = [(table.rows[targets] >= 0) & (table.n_columns[codes] > 0) for table in self.tables]
        scored = np.flatnonzero(np.logical_or.reduce(counts)) if counts else np.zeros(0, dtype=np.intp)
        scores, scored = _scores([texts[i] for i in scored.tolist()], numbers[scored], scored, self.path)
        odd = ~((scores >= 0) & (scores <= 1))  # NaN too
        if odd.any():
            self.n_odd += int(np.count_nonzero(odd))
            self.first_odd = self.first_odd or int(numbers[scored[np.argmax(odd)]])
        positive = np.where(scores > 0, scores, 0.0)  # max(old, NaN) keeps the old score, as in cafaeval, and
        for table, count in zip(self.tables, counts):  # no score below the 0 of an absent pair counts
            mask = count[scored]
            table.take(table.rows[targets[scored[mask]]], codes[scored[mask]], positive[mask])


class _PredictionTable:
    """One value matrix being read: its rows (target -> row), the columns of each term met so far (by term
    number) and the values."""

    def __init__(self, hierarchy, targets):
        self.column = {c: k for k, c in enumerate(hierarchy.classes)}
        self.row = {t: i for i, t in enumerate(targets)}
        self.values = np.zeros((len(targets), hierarchy.n_classes))
        self.rows = None  # target number -> row, or -1: see number_rows
        # the columns of term number j: columns[starts[j]:starts[j] + n_columns[j]]
        self.columns, self.starts, self.n_columns = (np.zeros(0, dtype=np.intp) for _ in range(3))

    def number_rows(self, target_code):
        """Map target numbers (``target_code``: target -> number) to rows, -1 for the targets of other tables."""
        self.rows = np.full(len(target_code), -1, dtype=np.intp)
        self.rows[[target_code[t] for t in self.row]] = list(self.row.values())

    def add_terms(self, stands_for):
        """Number the next terms: ``stands_for`` holds, for each, the terms it stands for."""
        columns = [[self.column[t] for t in terms if t in self.column] for terms in stands_for]
        n_columns = np.array([len(c) for c in columns], dtype=np.intp)
        self.starts = np.concatenate([self.starts, len(self.columns) + np.cumsum(n_columns) - n_columns])
        self.n_columns = np.concatenate([self.n_columns, n_columns])
        self.columns = np.concatenate([self.columns, np.array([k for c in columns for k in c], dtype=np.intp)])

    def take(self, rows, terms, scores):
        """Each score into each column of its term in its row, where it is larger than the value there."""
        n = self.n_columns[terms]
        within = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)  # 0, 1, ... over the columns of each term
        columns = self.columns[np.repeat(self.starts[terms], n) + within]
        cells = np.repeat(rows, n) * self.values.shape[1] + columns  # flat: ufunc.at is fast in one dimension
        np.maximum.at(self.values.reshape(-1), cells, np.repeat(scores, n))


#: lines of a predictions file read at a time: enough for numpy to pay, few enough to stay in the caches
_BATCH_LINES = 1 << 14


def _batches(lines):
    """``(number of the first line, lines)`` in lists of up to :data:`_BATCH_LINES` lines; an error reading a line
    (a byte that is not UTF-8, a broken gzip stream) comes after the lines read before it, as it does line by
    line."""
    batch, start, size = [], 1, _BATCH_LINES
    try:
        for line in lines:
            batch.append(line)
            if len(batch) == size:
                yield start, batch
                batch, start = [], start + size
    except Exception:
        if batch:
            yield start, batch
        raise
    if batch:
        yield start, batch


def _scores(texts, numbers, scored, path):
    """The scores of the lines ``numbers`` as a float array, and ``scored`` without a header line (a first line
    whose score is no number); an InputError for the first other score that is not a number or is infinite."""
    try:
        scores = np.array([float(text) for text in texts], dtype=float)
    except ValueError:  # a header line, or an error: read line by line
        scores = [_score(text, path, number) for text, number in zip(texts, numbers.tolist())]
        keep = [i for i, score in enumerate(scores) if score is not None]
        return np.array([scores[i] for i in keep], dtype=float), scored[keep]
    infinite = np.flatnonzero(np.isinf(scores))
    if len(infinite):
        _score(texts[infinite[0]], path, int(numbers[infinite[0]]))
    return scores, scored


def _score(text, path, number):
    """The score of a prediction line; None for a header (a first line whose score is no number).

    An infinite score, ``inf`` or ``-inf``, is refused with its file and line: a score
    outside [0, 1] is read as it is (above or below every threshold), but no score
    is infinite (``-inf`` would vanish into the 0 of an absent pair, ``inf`` into
    the value matrix, which must be finite).
    """
    try:
        score = float(text)
    except ValueError:
        if number == 1:
            return None
        raise InputError(f"predictions file {path}, line {number}: the score {text!r} is not a number") from None
    if np.isinf(score):
        raise InputError(f"predictions file {path}, line {number}: the score {text!r} is infinite")
    return score


_SAFE_ID = re.compile(r"\S+")


def write_cafa_predictions(path, values, hierarchy, ids=None, *, float_format=None):
    """Write an (M, K) value matrix as CAFA predictions: one ``target<TAB>term<TAB>score`` line per pair.

    Parameters
    ----------
    path : str, Path or text file
        The file written (replaced, all at once, only when every line is written; ``-``
        is standard output, as for :func:`hmcpgm.io.write_matrix`), or an open text file.
    values : array-like of shape (M, K)
        Scores in [0, 1] (e.g. mLPRs), columns in ``hierarchy.classes`` order.
    hierarchy : Hierarchy
        Names the terms.
    ids : sequence of str, optional
        The targets (default: the row numbers from 1). Without whitespace.
    float_format : str, optional
        Format of the scores (``"%.3f"``, say). None (the default) writes each
        score in the fewest digits that read back as the same number, so the
        file is evaluated as the matrix is: a score rounded onto a threshold of
        the evaluation's grid (``%.6g`` wrote 0.0099999996 as 0.01) would count
        at that threshold.

    Returns
    -------
    int
        The number of lines written.

    Examples
    --------
    >>> import tempfile, os
    >>> h = Hierarchy.from_edges([("GO:1", "GO:2")])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "pred.tsv")
    ...     _ = write_cafa_predictions(p, [[0.9, 0.25]], h, ["P1"])
    ...     print(open(p).read().replace(chr(9), " | "), end="")   # tab-separated
    P1 | GO:1 | 0.9
    P1 | GO:2 | 0.25
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] != hierarchy.n_classes:
        raise InputError(f"values must have shape (n_objects, {hierarchy.n_classes}), got {values.shape}")
    ids = [str(i) for i in (range(1, len(values) + 1) if ids is None else ids)]
    if len(ids) != len(values):
        raise InputError(f"ids has {len(ids)} entries but values has {len(values)} rows")
    bad = next((i for i in ids + [str(c) for c in hierarchy.classes] if not _SAFE_ID.fullmatch(i)), None)
    if bad is not None:
        raise InputError(f"CAFA predictions are whitespace separated, so ids and terms cannot hold spaces: {bad!r}")
    terms = [str(c) for c in hierarchy.classes]

    def write(fh):
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        for target, row in zip(ids, values):
            scores = row.tolist() if float_format is None else [float_format % v for v in row]  # repr: exact
            writer.writerows(zip(repeat(target), terms, scores))

    if hasattr(path, "write"):  # an open text file (e.g. the command line's safe writer)
        write(path)
    else:
        from ._atomic import atomic_write

        with atomic_write(path) as fh:  # replaced only once every line is written
            write(fh)
    return values.size
