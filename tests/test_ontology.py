"""hmcpgm.ontology: OBO per namespace, restricted hierarchies, annotations (two columns, GAF), CAFA files."""

import warnings

import numpy as np
import pytest
from go_fixtures import NAMESPACES, live_terms, obo_text, parents_within, random_ontology
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import Hierarchy
from hmcpgm.exceptions import InputError
from hmcpgm.ontology import (
    CAFA,
    CAFA5,
    EVIDENCE_CODES,
    EXPERIMENTAL,
    HIGH_THROUGHPUT,
    MANUAL,
    evidence_codes,
    is_annotation_file,
    is_obo_file,
    read_annotations,
    read_cafa_predictions,
    read_ontology,
    restrict_hierarchy,
    write_cafa_predictions,
)

pytest.importorskip("obonet")


@pytest.fixture
def go(tmp_path):
    terms = random_ontology(np.random.default_rng(7), (8, 6))
    path = tmp_path / "go.obo"
    path.write_text(obo_text(terms))
    return terms, path


def test_obo_gives_one_hierarchy_per_namespace_with_is_a_and_part_of_only(go):
    terms, path = go
    onto = read_ontology(path)
    assert onto.namespaces == NAMESPACES
    for ns in NAMESPACES:
        h = onto.hierarchy(ns)
        assert h.classes == tuple(live_terms(terms, ns))  # obsolete term left out, file order kept
        expected = {(p, t) for t in live_terms(terms, ns) for p in parents_within(terms, t)}  # no regulates, no
        assert set(h.edges) == expected  # cross-namespace edge
    assert onto.names["GO:0000001"] == terms["GO:0000001"]["name"]
    alt = next(a for t, d in terms.items() for a in d["alt_id"])
    assert onto.canonical(alt) == tuple(t for t, d in terms.items() if alt in d["alt_id"])
    is_a = read_ontology(path, relations=("is_a",)).hierarchy(NAMESPACES[0])
    ns = NAMESPACES[0]
    assert set(is_a.edges) == {(p, t) for t in live_terms(terms, ns) for p in terms[t]["is_a"]
                               if terms[p]["namespace"] == ns}
    with pytest.raises(InputError, match="choose one with namespace"):
        onto.hierarchy()
    with pytest.raises(InputError, match="namespace 'cellular_component' is not in the ontology"):
        onto.hierarchy("cellular_component")


@pytest.mark.parametrize("reader", ["read_ontology", "Hierarchy.from_obo"])
def test_misspelt_relations_are_refused_or_warned_not_silently_dropped(go, reader):
    """'is-a' kept no edge at all and the metrics changed silently. Hierarchy.from_obo took ('is_a', 1) and
    ('is_a', 'partof') without a word: it now checks the names as read_ontology does."""
    _, path = go
    ns = NAMESPACES[0]

    def edges(relations):
        if reader == "read_ontology":
            return read_ontology(path, relations=relations).hierarchy(ns).edges
        return Hierarchy.from_obo(path, relations, namespace=ns).edges

    for relations in ("is-a", ("isa", "partof"), ()):
        with pytest.raises(InputError, match="no relation"):
            edges(relations)
    with pytest.warns(UserWarning, match=r"has no relation partof \(its relations: is_a, part_of, regulates\)") as w:
        partial = edges(("is_a", "partof"))
    assert {x.filename for x in w} == {__file__}  # attributed to the caller, not to hmcpgm's own frames
    assert partial == edges("is_a") == edges((" is_a", ""))
    with pytest.raises(InputError, match="relations must be names"):
        edges((1, 2))
    with pytest.raises(InputError, match="relations must be names"):
        edges(("is_a", 1))


def test_a_header_without_name_or_ontology_prints_nothing_and_configures_no_logging(tmp_path):
    """obonet's logging.warning gave the root logger a handler that printed 'WARNING:root:...'."""
    import logging
    import subprocess
    import sys

    path = tmp_path / "bare.obo"
    path.write_text("format-version: 1.2\n\n[Term]\nid: T:1\nnamespace: n\n\n[Term]\nid: T:2\nnamespace: n\n"
                    "is_a: T:1\n")
    code = ("import logging; from hmcpgm.ontology import read_ontology; "
            f"o = read_ontology({str(path)!r}); print(o.hierarchy().edges, logging.getLogger().handlers)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "(('T:1', 'T:2'),) []" and run.stderr == ""
    before = list(logging.getLogger().handlers)
    assert read_ontology(path).hierarchy().edges == (("T:1", "T:2"),)
    assert logging.getLogger().handlers == before


def test_files_are_told_apart(go, tmp_path):
    _, path = go
    assert is_obo_file(path)
    (tmp_path / "h.csv").write_text("parent,child\nA,B\n")
    (tmp_path / "labels.csv").write_text("A,B\n1,0\n")
    (tmp_path / "pairs.tsv").write_text("g1\tGO:0000002\ng2\tGO:0000003\n")
    (tmp_path / "a.gaf").write_text("!gaf-version: 2.2\nUniProtKB\tP1\tX\t\tGO:0000002\tREF\tIEA\t\tP\t\t\tprotein\t"
                                    "taxon:1\t20200101\tUniProt\n")
    assert not is_obo_file(tmp_path / "h.csv")
    for first in ("! generated\n\nformat-version: 1.2\n\n", "data-version: x\n", "ontology: go\n\n", "  "):
        (tmp_path / "onto.txt").write_text(first + "[Term]\nid: GO:1\nnamespace: bp\n")
        assert is_obo_file(tmp_path / "onto.txt"), first  # no .obo name: told by its first line
        assert read_ontology(tmp_path / "onto.txt").hierarchy().classes == ("GO:1",)
    assert read_ontology(tmp_path / "h.csv").namespaces == ("all",)
    assert not is_annotation_file(tmp_path / "labels.csv")
    assert is_annotation_file(tmp_path / "pairs.tsv") and is_annotation_file(tmp_path / "a.gaf")


@settings(max_examples=60, deadline=None)
@given(h=dags(max_classes=9), data=st.data())
def test_restricted_hierarchy_keeps_the_ancestor_order_among_the_kept_classes(h, data):
    kept = data.draw(st.lists(st.sampled_from(h.classes), min_size=1, unique=True))
    r = restrict_hierarchy(h, kept)
    assert r.classes == tuple(kept)
    for c in kept:
        assert set(r.ancestors(c)) == set(h.ancestors(c)) & set(kept)
        for p in r.parents(c):  # no shortcut edge: a parent is not above another kept ancestor
            assert not any(p in h.ancestors(b) for b in r.ancestors(c))


def _restricted_by_networkx(h, kept):
    """The reference: the ancestor order among the kept classes (networkx ancestors), transitively reduced."""
    import networkx as nx

    g = h.to_networkx()
    keep = set(kept)
    closure = nx.DiGraph()
    closure.add_nodes_from(kept)
    closure.add_edges_from((a, c) for c in kept for a in nx.ancestors(g, c) & keep)
    return set(nx.transitive_reduction(closure).edges)


@pytest.mark.parametrize("seed", range(4))
def test_restricted_hierarchy_equals_networkx_on_larger_random_dags(seed):
    rng = np.random.default_rng(seed)
    n = 300
    edges = [(f"t{p}", f"t{i}") for i in range(1, n) for p in set(rng.integers(0, i, size=rng.integers(1, 4)).tolist())]
    edges += [("u0", "u1"), ("u1", "u2"), ("u0", "u2")]  # a second component, with a shortcut edge
    names = [f"t{i}" for i in range(n)] + ["u0", "u1", "u2"]
    h = Hierarchy.from_edges(edges, classes=[names[i] for i in rng.permutation(len(names))])
    for share in (0.05, 0.5, 1.0):
        kept = [h.classes[i] for i in rng.permutation(h.n_classes)[:max(1, int(share * h.n_classes))]]
        r = restrict_hierarchy(h, kept)
        assert r.classes == tuple(kept)
        assert set(r.edges) == _restricted_by_networkx(h, kept)


def test_restricting_a_hierarchy_walks_it_once_not_once_per_class(monkeypatch):
    # the hot spot on large DAGs: an ancestor walk (a (K,) array) per kept class, then every pair of kept
    # ancestors; the kept ancestors now come from one pass in topological order, with no dense (K, K) matrix
    rng = np.random.default_rng(3)
    h = Hierarchy.from_parents([None] + [sorted(set(rng.integers(0, i, size=2).tolist())) for i in range(1, 60)])
    kept = list(h.classes[::2])
    expected = _restricted_by_networkx(h, kept)

    def walk(self, name):
        raise AssertionError("restrict_hierarchy walked the hierarchy once per class")

    monkeypatch.setattr(Hierarchy, "ancestors", walk)
    monkeypatch.setattr(Hierarchy, "descendants", walk)
    assert set(restrict_hierarchy(h, kept).edges) == expected
    assert "ancestor_matrix" not in vars(h)


def test_annotations_are_closed_upward_along_the_full_ontology(go, tmp_path):
    terms, path = go
    onto = read_ontology(path)
    full = onto.hierarchy(NAMESPACES[0])
    deep = full.classes[-1]
    kept = [c for c in full.classes if c != deep and c not in full.roots]
    h = restrict_hierarchy(full, kept)
    alt = terms[deep]["alt_id"][0]
    ann = tmp_path / "ann.tsv"
    ann.write_text(f"g1\t{deep}\ng2\t{alt}\ng3\tGO:9999999\ng4\t{onto.hierarchy(NAMESPACES[1]).classes[0]}\n")
    with pytest.warns(UserWarning, match="1 annotation line .* not in the ontology .*'GO:9999999'"):
        ids, y = read_annotations(ann, h, onto)
    assert list(ids) == ["g1", "g2"]  # g3: unknown term, g4: another namespace
    expected = [int(c in full.ancestors(deep)) for c in h.classes]
    np.testing.assert_array_equal(y, [expected, expected])


def test_gaf_not_qualifier_is_left_out(tmp_path):
    h = Hierarchy.from_edges([("GO:1", "GO:2")])
    row = "UniProtKB\t{}\tsym\t{}\t{}\tREF\tIEA\t\tP\tname\t\tprotein\ttaxon:1\t20200101\tUniProt\n"
    (tmp_path / "a.gaf").write_text("!gaf-version: 2.2\n" + row.format("P1", "", "GO:2")
                                    + row.format("P2", "NOT", "GO:2") + row.format("P2", "", "GO:1"))
    ids, y = read_annotations(tmp_path / "a.gaf", h)
    assert list(ids) == ["P1", "P2"]
    np.testing.assert_array_equal(y, [[1, 1], [1, 0]])


# A hand-made GAF over r -> a, r -> b, a -> c, b -> c, a -> d (columns out of topological order): mixed evidence
# codes, NOT lines (one with an experimental code), an exact duplicate line and a pair given under two codes.
EVIDENCE_HIERARCHY = Hierarchy.from_edges([("a", "c"), ("r", "a"), ("b", "c"), ("r", "b"), ("a", "d")],
                                          classes=["c", "a", "r", "d", "b"])
EVIDENCE_LINES = [  # (gene, qualifier, term, evidence code)
    ("P1", "", "c", "EXP"),
    ("P1", "", "d", "IEA"),
    ("P2", "", "b", "IDA"),
    ("P2", "", "d", "ISS"),
    ("P3", "", "a", "IEA"),
    ("P4", "", "d", "TAS"),
    ("P4", "NOT", "b", "EXP"),  # NOT: left out whatever its code
    ("P5", "", "r", "ND"),
    ("P1", "", "c", "EXP"),  # the first line again
    ("P2", "", "b", "IDA"),  # the third line again
    ("P2", "", "b", "IEA"),  # the same pair under another code
    ("P6", "NOT", "a", "IDA"),  # P6 has NOT lines only
    ("P4", "contributes_to", "a", "IC"),  # a qualifier other than NOT: kept
]


def _gaf(path, lines, header=True):
    row = "UniProtKB\t{}\tsym\t{}\t{}\tPMID:1\t{}\t\tP\tname\t\tprotein\ttaxon:9606\t20240101\tGO_Central\t\t\n"
    path.write_text(("!gaf-version: 2.2\n" if header else "") + "".join(row.format(*line) for line in lines))
    return path


# Worked by hand. Closed upward: c -> {c, a, b, r}, d -> {d, a, r}, b -> {b, r}, a -> {a, r}, r -> {r};
# columns c, a, r, d, b; genes in the order of their first kept line.
EVIDENCE_EXPECTED = {
    None: (["P1", "P2", "P3", "P4", "P5"], [[1, 1, 1, 1, 1],    # P1: c (EXP), d (IEA)
                                            [0, 1, 1, 1, 1],    # P2: b (IDA, IEA), d (ISS)
                                            [0, 1, 1, 0, 0],    # P3: a (IEA)
                                            [0, 1, 1, 1, 0],    # P4: d (TAS), a (IC); b is NOT
                                            [0, 0, 1, 0, 0]]),  # P5: r (ND)
    "experimental": (["P1", "P2"], [[1, 1, 1, 0, 1],   # P1: c (EXP)
                                    [0, 0, 1, 0, 1]]),  # P2: b (IDA); P4's EXP line is NOT, P6's IDA too
    "cafa": (["P1", "P2", "P4"], [[1, 1, 1, 0, 1], [0, 0, 1, 0, 1],
                                  [0, 1, 1, 1, 0]]),  # P4: d (TAS), a (IC)
    "IEA": (["P1", "P3", "P2"], [[0, 1, 1, 1, 0],    # P1: d only (line 2); its EXP line c is not IEA
                                 [0, 1, 1, 0, 0],    # P3: a (line 5)
                                 [0, 0, 1, 0, 1]]),  # P2: b (line 11, its first IEA line)
    "iss, ND": (["P2", "P5"], [[0, 1, 1, 1, 0], [0, 0, 1, 0, 0]]),
    "manual": (["P1", "P2", "P4", "P5"], [[1, 1, 1, 0, 1], [0, 1, 1, 1, 1], [0, 1, 1, 1, 0], [0, 0, 1, 0, 0]]),
}


@pytest.mark.parametrize("evidence", list(EVIDENCE_EXPECTED))
@pytest.mark.parametrize("header", [True, False])
def test_gaf_evidence_filter_gives_the_matrices_worked_by_hand(tmp_path, evidence, header):
    path = _gaf(tmp_path / "a.gaf", EVIDENCE_LINES, header)
    ids, y = read_annotations(path, EVIDENCE_HIERARCHY, evidence=evidence)
    genes, expected = EVIDENCE_EXPECTED[evidence]
    assert ids.tolist() == genes
    np.testing.assert_array_equal(y, expected)
    assert y.dtype == np.int8


def test_gaf_evidence_filter_by_a_collection_equals_the_named_set_and_every_code_keeps_every_line(tmp_path):
    path = _gaf(tmp_path / "a.gaf", EVIDENCE_LINES)
    for name, codes in [("cafa", CAFA), ("experimental", EXPERIMENTAL), ("manual", MANUAL)]:
        by_name = read_annotations(path, EVIDENCE_HIERARCHY, evidence=name)
        by_codes = read_annotations(path, EVIDENCE_HIERARCHY, evidence=sorted(codes))
        assert by_name[0].tolist() == by_codes[0].tolist() and np.array_equal(by_name[1], by_codes[1])
    every = read_annotations(path, EVIDENCE_HIERARCHY, evidence=EVIDENCE_CODES)
    unfiltered = read_annotations(path, EVIDENCE_HIERARCHY)
    assert every[0].tolist() == unfiltered[0].tolist() and np.array_equal(every[1], unfiltered[1])


def test_named_evidence_sets_are_the_sources_lists():
    # the GO Consortium's Guide to GO evidence codes: experimental and high-throughput codes; IEA the one code no
    # curator assigns; the README of the CAFA3 final benchmark: EXP, IDA, IPI, IMP, IGI, IEP, TAS and IC; the CAFA 5
    # data page: experimental or high-throughput evidence, TAS or IC
    assert EXPERIMENTAL == {"EXP", "IDA", "IPI", "IMP", "IGI", "IEP"}
    assert HIGH_THROUGHPUT == {"HTP", "HDA", "HMP", "HGI", "HEP"}
    assert CAFA == {"EXP", "IDA", "IPI", "IMP", "IGI", "IEP", "TAS", "IC"}
    assert CAFA5 == CAFA | {"HTP", "HDA", "HMP", "HGI", "HEP"}
    guide = {"EXP", "IDA", "IPI", "IMP", "IGI", "IEP", "HTP", "HDA", "HMP", "HGI", "HEP", "IBA", "IBD", "IKR", "IRD",
             "ISS", "ISO", "ISA", "ISM", "IGC", "RCA", "TAS", "NAS", "IC", "ND", "IEA"}
    assert EVIDENCE_CODES == guide | {"IMR"} and MANUAL == EVIDENCE_CODES - {"IEA"}
    assert evidence_codes("cafa,HTP") == CAFA | {"HTP"}
    assert evidence_codes(["Experimental", "high_throughput", " iba "]) == EXPERIMENTAL | HIGH_THROUGHPUT | {"IBA"}


@pytest.mark.parametrize("evidence, message", [
    ("EXP,XYZ", r"^evidence: 'XYZ' is neither a GO evidence code \(EXP, .*\) nor a named set of them \(experimental, "),
    (["IDA", 7], r"^evidence: 7 is neither a GO evidence code"),
    ("", r"^evidence: no evidence code given \(got ''\)"),
    ([], r"^evidence: no evidence code given \(got \[\]\)"),
    (" , ", r"^evidence: no evidence code given"),
])
def test_unknown_or_no_evidence_codes_are_refused_in_one_line(tmp_path, evidence, message):
    path = _gaf(tmp_path / "a.gaf", EVIDENCE_LINES)
    with pytest.raises(InputError, match=message) as info:
        read_annotations(path, EVIDENCE_HIERARCHY, evidence=evidence)
    assert "\n" not in str(info.value)


def test_an_evidence_filter_on_a_file_without_evidence_column_or_keeping_no_line_is_refused(tmp_path):
    (tmp_path / "two.tsv").write_text("P1\tc\nP2\tb\n")
    (tmp_path / "train_terms.tsv").write_text("EntryID\tterm\taspect\nP1\tc\tBPO\n")
    for name, genes in (("two.tsv", ["P1", "P2"]), ("train_terms.tsv", ["P1"])):
        assert read_annotations(tmp_path / name, EVIDENCE_HIERARCHY)[0].tolist() == genes  # read without a filter
        with pytest.raises(InputError, match=f"{name} has no evidence column .* an evidence filter cannot apply to it"):
            read_annotations(tmp_path / name, EVIDENCE_HIERARCHY, evidence="cafa")
    path = _gaf(tmp_path / "a.gaf", EVIDENCE_LINES)
    # the codes of the lines other than NOT ones, most frequent first: IEA 3, EXP 2, IDA 2, ISS, TAS, ND, IC 1 each
    with pytest.raises(InputError, match=r"a.gaf: no line has an evidence code of evidence \(IBA, IKR\); its "
                                         r"lines have IEA \(3\), EXP \(2\), IDA \(2\), ISS \(1\), TAS \(1\), "
                                         r"ND \(1\), IC \(1\)$"):
        read_annotations(path, EVIDENCE_HIERARCHY, evidence="IBA,IKR")
    only_not = _gaf(tmp_path / "not.gaf", [line for line in EVIDENCE_LINES if line[1] == "NOT"])
    with pytest.raises(InputError, match="no annotation line other than NOT ones"):
        read_annotations(only_not, EVIDENCE_HIERARCHY, evidence="experimental")


def test_cafa_predictions_round_trip_and_keep_the_largest_score(tmp_path):
    h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:1", "GO:3")])
    values = np.array([[0.9, 0.125, 0.5], [0.25, 0.0, 1.0]])
    write_cafa_predictions(tmp_path / "p.tsv", values, h, ["A", "B"])
    with open(tmp_path / "p.tsv", "a") as fh:
        fh.write("A GO:2 0.75\nA GO:2 0.5\nC GO:1 1.0\n")
    got = read_cafa_predictions(tmp_path / "p.tsv", h, ["B", "A", "D"])
    np.testing.assert_array_equal(got, [[0.25, 0.0, 1.0], [0.9, 0.75, 0.5], [0, 0, 0]])
    with pytest.raises(InputError, match="cannot hold spaces"):
        write_cafa_predictions(tmp_path / "q.tsv", values, h, ["A 1", "B"])


def test_written_predictions_read_back_as_the_same_numbers_so_evaluate_as_the_matrix(tmp_path):
    """audit56: scores were written with %.6g: 0.0099999996 became 0.01, which reaches the grid's threshold 0.01
    (cafaeval compares pred >= tau exactly), so the file scored Fmax 1.0 where the matrix scored 0.667."""
    from hmcpgm.metrics import fmax

    h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:1", "GO:3")])
    rng = np.random.default_rng(0)
    values = np.vstack([[[0.9, 0.0099999996, 1e-300]], rng.random((20, 3)), rng.random((5, 3)) * 1e-9])
    ids = [f"T{i}" for i in range(len(values))]
    write_cafa_predictions(tmp_path / "p.tsv", values, h, ids)
    np.testing.assert_array_equal(read_cafa_predictions(tmp_path / "p.tsv", h, ids), values)  # every bit
    read = read_cafa_predictions(tmp_path / "p.tsv", h, ids[:1])  # T0 annotated GO:1 and GO:2
    assert fmax(read, [[1, 1, 0]], h).value == fmax(values[:1], [[1, 1, 0]], h).value == pytest.approx(2 / 3)
    write_cafa_predictions(tmp_path / "q.tsv", values[:1], h, ["A"], float_format="%.2f")  # a format still applies
    assert (tmp_path / "q.tsv").read_text().split() == ["A", "GO:1", "0.90", "A", "GO:2", "0.01", "A", "GO:3", "0.00"]


def test_a_term_whose_name_holds_a_space_is_read_from_a_tab_separated_prediction_line(tmp_path):
    """An edge-list ontology may name a term "R 1"; its prediction lines were split at the space, read as term "R"
    and left out without a word, while the ground truth's reader (tabs first) read "R 1" (a review, audit45)."""
    h = Hierarchy.from_edges([("R 1", "a"), ("R 1", "b")])
    (tmp_path / "p.tsv").write_text("T1\tR 1\t0.9\nT1\ta\t0.1\nT2 \t R 1 \t0.8 x\t\tx y\nT2 b 0.3\nT2\t\tb\t0.4\n")
    (tmp_path / "t.tsv").write_text("T1\tR 1\nT2\tb\n")
    got = read_cafa_predictions(tmp_path / "p.tsv", h, ["T1", "T2"])  # padded fields stripped, empty ones dropped
    np.testing.assert_array_equal(got, [[0.9, 0.1, 0.0], [0.8, 0.0, 0.4]])
    ids, labels = read_annotations(tmp_path / "t.tsv", h)
    assert ids.tolist() == ["T1", "T2"] and labels.tolist() == [[1, 0, 0], [1, 0, 1]]


def test_prediction_lines_of_names_without_spaces_are_split_as_cafaeval_splits_them(tmp_path):
    """A tab beside a space split the line at its tabs alone, whatever its names: a trailing tab, a space after a
    tab or a word after the score dropped or refused lines cafaeval reads (a review of that change, audit46)."""
    h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:1", "GO:3")])
    for text in ["T1 GO:2 0.7\t\nT1 GO:3 0.4 \t\n", "T1\tGO:2 0.7\nT1\tGO:3 0.4\n",
                 "T1\tGO:2\t0.7 x\nT1\tGO:3\t0.4 x\n", "T1\tGO:2\t0.7 \r\nT1\tGO:3\t 0.4\r\n"]:
        with open(tmp_path / "p.txt", "w", newline="") as fh:
            fh.write(text)
        cafaeval = {t: float(p) for _, t, p in (line.split()[:3] for line in text.splitlines())}
        np.testing.assert_array_equal(read_cafa_predictions(tmp_path / "p.txt", h, ["T1"]),
                                      [[0.0, cafaeval["GO:2"], cafaeval["GO:3"]]])


def test_a_cafa_submissions_header_and_end_lines_are_skipped_without_a_warning(tmp_path):
    """AUTHOR, MODEL and END lines (fewer than three fields) were counted as malformed prediction lines."""

    h = Hierarchy.from_edges([("GO:1", "GO:2")])
    (tmp_path / "p.txt").write_text("AUTHOR team\nMODEL 1\nKEYWORDS sequence alignment, homolog.\nA GO:2 0.75\n"
                                    "A GO:1 0.8\nEND\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(read_cafa_predictions(tmp_path / "p.txt", h, ["A"]), [[0.8, 0.75]])
    (tmp_path / "p.txt").write_text("A GO:2 0.75\nA GO:1\n")
    with pytest.warns(UserWarning, match="1 lines of predictions file .* fewer than the three fields"):
        read_cafa_predictions(tmp_path / "p.txt", h, ["A"])


def test_plot_hierarchy_writes_term_names(go):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hmcpgm.plot import plot_hierarchy

    _, path = go
    onto = read_ontology(path)
    h = onto.hierarchy(NAMESPACES[1])
    ax = plot_hierarchy(h, labels={**onto.names, h.classes[0]: "the root"})
    texts = {t.get_text() for t in ax.texts}
    assert "the root" in texts and {onto.names[c] for c in h.classes[1:]} <= texts
    plt.close("all")


def _quirky(text, rng):
    """The same ontology as ``text``, written the ways OBO allows and obonet alone misread (each line at random):
    indented, ``!`` right after an identifier, blank lines inside a stanza, none before a stanza header, two
    spaces or a tab inside a relationship, a quoted modifier holding a brace, comment blocks between blank
    lines, Windows line ends."""
    out = ["! a comment block before the header", ""]
    for line in text.split("\n"):
        if line.startswith(("is_a:", "relationship:")):
            if rng.random() < 0.4:
                line = line.replace(" !", "!")
            if rng.random() < 0.4 and "!" in line:
                line = line.replace("!", '{source="a}b", note="x"} !', 1)
            if line.startswith("relationship:") and rng.random() < 0.5:
                tag, rel, rest = line.split(" ", 2)
                line = f"{tag} {rel}{str(rng.choice(['  ', chr(9), ' ' + chr(9)]))}{rest}"
        if not line and rng.random() < 0.3:  # no blank line before the next stanza
            continue
        if line and rng.random() < 0.3:
            line = str(rng.choice([" ", "  ", chr(9)])) + line + str(rng.choice(["", " ", chr(9)]))
        out.append(line)
        if line.strip() and not line.strip().startswith("[") and rng.random() < 0.15:
            out += [[""], ["  "], ["", "! a comment inside a stanza", ""]][rng.integers(3)]
    return "\r\n".join(out) if rng.random() < 0.5 else "\n".join(out)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_obo_quirks_read_as_the_plain_file(tmp_path_factory, seed):
    """Indented lines were skipped, 'is_a: GO:1! x' and a modifier holding '}' lost the edge, a blank line
    inside a stanza cut it, two spaces in a relationship refused the whole file, a comment block replaced the
    header: obonet's reading of lawful OBO (pronto and cafaeval read it as intended). Hierarchy.from_obo
    reads the same way."""
    rng = np.random.default_rng(seed)
    terms = random_ontology(rng, (6, 5))
    folder = tmp_path_factory.mktemp("quirks")
    plain, quirky = folder / "plain.obo", folder / "quirky.obo"
    plain.write_text(obo_text(terms))
    quirky.write_bytes(_quirky(obo_text(terms), rng).encode())
    for relations in (("is_a", "part_of"), ("is_a", "part_of", "regulates")):
        want, got = read_ontology(plain, relations), read_ontology(quirky, relations)
        assert got.namespaces == want.namespaces
        for ns in want.namespaces:
            assert got.hierarchy(ns) == want.hierarchy(ns)
            assert set(want.hierarchy(ns).edges) >= {(p, t) for t in live_terms(terms, ns)
                                                     for p in parents_within(terms, t)}
        assert dict(got.names) == dict(want.names) and dict(got.alt_ids) == dict(want.alt_ids)
        for ns in (None, NAMESPACES[0]):
            assert Hierarchy.from_obo(quirky, relations, namespace=ns) == Hierarchy.from_obo(plain, relations,
                                                                                             namespace=ns)


def test_an_edge_to_a_term_the_file_does_not_define_is_left_out_with_a_warning(tmp_path):
    """An edge whose parent obonet misread (or the file forgot) vanished without a word; an obsolete parent
    is left out silently, as documented."""

    path = tmp_path / "mini.obo"
    path.write_text("[Term]\nid: GO:1\nnamespace: bp\n\n[Term]\nid: GO:2\nnamespace: bp\nis_a: GO:1\nis_a: GO:9\n"
                    "relationship: regulates GO:8\n\n[Term]\nid: GO:3\nnamespace: bp\nis_a: GO:5\n\n"
                    "[Term]\nid: GO:5\nnamespace: bp\nis_obsolete: true ! gone\n")
    for read in (lambda: read_ontology(path).hierarchy(), lambda: Hierarchy.from_obo(path)):
        with pytest.warns(UserWarning, match=r"1 is_a/part_of edges point to terms the file does not define, and "
                                             r"are left out: \['GO:2 -> GO:9'\]"):
            h = read()
        assert set(h.classes) == {"GO:1", "GO:2", "GO:3"} and h.edges == (("GO:1", "GO:2"),)
    path.write_text(path.read_text().replace("is_a: GO:9\n", ""))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_ontology(path).hierarchy().edges == (("GO:1", "GO:2"),)  # regulates: not asked for


def test_hierarchy_from_obo_reads_as_read_ontology_does(tmp_path):
    """Hierarchy.from_obo gave a traceback without a blank line before [Term] or on a gzip file without a .gz
    name, found no term of the header's default-namespace, and left a handler on the root logger."""
    import gzip
    import logging

    hpo = ("format-version: 1.2\ndefault-namespace: human_phenotype\n[Term]\nid: HP:1\n[Term]\nid: HP:2\n"
           "is_a: HP:1 ! all\n")
    (tmp_path / "hp.obo").write_text(hpo)
    (tmp_path / "hp.dat").write_bytes(gzip.compress(hpo.encode()))
    before = list(logging.getLogger().handlers)
    for name in ("hp.obo", "hp.dat"):
        want = read_ontology(tmp_path / "hp.obo").hierarchy("human_phenotype")
        assert want.edges == (("HP:1", "HP:2"),)
        assert Hierarchy.from_obo(tmp_path / name, namespace="human_phenotype") == want
        assert Hierarchy.from_obo(tmp_path / name) == want
    assert logging.getLogger().handlers == before
    (tmp_path / "no_id.obo").write_text("[Term]\nid: GO:1\n\n[Term]\nname: nameless\n")
    for read in (read_ontology, Hierarchy.from_obo):
        with pytest.raises(InputError, match=r"no_id.obo: cannot read it as OBO \(line 4: a \[Term\] stanza "
                                             r"without an id\)"):
            read(tmp_path / "no_id.obo")
    (tmp_path / "bad.obo").write_bytes(b"[Term]\nid: GO:1\nname: caf\xe9\n")
    with pytest.raises(InputError, match="is not UTF-8"):
        Hierarchy.from_obo(tmp_path / "bad.obo")


def test_a_whitespace_separated_annotation_line_with_a_comma_in_a_later_column(tmp_path):
    """'T1 GO:2 IDA,PMID:1' was split at the comma (target 'T1 GO:2 IDA', term 'PMID:1') and, as the first line,
    dropped as a header; cafaeval reads target T1, term GO:2. A CSV row still splits at its commas."""
    obo = tmp_path / "go.obo"
    obo.write_text("[Term]\nid: GO:1\nnamespace: bp\n\n[Term]\nid: GO:2\nnamespace: bp\nis_a: GO:1\n")
    onto = read_ontology(obo)
    for text in ("T1 GO:2 IDA,PMID:1\nT2 GO:1 TAS\n", "T1,GO:2,IDA\nT2, GO:1\n", "T1\tGO:2\tIDA, x\nT2\tGO:1\n"):
        (tmp_path / "gt.txt").write_text(text)
        ids, labels = read_annotations(tmp_path / "gt.txt", onto.hierarchy(), onto)
        assert list(ids) == ["T1", "T2"] and labels.tolist() == [[1, 1], [1, 0]], text


def test_an_annotation_line_split_at_a_tab_and_a_space_and_a_first_line_naming_an_unknown_term(tmp_path):
    """'T1<tab>GO:2 IDA' was read as term 'GO:2 IDA' and, as the first line, dropped as a header without a word;
    cafaeval reads GO:2. A first line naming an unknown term shaped like the hierarchy's classes, for a target
    like the others, was dropped as a header too; it is data, and warned of. A header still goes silently, and a
    tab field that names a class keeps its space ('gene 1')."""
    h = Hierarchy.from_edges([("GO:1", "GO:2"), ("GO:1", "GO:3")])
    path = tmp_path / "gt.tsv"
    for text, want_ids, warned in [
        ("T1\tGO:2 IDA\nT2\tGO:3\n", ["T1", "T2"], None),
        ("T1\t GO:2\t\nT2\tGO:3 x y\n", ["T1", "T2"], None),
        ("gene 1\tGO:2\nT2\tGO:3\n", ["gene 1", "T2"], None),
        ("T1 GO:2\tIDA\nT2\t\tGO:3\n", ["T1", "T2"], None),
        ("T1\tGO:2\u00a0IDA\nT2\tGO:3\n", ["T1", "T2"], None),
        ("T0\tGO:9\nT1\tGO:2\nT2\tGO:3\n", ["T1", "T2"], "GO:9"),
        ("EntryID\tterm\taspect\nT1\tGO:2\tBPO\nT2\tGO:3\tBPO\n", ["T1", "T2"], None),
        ("target term\nT1 GO:2\n", ["T1"], None),
    ]:
        path.write_text(text)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ids, labels = read_annotations(path, h)
        assert ids.tolist() == want_ids, text
        assert labels.tolist() == [[1, 1, 0] if i != "T2" else [1, 0, 1] for i in want_ids], text
        assert [str(w.message) for w in caught] == ([] if warned is None else [
            f"1 annotation line of {path} names a term that is not in the hierarchy (first: {warned!r}); it is "
            "left out"]), text
    # letters-only classes: CAFA 5's header is still told from data by its target's shape
    letters = Hierarchy.from_edges([("a", "b"), ("a", "c")])
    path.write_text("EntryID\tterm\taspect\nP1\tb\tBPO\nP2\tb\tBPO\n")
    assert read_annotations(path, letters)[0].tolist() == ["P1", "P2"]
    # a header word that looks like a class and a target like the others: data by the rule, warned of as a
    # possible header (audit51); an unknown id on the first line is warned of as any other line
    path.write_text("gene\tclass\ngeneX\tb\n")
    with pytest.warns(UserWarning, match=r"\(first: 'class', on the first line of data: a header\?\); it is left"):
        assert read_annotations(path, letters)[0].tolist() == ["geneX"]
    # a first line dropped as a header whose term holds an id ('GO:9 IDA' is the term as read: of no class's
    # shape, beside no target alike) is said to be dropped; a header's words go without one (above)
    for text, want in [("P1\tGO:9 IDA\n", []), ("P1\tGO:9 IDA\nYAL001C\tGO:2\n", ["YAL001C"])]:
        path.write_text(text)
        with pytest.warns(UserWarning, match=r"^the first line of .*gt.tsv \('P1', 'GO:9 IDA'\) was read as a "
                                             r"header and left out: its term is not in the hierarchy"):
            assert read_annotations(path, h)[0].tolist() == want, text


def test_from_obo_of_a_namespace_keeps_the_file_order_and_reads_its_edges_as_read_ontology(tmp_path):
    """audit59: with namespace=, Hierarchy.from_obo listed a namespace of less than half the terms in Python's set
    order (it changed with PYTHONHASHSEED), where read_ontology keeps the file's; and a namespace whose only edges
    are of a relation not kept was refused ('keeps no edge of the graph') where read_ontology reads it edgeless."""
    terms = [f"GO:{i:07d}" for i in range(1, 101)]
    lines = []
    for i, t in enumerate(terms):  # every third term in molecular_function; a chain within each namespace
        ns = "molecular_function" if i % 3 == 0 else "biological_process"
        lines += ["[Term]", f"id: {t}", f"namespace: {ns}"] + ([f"is_a: {terms[i - 3]}"] if i >= 3 else []) + [""]
    lines += ["[Term]", "id: GO:9000001", "namespace: cellular_component", "", "[Term]", "id: GO:9000002",
              "namespace: cellular_component", "relationship: has_part GO:9000001", ""]
    path = tmp_path / "go.obo"
    path.write_text("\n".join(lines))
    onto = read_ontology(path)
    for ns in ("molecular_function", "biological_process", "cellular_component"):
        assert Hierarchy.from_obo(path, namespace=ns) == onto.hierarchy(ns), ns
        assert Hierarchy.from_obo(path, namespace=ns).classes == onto.hierarchy(ns).classes, ns
    assert Hierarchy.from_obo(path, namespace="molecular_function").classes == tuple(terms[::3])
    assert Hierarchy.from_obo(path, namespace="cellular_component").edges == ()


def test_a_term_marked_is_obsolete_false_is_kept(tmp_path):
    """OBO's is_obsolete: false means not obsolete (pronto keeps the term; cafaeval 1.3 drops it)."""
    path = tmp_path / "go.obo"
    path.write_text("[Term]\nid: GO:1\nnamespace: bp\n\n[Term]\nid: GO:2\nnamespace: bp\nis_a: GO:1\n"
                    "is_obsolete: false\n\n[Term]\nid: GO:3\nnamespace: bp\nis_obsolete: true\n")
    for h in (read_ontology(path).hierarchy(), Hierarchy.from_obo(path)):
        assert h.classes == ("GO:1", "GO:2") and h.edges == (("GO:1", "GO:2"),)


def test_obo_values_lines_and_repeated_stanzas_read_as_obo_means_them(tmp_path):
    """audit23's fuzzing against pronto: a U+2028 or form feed inside a value split the line (str.splitlines)
    and refused the file or moved a term to another namespace; a term's second stanza replaced the first's
    alt_ids and an is_obsolete in one of them was ignored; an escaped space in an id merged two terms; an
    obonet error spanned three lines; an .obo.bz2 file was read as an edge list."""
    import bz2

    head = "format-version: 1.2\n\n[Term]\nid: T:1\nname: a\nnamespace: ns\n\n"
    path = tmp_path / "x.obo"
    for inside in ("name: a\u2028b", "def: \"caf\u0085 x\" []", "def: \"see\x0cnamespace: other\" []"):
        path.write_text(head + f"[Term]\nid: T:2\n{inside}\nnamespace: ns\nis_a: T:1\n", encoding="utf-8")
        onto = read_ontology(path)
        assert onto.namespaces == ("ns",) and onto.hierarchy().edges == (("T:1", "T:2"),), inside
    path.write_text(head + "[Term]\nid: T:2\nnamespace: ns\nalt_id: A:1\nis_a: T:1\n\n"
                    "[Term]\nid: T:3\nnamespace: ns\n\n[Term]\nid: T:2\nalt_id: A:2\nis_a: T:3\n")
    onto = read_ontology(path)
    assert dict(onto.alt_ids) == {"A:1": ("T:2",), "A:2": ("T:2",)}
    assert set(onto.hierarchy().edges) == {("T:1", "T:2"), ("T:3", "T:2")}
    for first, second in (("is_obsolete: true\n", ""), ("", "is_obsolete: true\n"), ("is_obsolete: false\n",
                                                                                       "is_obsolete: true\n")):
        path.write_text(head + f"[Term]\nid: T:2\nnamespace: ns\n{first}\n[Term]\nid: T:2\nis_a: T:1\n{second}")
        assert read_ontology(path).hierarchy().classes == ("T:1",), (first, second)
    path.write_text(head + "[Term]\nid: T:a\\ b\nnamespace: ns\nis_a: T:1\n\n[Term]\nid: T:a\\ c\nnamespace: ns\n"
                    "is_a: T:a\\ b ! the other\n\n[Term]\nid: T:x\\!y\nnamespace: ns\nis_a: T:1 {note=\"\\}\"}\n")
    h = read_ontology(path).hierarchy()
    assert h.classes == ("T:1", "T:a\\ b", "T:a\\ c", "T:x\\!y")
    assert set(h.edges) == {("T:1", "T:a\\ b"), ("T:a\\ b", "T:a\\ c"), ("T:1", "T:x\\!y")}
    path.write_text(head + "garbage line\n")
    with pytest.raises(InputError) as info:
        read_ontology(path)
    assert "\n" not in str(info.value) and "garbage line" in str(info.value)
    (tmp_path / "go.obo.bz2").write_bytes(bz2.compress((head + "[Term]\nid: T:2\nnamespace: ns\nis_a: T:1\n").encode()))
    assert is_obo_file(tmp_path / "go.obo.bz2")
    assert read_ontology(tmp_path / "go.obo.bz2").hierarchy().edges == (("T:1", "T:2"),)


def test_a_folder_or_a_missing_file_is_named_as_such_by_the_annotation_and_prediction_readers(tmp_path):
    """Their own check beside utf8_text's called a folder a file that 'does not exist'."""
    h = Hierarchy.from_edges([("GO:1", "GO:2")])
    for read, what in ((lambda p: read_annotations(p, h), "annotation file"),
                       (lambda p: read_cafa_predictions(p, h, ["A"]), "predictions file")):
        with pytest.raises(InputError, match=f"^{what} .* is a directory, not a file$"):
            read(tmp_path)
        with pytest.raises(FileNotFoundError, match=f"^{what} .*nope.txt' does not exist$"):
            read(tmp_path / "nope.txt")


# -- the readers against plain per-line references -------------------------------------------------------------

@st.composite
def small_ontologies(draw):
    """An Ontology of one to three namespaces of a few terms (parents among the earlier terms) and alt ids."""
    from hmcpgm.ontology import Ontology

    hierarchies, number = {}, 1
    for ns in ("bp", "mf", "cc")[: draw(st.integers(1, 3))]:
        ids = [f"GO:{number + j}" for j in range(draw(st.integers(1, 6)))]
        number += len(ids)
        edges = [(ids[p], ids[j]) for j in range(1, len(ids))
                 for p in draw(st.sets(st.integers(0, j - 1), max_size=2))]
        hierarchies[ns] = Hierarchy.from_edges(edges, classes=ids)
    terms = [t for h in hierarchies.values() for t in h.classes]
    alt_ids = {f"ALT:{a}": tuple(draw(st.lists(st.sampled_from(terms), min_size=1, max_size=2, unique=True)))
               for a in range(draw(st.integers(0, 3)))}
    return Ontology(hierarchies, {}, alt_ids)


def _closed_columns(term, hierarchy, ontology, namespace):
    """The columns of ``hierarchy`` that an annotation to ``term`` makes positive, by networkx ancestors."""
    import networkx as nx

    full = ontology.hierarchy(namespace)
    graph = full.to_networkx()
    stands_for = [term] if any(term in h for h in ontology.hierarchies.values()) else ontology.alt_ids.get(term, ())
    reach = {a for t in stands_for if t in full for a in {t} | nx.ancestors(graph, t)}
    return {hierarchy.classes.index(a) for a in reach if a in hierarchy}


def _labels_by_hand(pairs, hierarchy, ontology, namespace):
    rows = {}  # target -> set of columns, in the order of the first pair that gives one
    for target, term in pairs:
        columns = _closed_columns(term, hierarchy, ontology, namespace)
        if columns:
            rows.setdefault(target, set()).update(columns)
    labels = np.zeros((len(rows), hierarchy.n_classes), dtype=np.int8)
    for i, columns in enumerate(rows.values()):
        labels[i, sorted(columns)] = 1
    return list(rows), labels


_GAF = "DB\t{}\tsym\t{}\t{}\tREF\t{}\t\tP\t\t\tprotein\ttaxon:1\t20240101\tDB\n"


@settings(max_examples=60, deadline=None)
@given(ontology=small_ontologies(), data=st.data())
def test_annotations_equal_a_per_line_reference(tmp_path_factory, ontology, data):
    """GAF lines (NOT qualifiers, evidence codes, alt ids, unknown terms, repeated pairs) read into labels that a
    per-pair loop over networkx ancestors gives, for every namespace and for a restricted hierarchy."""

    from hmcpgm.ontology import read_annotations_per_namespace

    terms = [t for h in ontology.hierarchies.values() for t in h.classes] + list(ontology.alt_ids) + ["GO:999"]
    lines = data.draw(st.lists(st.tuples(st.sampled_from(["P1", "P2", "P3", "P4"]), st.sampled_from(terms),
                                         st.sampled_from(["", "enables", "NOT", "NOT|enables", "not"]),
                                         st.sampled_from(["IDA", "IEA", "TAS", "ida"])), max_size=25))
    evidence = data.draw(st.sampled_from([None, "cafa"]))
    path = tmp_path_factory.mktemp("gaf") / "a.gaf"
    path.write_text("!gaf-version: 2.2\n" + "".join(_GAF.format(t, q, term, e) for t, term, q, e in lines))
    kept = [(t, term) for t, term, q, e in lines
            if "NOT" not in q.split("|") and (evidence is None or e.upper() in CAFA)]
    if evidence is not None and not kept:
        with pytest.raises(InputError, match="no line has an evidence code"):
            read_annotations_per_namespace(path, ontology, evidence=evidence)
        return
    unknown = [term for _, term in kept if not ontology.canonical(term)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_namespace = read_annotations_per_namespace(path, ontology, evidence=evidence)
    many = len(unknown) > 1
    assert [str(w.message) for w in caught] == ([
        (f"{len(unknown)} annotation lines of {path} name terms that are" if many else
         f"1 annotation line of {path} names a term that is") + f" not in the ontology (first: "
        f"{unknown[0]!r}); {'they are' if many else 'it is'} left out"] if unknown else [])
    for ns, h in ontology.hierarchies.items():
        ids, labels = per_namespace[ns]
        want_ids, want = _labels_by_hand(kept, h, ontology, ns)
        assert ids.dtype == object and ids.tolist() == want_ids
        assert labels.dtype == np.int8 and np.array_equal(labels, want)
    ns = data.draw(st.sampled_from(ontology.namespaces))
    some = data.draw(st.lists(st.sampled_from(ontology.hierarchy(ns).classes), min_size=1, unique=True))
    h = restrict_hierarchy(ontology.hierarchy(ns), some)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids, labels = read_annotations(path, h, ontology, evidence=evidence)
    want_ids, want = _labels_by_hand(kept, h, ontology, ns)
    assert ids.tolist() == want_ids and labels.dtype == np.int8 and np.array_equal(labels, want)


@settings(max_examples=60, deadline=None)
@given(ontology=small_ontologies(), data=st.data())
def test_predictions_equal_a_per_line_reference(tmp_path_factory, ontology, data):
    """Prediction lines (repeated pairs, NaN, negative and above-1 scores, a header, submission keys, short and
    blank lines, alt ids, unknown terms and targets), read in batches of a few lines: each pair's largest score
    (NaN as no line, nothing below the 0 of an absent pair), and the warnings' counts and first lines."""
    import math

    import hmcpgm.ontology
    from hmcpgm.ontology import read_cafa_predictions_per_namespace

    terms = [t for h in ontology.hierarchies.values() for t in h.classes] + list(ontology.alt_ids) + ["GO:999"]
    line = st.one_of(
        st.tuples(st.sampled_from(["P1", "P2", "Q"]), st.sampled_from(terms),
                  st.sampled_from(["0.5", "0.25", "1", "0", "-0", "nan", "-0.5", "1.5", "0.75"]))
        .map("\t".join),
        st.sampled_from(["", "AUTHOR me", "MODEL 1", "END", "P1 GO:1", "KEYWORDS a b."]))
    lines = data.draw(st.lists(line, max_size=30))
    header = data.draw(st.booleans())
    path = tmp_path_factory.mktemp("pred") / "p.txt"
    path.write_text("".join(f"{x}\n" for x in (["target term score"] if header else []) + lines))
    targets = {ns: data.draw(st.lists(st.sampled_from(["P1", "P2"]), unique=True)) for ns in ontology.namespaces}
    best = {ns: np.zeros((len(targets[ns]), ontology.hierarchy(ns).n_classes)) for ns in ontology.namespaces}
    odd, short = [], []
    for number, text in enumerate(lines, 1 + header):
        fields = text.split()
        if len(fields) < 3:
            if fields and fields[0] not in ("AUTHOR", "MODEL", "KEYWORDS", "END"):
                short.append(number)
            continue
        target, term, counted = fields[0], fields[1], False
        stands_for = [term] if any(term in g for g in ontology.hierarchies.values()) else ontology.alt_ids.get(term, ())
        for ns, values in best.items():
            columns = [ontology.hierarchy(ns).index(t) for t in stands_for if t in ontology.hierarchy(ns)]
            if target in targets[ns] and columns:  # the score is read on such lines only ("KEYWORDS a b.")
                counted, score, i = True, float(fields[2]), targets[ns].index(target)
                for k in columns:
                    if not math.isnan(score):
                        values[i, k] = max(values[i, k], score)
        if counted and not 0 <= score <= 1:
            odd.append(number)
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings(record=True) as caught:
        patch.setattr(hmcpgm.ontology, "_BATCH_LINES", data.draw(st.integers(1, 8)))
        warnings.simplefilter("always")
        got = read_cafa_predictions_per_namespace(path, ontology, targets)
    for ns in ontology.namespaces:
        assert got[ns].dtype == np.float64 and np.array_equal(got[ns], best[ns])
        assert not np.signbit(got[ns]).any()  # no -0.0: a score "-0" is no larger than the 0 of an absent pair
    messages = [str(w.message) for w in caught]
    assert len(messages) == bool(odd) + bool(short)
    if odd:
        assert messages[0].startswith(f"{len(odd)} lines of ") and f"(first: line {odd[0]})" in messages[0]
    if short:
        assert messages[-1].startswith(f"{len(short)} lines of ") and f"(first: line {short[0]})" in messages[-1]


def test_term_names_read_with_obo_escapes(tmp_path):
    """OBO's escapes in a name, hand-worked from the OBO 1.2 guide's table: an escaped quote, brace, '!' or
    backslash is the character, \\W a space, \\t a tab. pronto 2.7 reads the same names but for two points: it
    keeps the space before a comment and reads \\W as 'W'."""
    path = tmp_path / "e.obo"
    path.write_text("format-version: 1.2\n\n[Term]\nid: GO:1\n"
                    'name: a \\"quoted\\" name, a \\{brace\\} and a \\! bang ! a comment\nnamespace: bp\n\n'
                    "[Term]\nid: GO:2\nname: two\\Wwords\\tand a \\\\ backslash {source=\"x\"}\nnamespace: bp\n"
                    "is_a: GO:1\n")
    assert read_ontology(path).names == {"GO:1": 'a "quoted" name, a {brace} and a ! bang',
                                         "GO:2": "two words\tand a \\ backslash"}


def test_write_cafa_predictions_leaves_the_file_untouched_when_writing_fails(tmp_path):
    """The file was opened for writing (emptied) before the lines were made: an error left it empty."""
    h = Hierarchy.from_edges([("GO:1", "GO:2")])
    path = tmp_path / "p.tsv"
    path.write_text("old\n")
    with pytest.raises(TypeError):
        write_cafa_predictions(path, [[0.5, 0.25]], h, ["A"], float_format="%s %s")  # fails on the first score
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["p.tsv"]


def test_a_term_keeps_only_the_lines_hmcpgm_reads():
    """obonet parsed every line of a term (def, synonyms, xrefs: most of the Gene Ontology's), though only
    seven tags are read; the others now go before it parses (read_ontology 1.7x faster on a GO-sized file,
    bench/obo_reading.py). A line without a tag stays, so obonet still refuses it."""
    from hmcpgm._obo import normalised_obo_text

    text = ('format-version: 1.2\nsubsetdef: slim "A slim"\n\n[Term]\nid: GO:2\nname: two\nnamespace: bp\n'
            'def: "A def." [GOC:x]\nsynonym: "deux" EXACT []\nxref: R:1\nalt_id: GO:9\nis_a: GO:1 ! one\n'
            'relationship: part_of GO:1\nsubset: slim\n\n[Term]\nid: GO:3\nis_obsolete: true\nreplaced_by: GO:2\n'
            '\n[Typedef]\nid: part_of\nname: part of\nis_transitive: true\n')
    normal, terms = normalised_obo_text(text)
    assert normal.split("\n") == [
        "format-version: 1.2", 'subsetdef: slim "A slim"',
        "", "[Term]", "id: GO:2", "name: two", "namespace: bp", "alt_id: GO:9", "is_a: GO:1",
        "relationship: part_of GO:1",
        "", "[Term]", "id: GO:3", "is_obsolete: true",
        "", "[Typedef]", "id: part_of", "name: part of", "is_transitive: true", ""]
    assert terms == {"GO:2": False, "GO:3": True}
    assert "no tag here" in normalised_obo_text("[Term]\nid: GO:2\nno tag here\n")[0]
