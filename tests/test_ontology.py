"""hmcpgm.ontology: OBO per namespace, restricted hierarchies, annotations (two columns, GAF), CAFA files."""

import numpy as np
import pytest
from go_fixtures import NAMESPACES, live_terms, obo_text, parents_within, random_ontology
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import dags

from hmcpgm import Hierarchy
from hmcpgm.exceptions import InputError
from hmcpgm.ontology import (
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


def test_files_are_told_apart(go, tmp_path):
    _, path = go
    assert is_obo_file(path)
    (tmp_path / "h.csv").write_text("parent,child\nA,B\n")
    (tmp_path / "labels.csv").write_text("A,B\n1,0\n")
    (tmp_path / "pairs.tsv").write_text("g1\tGO:0000002\ng2\tGO:0000003\n")
    (tmp_path / "a.gaf").write_text("!gaf-version: 2.2\nUniProtKB\tP1\tX\t\tGO:0000002\tREF\tIEA\t\tP\t\t\tprotein\t"
                                    "taxon:1\t20200101\tUniProt\n")
    assert not is_obo_file(tmp_path / "h.csv")
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
    with pytest.warns(UserWarning, match="1 annotation lines .* not in the ontology .*'GO:9999999'"):
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
