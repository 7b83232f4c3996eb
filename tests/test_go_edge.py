"""Gene Ontology files as real releases and CAFA submissions hold them, read as cafaeval 1.3 reads them.

Small hand-made files with the features readers trip on (three namespaces, obsolete
terms, alternative ids, part_of and other relations, cross-namespace edges, IA files
that skip terms, ...); every number is compared with cafaeval run on the same files.
"""

import json

import numpy as np
import pytest

from hmcpgm.cli import main

pytest.importorskip("obonet")

OBO = """format-version: 1.2
data-version: releases/2024-01-01
default-namespace: gene_ontology
ontology: go

[Term]
id: GO:0008150
name: biological_process
namespace: biological_process
alt_id: GO:0000004

[Term]
id: GO:0000001
name: b1 thing
namespace: biological_process
is_a: GO:0008150 ! biological_process

[Term]
id: GO:0000002
name: b2
namespace: biological_process
alt_id: GO:0000902
is_a: GO:0000001 ! b1 thing
relationship: part_of GO:0000003 ! b3

[Term]
id: GO:0000003
name: b3
namespace: biological_process
is_a: GO:0008150
relationship: regulates GO:0000001 ! b1
relationship: has_part GO:0000005

[Term]
id: GO:0000005
name: b5
namespace: biological_process
is_a: GO:0008150 ! biological_process
intersection_of: GO:0000001
intersection_of: part_of GO:0000003

[Term]
id: GO:0000006
name: obsolete b6
namespace: biological_process
is_obsolete: true
replaced_by: GO:0000002
consider: GO:0000003

[Term]
id: GO:0003674
name: molecular_function
namespace: molecular_function

[Term]
id: GO:0000011
name: m1
namespace: molecular_function
is_a: GO:0003674 ! molecular_function
relationship: part_of GO:0000001 ! another namespace

[Term]
id: GO:0005575
name: cellular_component
namespace: cellular_component

[Term]
id: GO:0000021
name: c1
namespace: cellular_component
is_a: GO:0005575
relationship: part_of GO:0000022

[Term]
id: GO:0000022
name: c2
namespace: cellular_component
is_a: GO:0005575

[Term]
id: GO:0000023
name: without namespace
is_a: GO:0005575

[Typedef]
id: part_of
name: part of
namespace: external
is_transitive: true
"""

GROUND_TRUTH = [("P1", "GO:0000002"), ("P1", "GO:0000011"), ("P2", "GO:0000902"), ("P3", "GO:0000006"),
                ("P3", "GO:0000005"), ("P4", "GO:0000021"), ("P5", "GO:0000004"), ("P6", "GO:9999999"),
                ("P2", "GO:0000902")]

PREDICTIONS = [("P1", "GO:0000002", "0.5"), ("P1", "GO:0000002", "0.7"), ("P2", "GO:0000902", "0.3"),
               ("P2", "GO:0000003", "1"), ("P3", "GO:0000005", "0"), ("P3", "GO:0000001", "0.25"),
               ("P4", "GO:0000021", "0.99"), ("P4", "GO:0000022", "0.07"), ("P5", "GO:0000001", "0.01"),
               ("P9", "GO:0000001", "0.9"), ("P1", "GO:0000011", "0.6"), ("P1", "GO:0000006", "0.9")]


def _write(folder, obo=OBO, gt=GROUND_TRUTH, pred=PREDICTIONS, ia=None):
    (folder / "go.obo").write_text(obo)
    (folder / "gt.tsv").write_text("".join("\t".join(r) + "\n" for r in gt))
    (folder / "pred").mkdir(exist_ok=True)
    (folder / "pred" / "m.tsv").write_text("".join("\t".join(r) + "\n" for r in pred))
    if ia is not None:
        (folder / "ia.tsv").write_text("".join(f"{t}\t{v}\n" for t, v in ia.items()))


def _evaluate_against_cafaeval(folder, *options, ia=True, norm="cafa", no_orphans=False):
    """Run ``hmcpgm evaluate`` and cafaeval on the files of ``folder``; compare every number they share."""
    cafaeval = pytest.importorskip("cafaeval.evaluation")
    out = folder / "r.json"
    ia_option = ["--ia", str(folder / "ia.tsv")] if ia else []
    argv = ["evaluate", str(folder / "go.obo"), str(folder / "pred" / "m.tsv"), str(folder / "gt.tsv"),
            "--json", str(out), "--normalization", norm, *(["--exclude-roots"] if no_orphans else []),
            *ia_option, *options]
    assert main(argv) == 0
    mine = json.loads(out.read_text())
    df, best = cafaeval.cafa_eval(str(folder / "go.obo"), str(folder / "pred"), str(folder / "gt.tsv"),
                                  ia=str(folder / "ia.tsv") if ia else None, norm=norm, no_orphans=no_orphans,
                                  n_cpu=1)
    df = df.reset_index()
    assert set(mine) == set(df["ns"])
    for ns, r in mine.items():
        f = best["f"].reset_index().set_index("ns").loc[ns]
        assert (r["fmax"], r["fmax_threshold"], r["fmax_coverage"]) == pytest.approx((f["f"], f["tau"], f["cov"]),
                                                                                     abs=1e-9)
        if ia:
            fw = best["f_w"].reset_index().set_index("ns").loc[ns]
            rows = df[df["ns"] == ns].reset_index(drop=True)
            i = int(np.argmin(rows["s_w"].to_numpy()))
            assert (r["weighted_fmax"], r["weighted_fmax_threshold"]) == pytest.approx((fw["f_w"], fw["tau"]),
                                                                                       abs=1e-9)
            assert (r["smin"], r["smin_threshold"]) == pytest.approx((rows["s_w"][i], rows["tau"][i]), abs=1e-9)
    return mine


def test_an_ia_file_without_the_terms_of_a_namespace_weighs_them_zero(tmp_path, capsys):
    # the IA file gives no value to the molecular-function terms: cafaeval counts them as IA 0
    ia = {"GO:0008150": 0, "GO:0000001": 0.5, "GO:0000002": 1.5, "GO:0000003": 0.7, "GO:0000005": 2,
          "GO:0000021": 1, "GO:0000022": 0.25}
    _write(tmp_path, ia=ia)
    for norm, no_orphans in [("cafa", False), ("pred", True), ("gt", False)]:
        mine = _evaluate_against_cafaeval(tmp_path, norm=norm, no_orphans=no_orphans)
        assert set(mine) == {"biological_process", "molecular_function", "cellular_component"}
        assert mine["molecular_function"]["weighted_fmax"] == 0.0


def test_stanzas_without_blank_lines_between_them_are_read_as_cafaeval_reads_them(tmp_path):
    # OBO does not require a blank line before "[Term]"; obonet alone refuses such a file
    no_blank = "\n".join(line for line in OBO.splitlines() if line.strip()) + "\n"
    _write(tmp_path, obo=no_blank)
    mine = _evaluate_against_cafaeval(tmp_path, ia=False)
    assert set(mine) == {"biological_process", "molecular_function", "cellular_component"}


def test_gzip_compressed_ontology_ground_truth_and_predictions_read_as_plain_ones(tmp_path, capsys):
    import gzip

    _write(tmp_path)
    gz = tmp_path / "gz"
    gz.mkdir()
    for name in ("go.obo", "gt.tsv", "pred/m.tsv"):
        (gz / (name.replace("/", "_") + ".gz")).write_bytes(gzip.compress((tmp_path / name).read_bytes()))
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.tsv"),
                 "--json", str(tmp_path / "plain.json")]) == 0
    assert main(["evaluate", str(gz / "go.obo.gz"), str(gz / "pred_m.tsv.gz"), str(gz / "gt.tsv.gz"),
                 "--json", str(tmp_path / "gz.json")]) == 0
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert len(plain) == 3 and json.loads((tmp_path / "gz.json").read_text()) == plain


def test_unreadable_files_and_cycles_are_one_line_errors_naming_the_file(tmp_path, capsys):
    _write(tmp_path)
    (tmp_path / "latin1.tsv").write_bytes("P1\tGO:0000002\nP\xe9\tGO:0000001\n".encode("latin-1"))
    (tmp_path / "cut.gz").write_bytes(__import__("gzip").compress(b"P1\tGO:0000002\n" * 50)[:30])
    for bad in ("latin1.tsv", "cut.gz"):
        assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / bad)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hmcpgm: error: annotation file") and bad in err and len(err.splitlines()) == 1
    # a part_of cycle: cafaeval stops with "doesn't represent an acyclic graph"; here the file and namespace are named
    (tmp_path / "go.obo").write_text(OBO.replace("is_a: GO:0008150\nrelationship: regulates",
                                                 "is_a: GO:0008150\nrelationship: part_of GO:0000002\n"
                                                 "relationship: regulates"))
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv")]) == 2
    err = capsys.readouterr().err
    assert "go.obo, namespace biological_process" in err and "cycle" in err and len(err.splitlines()) == 1


def test_a_warning_about_the_ground_truth_prints_once_not_once_per_namespace(tmp_path, capsys):
    _write(tmp_path)  # GO:0000006 (obsolete) and GO:9999999 (unknown) are left out of the ground truth
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.tsv")]) == 0
    err = capsys.readouterr().err
    assert err.count("name terms that are not in the ontology (first: 'GO:0000006')") == 1


def test_prediction_lines_cafaeval_reads_no_score_from_and_odd_scores(tmp_path, capsys):
    # a CAFA submission's AUTHOR/MODEL/KEYWORDS/END lines, scores above 1 and below 0, 0 and 1 exactly, a NaN
    # (max(old, NaN) keeps the old score in both readers), space separators, a non-number on an unknown term's line
    pred = [("AUTHOR", "Team"), ("MODEL", "1"), ("KEYWORDS", "sequence alignment, machine learning."),
            ("P1", "GO:0000002", "1.5"), ("P1", "GO:0000001", "-0.3"), ("P1 GO:0000005 0.07",),
            ("P2", "GO:0000902", "0.57"), ("P2", "GO:0000003", "0.29"), ("P2", "GO:0000005", "0.58"),
            ("P2", "GO:0000005", "nan"), ("P3", "GO:0000022", "1.0"), ("P3", "GO:0000021", "0"),
            ("P3", "GO:0000011", "0.9"), ("P7", "GO:0000002", "0.9"), ("P1", "GO:1234567", "N/A"), ("END",)]
    gt = [("P1", "GO:0000002"), ("P2", "GO:0000005"), ("P3", "GO:0000021")]
    ia = {"GO:0000001": 0.5, "GO:0000002": 1.5, "GO:0000003": 0.7, "GO:0000005": 2, "GO:0000021": 1,
          "GO:0000022": 0.25}
    _write(tmp_path, gt=gt, pred=pred, ia=ia)
    for norm, no_orphans in [("cafa", False), ("pred", True)]:
        mine = _evaluate_against_cafaeval(tmp_path, norm=norm, no_orphans=no_orphans)
        assert set(mine) == {"biological_process", "cellular_component"}
    # an infinite score: cafaeval takes it as above every threshold; here the line is named
    _write(tmp_path, gt=gt, pred=[("P1", "GO:0000002", "0.5"), ("P1", "GO:0000001", "inf")])
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv")]) == 2
    assert "m.tsv, line 2: the score 'inf' is infinite" in capsys.readouterr().err
    # -inf no less: not a finite score (else read as an absent pair, with the odd-score warning)
    for text in ("-inf", "-Infinity"):
        _write(tmp_path, gt=gt, pred=[("P1", "GO:0000002", "0.5"), ("P1", "GO:0000001", text)])
        assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv")]) == 2
        err = capsys.readouterr().err
        assert f"m.tsv, line 2: the score '{text}' is infinite" in err and len(err.strip().splitlines()) == 1


def test_cafa5_terms_file_and_a_gaf_without_its_header_are_annotations(tmp_path, recwarn):
    from hmcpgm.ontology import is_annotation_file, read_annotations, read_ontology

    (tmp_path / "go.obo").write_text(OBO)
    go = read_ontology(tmp_path / "go.obo")
    bp = go.hierarchy("biological_process")
    pairs = [("P1", "GO:0000002"), ("P2", "GO:0000902"), ("P3", "GO:0000005"), ("P3", "GO:0000021")]
    (tmp_path / "two.tsv").write_text("".join(f"{g}\t{t}\n" for g, t in pairs))
    # CAFA 5's train_terms.tsv: a header, then target, term, aspect
    (tmp_path / "train_terms.tsv").write_text("EntryID\tterm\taspect\n" + "".join(f"{g}\t{t}\tBPO\n" for g, t in pairs))
    gaf_row = "UniProtKB\t{}\tsym\t{}\t{}\tPMID:1\tIDA\t\tP\tname\t\tprotein\ttaxon:9606\t20240101\tGO_Central\t\t\n"
    body = "".join(gaf_row.format(g, "", t) for g, t in pairs) + gaf_row.format("P4", "NOT|involved_in", "GO:0000001")
    (tmp_path / "with_header.gaf").write_text("!gaf-version: 2.2\n!generated-by: GOC\n" + body)
    (tmp_path / "no_header.gaf").write_text(body)
    ids, y = read_annotations(tmp_path / "two.tsv", bp, go)
    for name in ("train_terms.tsv", "with_header.gaf", "no_header.gaf"):
        assert is_annotation_file(tmp_path / name)
        other_ids, other_y = read_annotations(tmp_path / name, bp, go)
        assert other_ids.tolist() == ids.tolist() and np.array_equal(other_y, y), name
    assert not [w for w in recwarn if "not in the ontology" in str(w.message)]  # the header is no unknown term
    # a label matrix is still one: its rows hold 0/1 cells
    (tmp_path / "labels.csv").write_text("gene,GO:0000001,GO:0000002\ng1,0,1\ng2,1,0\n")
    assert not is_annotation_file(tmp_path / "labels.csv")


def test_a_namespace_whose_scores_all_lie_below_the_first_threshold_is_left_out_as_cafaeval_does(tmp_path):
    gt = [("P1", "GO:0000002"), ("P2", "GO:0000005"), ("P3", "GO:0000021")]
    _write(tmp_path, gt=gt, pred=[("P1", "GO:0000002", "0.005"), ("P2", "GO:0000001", "0"),
                                  ("P3", "GO:0000021", "0.5")])
    mine = _evaluate_against_cafaeval(tmp_path, ia=False)
    assert set(mine) == {"cellular_component"}

    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    json.loads((tmp_path / "r.json").read_text(), parse_constant=refuse)


def test_cafa_curve_of_more_targets_than_a_block_equals_cafaeval():
    # the counts are summed over blocks of targets (memory): the curve is cafaeval's all the same
    evaluation = pytest.importorskip("cafaeval.evaluation")
    from cafaeval.graph import GroundTruth, Prediction

    from hmcpgm import Hierarchy
    from hmcpgm.metrics import cafa_curve

    rng = np.random.default_rng(3)
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c"), ("b", "d")])
    m = 700
    s = np.round(rng.random((m, 5)), 2)
    y = h.close_labels((rng.random((m, 5)) < 0.3) | (np.arange(5) == h.index("r")))
    ia = np.array([0, 1, 0.5, 2, 0.3])
    taus = np.arange(0.01, 1, 0.01)
    ids = {f"T{i}": i for i in range(m)}
    for weighted in (False, True):
        toi = np.flatnonzero(ia > 0) if weighted else np.arange(5)
        theirs = evaluation.normalize(
            evaluation.compute_metrics(Prediction(ids, s), GroundTruth(ids, y.astype(bool)), taus, toi,
                                       ia if weighted else None, n_cpu=1),
            "ns", taus, np.full(len(taus), m), "cafa")
        theirs = theirs[theirs["cov"] > 0].reset_index(drop=True)
        mine = cafa_curve(s, y, h, weighted=weighted, ia=ia, propagate=False)
        assert len(mine) == len(theirs) > 10
        for col, their_col in [("precision", "pr"), ("recall", "rc"), ("f", "f"), ("s", "s"), ("coverage", "cov")]:
            np.testing.assert_allclose(mine[col], theirs[their_col], rtol=0, atol=1e-9, err_msg=col)


def test_trailing_modifiers_and_comments_on_obo_lines_and_an_alt_id_column(tmp_path, capsys):
    from hmcpgm.ontology import read_ontology

    obo = OBO.replace("is_a: GO:0000001 ! b1 thing", 'is_a: GO:0000001 {source="x"} ! b1 thing')
    (tmp_path / "go.obo").write_text(obo.replace("\n", "\r\n"))
    bp = read_ontology(tmp_path / "go.obo").hierarchy("biological_process")
    assert set(bp.parents("GO:0000002")) == {"GO:0000001", "GO:0000003"}  # the OBO format's edge (cafaeval drops it)
    assert set(bp.parents("GO:0000005")) == {"GO:0008150"}  # intersection_of makes no edge
    # a scores column named by an alternative id (a term merged since): the message names the term
    (tmp_path / "scores.csv").write_text("gene,GO:0000001,GO:0000902\ng1,0.5,0.2\n")
    (tmp_path / "labels.tsv").write_text("g1\tGO:0000002\n")
    assert main(["fit", str(tmp_path / "scores.csv"), str(tmp_path / "labels.tsv"), str(tmp_path / "go.obo"),
                 "--namespace", "biological_process", "--id-column", "gene", "-o", str(tmp_path / "m.npz")]) == 2
    assert "'GO:0000902'); it is an alternative id of GO:0000002" in capsys.readouterr().err


@pytest.mark.parametrize("norm", ["cafa", "pred", "gt"])
def test_a_single_target_with_tied_scores_on_the_threshold_grid(tmp_path, norm):
    # scores on the grid itself (0.07, 0.29, 0.57 are not equal to numpy.arange's taus) and tied across terms
    pred = [("P1", "GO:0000002", "0.57"), ("P1", "GO:0000005", "0.57"), ("P1", "GO:0000003", "0.29"),
            ("P1", "GO:0000001", "0.07"), ("P1", "GO:0000021", "0.29")]
    ia = {"GO:0000001": 0.5, "GO:0000002": 1.5, "GO:0000003": 0.7, "GO:0000005": 2}
    _write(tmp_path, gt=[("P1", "GO:0000002")], pred=pred, ia=ia)
    for no_orphans in (False, True):
        mine = _evaluate_against_cafaeval(tmp_path, norm=norm, no_orphans=no_orphans)
        assert set(mine) == {"biological_process"} and mine["biological_process"]["n_targets"] == 1


def test_fmax_ties_that_differ_in_the_last_bit_go_to_the_smallest_threshold_as_in_cafaeval(tmp_path):
    # the IA-weighted precision at tau 0.21 (two targets) and at 0.70 (one) are the same number; cafaeval's sums
    # give it twice bit for bit and keep 0.21, sums in another order differed in the last bit and kept 0.70
    edges = [(23, 24), (23, 25), (24, 27), (24, 29), (24, 30), (25, 26), (25, 28), (25, 30), (26, 28), (26, 29),
             (29, 31)]
    terms = [f"GO:{k:07d}" for k in range(23, 32)]
    parents = {c: [f"GO:{p:07d}" for p, q in edges if f"GO:{q:07d}" == c] for c in terms}
    obo = "format-version: 1.2\n\n" + "".join(
        f"[Term]\nid: {t}\nname: t{t[-2:]}\nnamespace: molecular_function\n" + "".join(f"is_a: {p}\n" for p in ps)
        + "\n" for t, ps in parents.items())
    ia = dict(zip(terms, [1.3, 2.7, 0.1, 0.1, 0.0, 1.3, 0.0, 0.0, 0.0]))
    scores = {"P000": [0.7, 0.0, 0.6, 0.4, 0.4, 0.2, 0.4, 0.3, 0.2],
              "P001": [0.4, 0.0, 0.0, 0.0, 0.7, 0.0, 0.0, 0.0, 0.8]}
    pred = [(g, t, str(v)) for g, row in scores.items() for t, v in zip(terms, row) if v > 0]
    _write(tmp_path, obo=obo, gt=[("P000", terms[1]), ("P001", terms[1]), ("P001", terms[4])], pred=pred, ia=ia)
    mine = _evaluate_against_cafaeval(tmp_path, norm="pred")
    assert mine["molecular_function"]["weighted_fmax_threshold"] == pytest.approx(0.21)


def test_a_folder_of_predictions_reads_the_ontology_once(tmp_path, monkeypatch, capsys):
    import hmcpgm.ontology

    _write(tmp_path)
    for name in ("a.tsv", "sub/b.tsv"):
        (tmp_path / "pred" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "pred" / name).write_text((tmp_path / "pred" / "m.tsv").read_text())
    calls = []
    read = hmcpgm.ontology.read_ontology
    monkeypatch.setattr(hmcpgm.ontology, "read_ontology", lambda *a, **k: calls.append(a) or read(*a, **k))
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv"),
                 "--json", str(tmp_path / "r.json")]) == 0
    results = json.loads((tmp_path / "r.json").read_text())
    assert sorted(results) == ["a.tsv", "m.tsv", "sub/b.tsv"] and results["a.tsv"] == results["sub/b.tsv"]
    assert len(calls) == 1


def test_an_ontology_whose_terms_name_no_namespace_takes_the_default_namespace(tmp_path):
    from hmcpgm.ontology import read_ontology

    hpo = """format-version: 1.2
default-namespace: human_phenotype
ontology: hp

[Term]
id: HP:0000001
name: All

[Term]
id: HP:0000118
name: Phenotypic abnormality
is_a: HP:0000001 ! All

[Term]
id: HP:0000707
name: Abnormality of the nervous system
alt_id: HP:0001333
is_a: HP:0000118 ! Phenotypic abnormality
is_a: HP:0099999 ! an obsolete term, left out

[Term]
id: HP:0099999
name: obsolete thing
is_obsolete: true
"""
    (tmp_path / "hp.obo").write_text(hpo)
    h = read_ontology(tmp_path / "hp.obo").hierarchy("human_phenotype")
    assert list(h.classes) == ["HP:0000001", "HP:0000118", "HP:0000707"]
    assert h.parents("HP:0000707") == ("HP:0000118",)
    # GO names the namespace of every term: a term without one stays out, whatever default-namespace says
    (tmp_path / "go.obo").write_text(OBO)
    assert "GO:0000023" not in read_ontology(tmp_path / "go.obo").canonical("GO:0000023")


def test_predictions_read_once_for_every_namespace_equal_one_namespace_at_a_time(tmp_path):
    from hmcpgm.ontology import (
        read_annotations,
        read_cafa_predictions,
        read_cafa_predictions_per_namespace,
        read_ontology,
    )

    _write(tmp_path)
    go = read_ontology(tmp_path / "go.obo")
    targets = {ns: read_annotations(tmp_path / "gt.tsv", h, go)[0] for ns, h in go.hierarchies.items()}
    together = read_cafa_predictions_per_namespace(tmp_path / "pred" / "m.tsv", go, targets)
    assert list(together) == list(targets)
    for ns, h in go.hierarchies.items():
        alone = read_cafa_predictions(tmp_path / "pred" / "m.tsv", h, targets[ns], go)
        assert alone.any() and np.array_equal(together[ns], alone)



@pytest.mark.parametrize("evidence", [None, "cafa"])
def test_annotations_read_once_for_every_namespace_equal_one_namespace_at_a_time(tmp_path, evidence):
    from hmcpgm.ontology import read_annotations, read_annotations_per_namespace, read_ontology

    _write(tmp_path)
    _write_gaf(tmp_path / "gt.gaf", GAF_GROUND_TRUTH + [("P7", "", "GO:9999999", "EXP")])  # a term GO lacks
    go = read_ontology(tmp_path / "go.obo")
    with pytest.warns(UserWarning, match="1 annotation line of") as caught:
        together = read_annotations_per_namespace(tmp_path / "gt.gaf", go, evidence=evidence)
    assert len(caught) == 1  # once for the file, not once per namespace
    assert list(together) == list(go.hierarchies)
    for ns, h in go.hierarchies.items():
        with pytest.warns(UserWarning, match="1 annotation line of"):
            ids, y = read_annotations(tmp_path / "gt.gaf", h, go, namespace=ns, evidence=evidence)
        assert list(together[ns][0]) == list(ids) and np.array_equal(together[ns][1], y)
    assert any(len(ids) for ids, _ in together.values())


# A GAF ground truth with mixed evidence codes, an alternative id, a NOT line and a duplicate; "cafa" keeps the lines
# of EXP, IDA, IPI, IMP, IGI, IEP, TAS and IC, which are the pairs of CAFA_KEPT (worked by hand).
GAF_GROUND_TRUTH = [("P1", "", "GO:0000002", "IDA"), ("P1", "", "GO:0000011", "IEA"), ("P2", "", "GO:0000902", "EXP"),
                    ("P2", "", "GO:0000003", "IEA"), ("P3", "", "GO:0000005", "TAS"),
                    ("P3", "NOT", "GO:0000001", "IMP"), ("P4", "", "GO:0000021", "IC"),
                    ("P4", "", "GO:0000022", "ISS"), ("P5", "", "GO:0000001", "IEA"), ("P6", "", "GO:0000003", "ND"),
                    ("P1", "", "GO:0000002", "IDA")]
CAFA_KEPT = [("P1", "GO:0000002"), ("P2", "GO:0000902"), ("P3", "GO:0000005"), ("P4", "GO:0000021")]


def _write_gaf(path, lines):
    row = "UniProtKB\t{}\tsym\t{}\t{}\tPMID:1\t{}\t\tP\tname\t\tprotein\ttaxon:9606\t20240101\tGO_Central\t\t\n"
    path.write_text("!gaf-version: 2.2\n" + "".join(row.format(*line) for line in lines))


def test_evaluate_with_evidence_cafa_equals_cafaeval_on_the_experimental_lines(tmp_path, capsys):
    _write(tmp_path, gt=CAFA_KEPT)  # the ground truth filtered by hand, for cafaeval
    _write_gaf(tmp_path / "gt.gaf", GAF_GROUND_TRUTH)
    reference = _evaluate_against_cafaeval(tmp_path, ia=False)
    assert set(reference) == {"biological_process", "cellular_component"}  # P1's only MF line is IEA
    for evidence in ("cafa", "EXP,IDA,TAS,IC", "Experimental,tas,ic"):
        assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.gaf"),
                     "--evidence", evidence, "--json", str(tmp_path / "f.json")]) == 0
        assert json.loads((tmp_path / "f.json").read_text()) == reference, evidence
    # without the filter, the IEA, ISS and ND lines count: more targets
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.gaf"),
                 "--json", str(tmp_path / "all.json")]) == 0
    every = json.loads((tmp_path / "all.json").read_text())
    assert every["biological_process"]["n_targets"] == 5 and reference["biological_process"]["n_targets"] == 3


@pytest.mark.parametrize("ground_truth, evidence, message", [
    ("gt.gaf", "EXP,XYZ", "evaluate: argument --evidence: 'XYZ' is neither a GO evidence code"),
    ("gt.gaf", ",", "evaluate: argument --evidence: no evidence code given"),
    ("gt.tsv", "cafa", "gt.tsv has no evidence column (it holds 'target term' lines, not GAF): an evidence filter "
                       "cannot apply to it; leave out --evidence"),
    ("gt.gaf", "IBA", "gt.gaf: no line has an evidence code of --evidence (IBA); its lines have IEA (3), IDA (2)"),
])
def test_evaluate_evidence_refusals_are_one_line(tmp_path, capsys, ground_truth, evidence, message):
    _write(tmp_path)
    _write_gaf(tmp_path / "gt.gaf", GAF_GROUND_TRUTH)
    try:  # a value argparse refuses exits with status 2, a file the command refuses returns it
        status = main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / ground_truth),
                       "--evidence", evidence])
    except SystemExit as exc:
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["o.csv", "p.tsv", "g.tsv", "ia.tsv"])
def test_evaluate_json_onto_an_input_is_refused_and_the_input_untouched(tmp_path, capsys, target):
    files = {"o.csv": "parent,child\nR,B\nR,C\n", "p.tsv": "t1\tB\t0.5\n", "g.tsv": "t1\tB\n", "ia.tsv": "B\t1\nC\t1\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    argv = ["evaluate", *(str(tmp_path / n) for n in ("o.csv", "p.tsv", "g.tsv")), "--ia", str(tmp_path / "ia.tsv"),
            "--json", str(tmp_path / "sub" / ".." / target)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hmcpgm: error: --json") and "another file" in err[0], err
    assert (tmp_path / target).read_text() == files[target]


def test_evaluate_refuses_a_folder_given_for_a_file_naming_what_it_is(tmp_path, capsys):
    """--ia given a folder got the system's "Is a directory", which names neither the option nor the file's role."""
    files = {"o.csv": "parent,child\nR,B\nR,C\n", "p.tsv": "t1\tB\t0.5\n", "g.tsv": "t1\tB\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "ia").mkdir()
    assert main(["evaluate", *(str(tmp_path / n) for n in files), "--ia", str(tmp_path / "ia")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"hmcpgm: error: IA file {str(tmp_path / 'ia')!r} is a directory, not a file"], err


def test_check_inference_json_onto_its_hierarchy_is_refused(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("parent,child\nR,B\nR,C\n")
    assert main(["check-inference", str(tmp_path / "h.csv"), "--objects", "3", "--json", str(tmp_path / "h.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hmcpgm: error: --json"), err
    assert (tmp_path / "h.csv").read_text() == "parent,child\nR,B\nR,C\n"
