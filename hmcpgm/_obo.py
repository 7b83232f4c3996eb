"""The one OBO reader: obonet's graph of a file whose lines are first put in the form obonet parses.

obonet splits stanzas at blank lines only and reads a tag line with a regular
expression that needs whitespace before a comment's ``!``, cannot see a trailing
modifier holding ``}`` and splits a ``relationship`` value at single spaces. An OBO
file that other readers (pronto, cafaeval) read as intended then lost edges or terms
without a word, or was refused whole. Before obonet reads it, each line is stripped,
blank lines go and a blank line precedes every stanza header, and the tags whose
values are identifiers keep only those identifiers (the text up to an unescaped
``!`` or ``{``). A ``[Term]`` stanza keeps only the tags hmcpgm reads (id, name,
namespace, alt_id, is_a, relationship, is_obsolete): obonet then parses about half
of the Gene Ontology's lines. :func:`hmcpgm.ontology.read_ontology` and
:meth:`hmcpgm.Hierarchy.from_obo` both read through :func:`read_obo_graph`.
"""

import io
import logging
import re
from contextlib import contextmanager

from ._textfile import utf8_text
from ._util import preview, warn
from .exceptions import InputError

__all__ = ["normalised_obo_text", "read_obo_graph", "relation_names", "term_namespaces", "unescaped"]

#: tags whose value is one identifier (``relationship``: a relation and an identifier)
_IDENTIFIER_TAGS = frozenset({"id", "is_a", "alt_id", "namespace", "is_obsolete", "replaced_by", "consider",
                              "default-namespace", "relationship"})
#: the tags of a [Term] stanza that hmcpgm reads; the others (def, synonym, xref, ..., most of a GO term's lines)
#: are dropped before obonet parses the text
_TERM_TAGS = frozenset({"id", "name", "namespace", "alt_id", "is_a", "relationship", "is_obsolete"})
_STANZA = re.compile(r"\[[A-Za-z]+\]")
_VALUE_END = re.compile(r"[!{]")  # a comment or trailing modifier, in a value without escapes
_UNESCAPED_PREFIX = re.compile(r"(?:\\.|[^\\!{])*")  # a value up to an unescaped '!' or '{'
_WORD = re.compile(r"(?:\\.|[^\s\\])+")  # a word; an escaped space stays in it
_ESCAPE = re.compile(r"\\(.)")
_ESCAPED = {"n": "\n", "t": "\t", "W": " "}  # OBO's escapes (the 1.2 guide's table) that are not the character itself


def unescaped(text):
    r"""A tag value's text with OBO's escapes read: ``\"`` is ``"``, ``\!`` is ``!``, ``\n`` a new line, ``\W`` a
    space (the OBO 1.2 guide's table; pronto 2.7 reads it as ``W``), any other escaped character itself.

    >>> unescaped(r'a \"quoted\" name, a \{brace\} and a \! bang')
    'a "quoted" name, a {brace} and a ! bang'
    """
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), text) if "\\" in text else text


_URL = re.compile(r"(http|ftp)s?://")


def normalised_obo_text(text):
    """``text`` in the form obonet parses as OBO means it, and the ids of its terms.

    Parameters
    ----------
    text : str
        The contents of an OBO file.

    Returns
    -------
    str
        The same stanzas, one blank line before each stanza header and no other, lines
        stripped, comment lines dropped, identifier tags without comments or modifiers;
        a ``[Term]`` stanza holds only its id, name, namespace, alt_id, is_a,
        relationship and is_obsolete lines (and any line without a tag, which obonet
        refuses).
    dict
        The id of each ``[Term]`` stanza -> whether it is marked ``is_obsolete: true``
        (in any stanza of that id: the stanzas of one id are merged into its first, as
        OBO and pronto read them), in file order.

    Raises
    ------
    ValueError
        A ``[Term]`` or ``[Typedef]`` stanza without an id, naming its line.

    Examples
    --------
    >>> text, terms = normalised_obo_text(
    ...     "[Term]\\nid: GO:2\\n\\n  is_a: GO:1! root\\nrelationship: part_of\\tGO:3 {source=\\"a}b\\"}\\n")
    >>> print(text)
    <BLANKLINE>
    [Term]
    id: GO:2
    is_a: GO:1
    relationship: part_of GO:3
    <BLANKLINE>
    >>> terms
    {'GO:2': False}
    """
    header, stanzas, terms = [], [], {}
    first = {}  # term id -> its first stanza: a term's later stanzas are merged into it
    kind, start, term, is_obsolete, current = None, 0, None, False, header

    def close():
        if kind in ("[Term]", "[Typedef]") and not term:
            raise ValueError(f"line {start}: a {kind} stanza without an id")
        if kind != "[Term]":
            if kind is not None:
                stanzas.append(current)
        elif term in first:  # OBO merges the stanzas of one id (obonet would keep the last one's lists)
            merged = first[term]
            merged.extend(line for line in current[1:] if not line.startswith(("id:", "is_obsolete:")))
            if is_obsolete and not terms[term]:
                merged.append("is_obsolete: true")
            terms[term] = terms[term] or is_obsolete
        else:
            first[term] = current
            stanzas.append(current)
            terms[term] = is_obsolete

    # lines end at \n or \r only (str.splitlines would also split at U+2028, a form feed, ...)
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        line = line.strip()
        if not line or line[0] == "!":
            continue
        if line[0] == "[" and _STANZA.fullmatch(line):
            close()
            kind, start, term, is_obsolete, current = line, number, None, False, [line]
            continue
        tag, colon, value = line.partition(":")
        if kind == "[Term]" and tag not in _TERM_TAGS and tag and colon:
            continue
        if tag in _IDENTIFIER_TAGS and colon:
            value = " ".join(_identifiers(value, 2 if tag == "relationship" else 1))
            line = f"{tag}: {value}"
            if tag == "id":
                term = value
            elif tag == "is_obsolete":
                is_obsolete = value == "true"
        current.append(line)
    close()
    lines = header + [line for stanza in stanzas for line in ("", *stanza)]
    return "\n".join(lines) + "\n", terms


def _identifiers(value, n):
    """The first ``n`` identifiers of a tag's value: words up to an unescaped ``!`` or ``{`` (OBO's
    comment and trailing modifier), a backslash escaping the next character (``\\!``, ``\\ ``)."""
    if "\\" not in value:
        if "!" in value or "{" in value:
            value = _VALUE_END.split(value, maxsplit=1)[0]
        return value.split()[:n]
    return _WORD.findall(_UNESCAPED_PREFIX.match(value).group())[:n]


@contextmanager
def _quiet_root_logger():
    """obonet logs a header without name or ontology key through ``logging.warning``, which gives a logger
    without handlers one that prints ``WARNING:root:...`` (and keeps it for the rest of the process): while
    it reads, a root logger without handlers gets a null one. Handlers the user set are left alone."""
    root = logging.getLogger()
    null = None
    if not root.handlers:
        null = logging.NullHandler()
        root.addHandler(null)
    try:
        yield
    finally:
        if null is not None:
            root.removeHandler(null)


_USUAL_RELATIONS = ("is_a", "part_of")  # CAFA's; an ontology may lack part_of (the Human Phenotype Ontology)


def relation_names(relations):
    """The relation names asked for (a name or a collection of names), stripped; none is an error.

    Examples
    --------
    >>> relation_names(" is_a"), relation_names(("is_a", "part_of", ""))
    (['is_a'], ['is_a', 'part_of'])
    """
    names = [relations] if isinstance(relations, str) else list(relations)
    if not all(isinstance(r, str) for r in names):
        raise InputError(f"relations must be names of OBO relations, got {relations!r}")
    names = [r.strip() for r in names if r.strip()]
    if not names:
        raise InputError(f"relations names no relation, got {relations!r}; CAFA's are is_a and part_of")
    return names


def _check_relations_found(graph, names, path, what):
    """The relation names checked against the file's: none found is an error (a misspelt name would drop
    every edge), an unusual one missing is a warning."""
    found = {key for _, _, key in graph.edges(keys=True)}
    if found:
        listed = ", ".join(sorted(found))
        missing = [r for r in names if r not in found]
        if len(missing) == len(names):
            raise InputError(f"{what} {path} has no relation {', '.join(missing)} (its relations: {listed})")
        unusual = [r for r in missing if r not in _USUAL_RELATIONS]
        if unusual:
            warn(f"{what} {path} has no relation {', '.join(unusual)} (its relations: {listed})", UserWarning)


def read_obo_graph(path, relations, what="ontology file"):
    """obonet's MultiDiGraph of an OBO file (child -> parent edges keyed by relation), and its terms.

    Parameters
    ----------
    path : str or Path
        The OBO file, plain or gzip-compressed (told by its first bytes), UTF-8; or,
        as obonet reads them, a URL or a ``.bz2`` / ``.xz`` file.
    relations : list of str
        The relations the caller keeps (:func:`relation_names`). None of them in the
        file is an error (a misspelt name would drop every edge); one missing other
        than is_a and part_of is a warning. An edge of one of them to a term the file
        does not define (and does not mark obsolete) is reported in a warning. Such a
        node has no data in the graph, as has an obsolete term named as a parent.
    what : str
        What messages call the file.

    Returns
    -------
    networkx.MultiDiGraph
        Obsolete terms are left out (a node without data is the end of an edge).
    list of str
        The ids of the terms the file defines and does not mark obsolete, in file order
        (a term's node may have no data: a stanza with its id alone).

    Raises
    ------
    ImportError
        Without obonet (``pip install 'hmcpgm[obo]'``).
    InputError
        A file obonet cannot read, or one without any of ``relations``, in one line
        naming it.
    """
    try:
        import obonet
    except ImportError:
        raise ImportError("reading an OBO file needs obonet: pip install 'hmcpgm[obo]'") from None
    if isinstance(path, str) and _URL.match(path) or str(path).endswith((".bz2", ".xz")):
        try:  # obonet's opener: a URL, or compression told by the name
            with obonet.io.open_read_file(path, encoding="utf-8") as fh:
                content = fh.read()
        except Exception as exc:
            raise InputError(f"{what} {path}: cannot read it ({exc})") from None
    else:
        with utf8_text(path, what) as fh:
            content = fh.read()
    try:
        text, terms = normalised_obo_text(content)
        with _quiet_root_logger():
            graph = obonet.read_obo(io.StringIO(text))
    except Exception as exc:  # obonet raises plain exceptions on malformed files, some over several lines
        raise InputError(f"{what} {path}: cannot read it as OBO ({' '.join(str(exc).split())})") from None
    _check_relations_found(graph, relations, path, what)
    undefined = [(child, parent) for child, parent, relation in graph.edges(keys=True)
                 if relation in relations and parent not in terms]
    if undefined:
        warn(f"{what} {path}: {len(undefined)} {'/'.join(sorted(relations))} edges point to terms the "
             f"file does not define, and are left out: {preview([f'{c} -> {p}' for c, p in undefined])}", UserWarning)
    return graph, [t for t, obsolete in terms.items() if not obsolete]


def term_namespaces(graph, terms):
    """The namespace of each term (None where it names none).

    When no term names its namespace (the Human Phenotype Ontology), every term is in the
    header's ``default-namespace``.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
    terms : list of str
        The graph and terms of :func:`read_obo_graph`.

    Returns
    -------
    dict
        Term id -> namespace, in the order of ``terms``.
    """
    default = None
    if not any(graph.nodes[t].get("namespace") for t in terms):
        default = (graph.graph.get("default-namespace") or [None])[0]
    return {t: graph.nodes[t].get("namespace", default) for t in terms}
