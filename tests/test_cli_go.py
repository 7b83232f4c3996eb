"""Gene Ontology on the command line: ``evaluate`` against cafaeval, OBO hierarchies, annotations, CAFA output."""

import json

import numpy as np
import pytest
from go_fixtures import NAMESPACES, obo_text, random_annotations, random_ontology, random_predictions

from hmcpgm.cli import main

pytest.importorskip("obonet")


def _files(folder, seed):
    rng = np.random.default_rng(seed)
    terms = random_ontology(rng, (7, 5))
    (folder / "go.obo").write_text(obo_text(terms))
    (folder / "gt.tsv").write_text("".join(f"{g}\t{t}\n" for g, t in random_annotations(rng, terms)))
    (folder / "pred").mkdir()
    (folder / "pred" / "m.tsv").write_text("".join(f"{g}\t{t}\t{v}\n" for g, t, v in random_predictions(rng, terms)))
    return terms


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("options", [[], ["--exclude-roots", "--normalization", "gt"]])
def test_evaluate_prints_cafaevals_numbers(tmp_path, seed, options, capsys):
    cafaeval = pytest.importorskip("cafaeval.evaluation")
    terms = _files(tmp_path, seed)
    ia_lines = "".join(f"{t}\t{0.25 * (i % 5)}\n" for i, t in enumerate(terms))  # some terms of IA 0
    (tmp_path / "ia.tsv").write_text(ia_lines)
    out = tmp_path / "r.json"
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.tsv"),
                 "--ia", str(tmp_path / "ia.tsv"), "--json", str(out), *options]) == 0
    printed = capsys.readouterr().out
    mine = json.loads(out.read_text())
    df, best = cafaeval.cafa_eval(str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv"),
                                  ia=str(tmp_path / "ia.tsv"), no_orphans="--exclude-roots" in options,
                                  norm="gt" if options else "cafa", n_cpu=1)
    df = df.reset_index()
    assert mine and set(mine) == set(df["ns"]) and set(mine) <= set(NAMESPACES)
    for ns, r in mine.items():
        f = best["f"].reset_index().set_index("ns").loc[ns]
        fw = best["f_w"].reset_index().set_index("ns").loc[ns]
        rows = df[df["ns"] == ns].reset_index(drop=True)
        i = int(np.argmin(rows["s_w"].to_numpy()))
        assert r["fmax"] == pytest.approx(f["f"], abs=1e-9)
        assert r["fmax_threshold"] == pytest.approx(f["tau"], abs=1e-12)
        assert r["fmax_coverage"] == pytest.approx(f["cov"], abs=1e-12)
        assert r["weighted_fmax"] == pytest.approx(fw["f_w"], abs=1e-9)
        assert r["smin"] == pytest.approx(rows["s_w"][i], abs=1e-9)
        assert r["smin_threshold"] == pytest.approx(rows["tau"][i], abs=1e-12)
        assert f"{ns:<22}" in printed and f"{r['fmax']:>6.3f}" in printed


def test_evaluate_a_folder_and_without_ia(tmp_path, capsys):
    _files(tmp_path, 5)
    (tmp_path / "pred" / "copy.tsv").write_text((tmp_path / "pred" / "m.tsv").read_text())
    out = tmp_path / "r.json"
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv"),
                 "--json", str(out)]) == 0
    both = json.loads(out.read_text())
    assert set(both) == {"m.tsv", "copy.tsv"} and both["m.tsv"] == both["copy.tsv"]
    assert "estimated from GROUND_TRUTH" in capsys.readouterr().out


@pytest.mark.parametrize("inside", ["pred/m.tsv", "pred/new.json", "pred/sub/deep.json"])
def test_evaluate_refuses_an_output_inside_the_predictions_folder(tmp_path, capsys, inside):
    # --json onto a file of the PREDICTIONS folder replaced that prediction file (exit 0); a new file there
    # is read as a prediction file by the next run
    _files(tmp_path, 5)
    (tmp_path / "pred" / "sub").mkdir()
    before = (tmp_path / "pred" / "m.tsv").read_bytes()
    assert main(["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred"), str(tmp_path / "gt.tsv"),
                 "--json", str(tmp_path / inside)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--json" in err and "lies in the predictions" in err
    assert (tmp_path / "pred" / "m.tsv").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "pred").rglob("*")) == ["m.tsv", "sub"]


def test_evaluate_names_the_argument_of_a_file_given_in_the_wrong_place(tmp_path, capsys):
    """audit56: a ground truth given as ONTOLOGY too was read as an edge list and evaluated (exit 0; cafaeval reads
    no term from it); a bad edge list or an OBO file given as GROUND_TRUTH was named by its file alone."""
    _files(tmp_path, 3)
    obo, pred, gt = str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.tsv")
    (tmp_path / "gt_twice.tsv").write_text((tmp_path / "gt.tsv").read_text() * 2)
    (tmp_path / "copy.obo").write_text((tmp_path / "go.obo").read_text())
    for argv, message in [
        ([gt, pred, gt], f"ONTOLOGY and GROUND_TRUTH are the same file {gt!r} (are the files in the order ONTOLOGY "
                         "PREDICTIONS GROUND_TRUTH?)"),
        ([obo, obo, gt], f"ONTOLOGY and PREDICTIONS are the same file {obo!r}"),
        ([str(tmp_path / "gt_twice.tsv"), pred, obo], "ONTOLOGY: hierarchy file "),
        ([obo, pred, str(tmp_path / "copy.obo")], "expected 'target term', got '[Term]' (an OBO ontology? "),
    ]:
        assert main(["evaluate", *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert message in err[0], (argv, err)


@pytest.fixture
def go_files(tmp_path):
    from go_fixtures import scores_and_annotations

    rng = np.random.default_rng(11)
    terms = random_ontology(rng, (8, 5))
    (tmp_path / "go.obo").write_text(obo_text(terms))
    columns = scores_and_annotations(tmp_path, rng, terms, NAMESPACES[0])
    return tmp_path, columns


def test_fit_predict_cafa_evaluate_from_obo_and_annotations(go_files, capsys):
    d, columns = go_files
    obo = str(d / "go.obo")
    assert main(["fit", str(d / "train_scores.csv"), str(d / "train_annotations.tsv"), obo, "--namespace",
                 NAMESPACES[0], "--id-column", "gene", "-o", str(d / "m.npz"), "--quiet"]) == 0
    assert main(["predict", str(d / "m.npz"), str(d / "test_scores.csv"), "--id-column", "gene", "--format", "cafa",
                 "-o", str(d / "pred.tsv"), "--quiet"]) == 0
    lines = [line.split("\t") for line in (d / "pred.tsv").read_text().splitlines()]
    assert len(lines) == 80 * len(columns) and {t for _, t, _ in lines} == set(columns)
    assert lines[0][0] == "test0" and all(0 <= float(v) <= 1 for _, _, v in lines)
    capsys.readouterr()
    assert main(["evaluate", obo, str(d / "pred.tsv"), str(d / "test_annotations.tsv"),
                 "--json", str(d / "r.json")]) == 0
    result = json.loads((d / "r.json").read_text())
    assert list(result) == [NAMESPACES[0]] and result[NAMESPACES[0]]["n_targets"] == 80
    assert main(["rank", str(d / "test_scores.csv"), obo, "--namespace", NAMESPACES[0], "--id-column", "gene",
                 "-o", str(d / "rank.csv"), "--quiet"]) == 0
    import pandas as pd

    table = pd.read_csv(d / "rank.csv")
    assert list(table.columns[:4]) == ["rank", "gene", "class", "name"]
    assert table["name"].str.startswith("biological term").all()


@pytest.mark.parametrize("argv, message", [
    (["--id-column", "gene"], "has 2 namespaces (biological_process, molecular_function); choose one with --namespace"),
    (["--namespace", "biological_process"], "(first: 'gene'); if it holds the objects' ids, pass --id-column gene"),
    (["--namespace", "molecular_function", "--id-column", "gene"], "columns are not terms of namespace"),
])
def test_obo_errors_are_one_line(go_files, argv, message, capsys):
    d, _ = go_files
    status = main(["fit", str(d / "train_scores.csv"), str(d / "train_annotations.tsv"), str(d / "go.obo"),
                   "-o", str(d / "m.npz"), *argv])
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert "cannot tell the delimiter" not in err


def test_annotations_need_ids(go_files, capsys):
    import pandas as pd

    d, _ = go_files
    pd.read_csv(d / "train_scores.csv").drop(columns="gene").to_csv(d / "no_ids.csv", index=False)
    assert main(["fit", str(d / "no_ids.csv"), str(d / "train_annotations.tsv"), str(d / "go.obo"), "--namespace",
                 NAMESPACES[0], "-o", str(d / "m.npz")]) == 2
    assert "holds gene-term annotations: pass --id-column" in capsys.readouterr().err


def test_missing_obonet_names_the_extra(go_files, monkeypatch, capsys):
    import sys

    d, _ = go_files
    monkeypatch.setitem(sys.modules, "obonet", None)  # import obonet raises ImportError
    assert main(["rank", str(d / "test_scores.csv"), str(d / "go.obo"), "--namespace", NAMESPACES[0],
                 "-o", str(d / "r.csv")]) == 2
    assert 'pip install "hmcpgm[obo]"' in capsys.readouterr().err
    assert main(["evaluate", str(d / "go.obo"), str(d / "test_annotations.tsv"), str(d / "test_annotations.tsv")]) == 2
    assert 'pip install "hmcpgm[obo]"' in capsys.readouterr().err


def test_evaluate_with_an_edge_list_and_a_gaf_ground_truth(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("parent,child\nr,a\nr,b\na,c\n")
    row = "DB\t{}\tsym\t{}\t{}\tREF\tIEA\t\tP\tname\t\tprotein\ttaxon:1\t20200101\tDB\n"
    (tmp_path / "gt.gaf").write_text("!gaf-version: 2.2\n" + row.format("g1", "", "c") + row.format("g2", "", "b")
                                     + row.format("g2", "NOT", "c"))
    (tmp_path / "p.tsv").write_text("g1\tc\t0.8\ng1\tb\t0.3\ng2\tb\t0.6\ng2\ta\t0.2\n")
    assert main(["evaluate", str(tmp_path / "h.csv"), str(tmp_path / "p.tsv"), str(tmp_path / "gt.gaf"),
                 "--json", str(tmp_path / "r.json")]) == 0
    r = json.loads((tmp_path / "r.json").read_text())["all"]
    # by hand: g1 true {r, a, c}, g2 true {r, b}; at tau in (0.3, 0.6] g1 predicts {r, a, c} (c's 0.8 propagated),
    # g2 predicts {r, b}: precision = recall = 1
    assert r["n_targets"] == 2 and r["fmax"] == 1.0 and 0.3 < r["fmax_threshold"] <= 0.6


def test_evaluate_refuses_predictions_that_match_nothing(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("parent,child\nr,a\nr,b\n")
    (tmp_path / "p.tsv").write_text("P1\tr\t0.9\nP1\ta\t0.8\nP2\tb\t0.7\n")
    (tmp_path / "t.tsv").write_text("P1\ta\nP2\tb\n")
    (tmp_path / "m.csv").write_text("r,a,b\n0.9,0.8,0.1\n")  # a score matrix, not CAFA lines
    h, json_out = str(tmp_path / "h.csv"), str(tmp_path / "r.json")
    for predictions, truth in (("t.tsv", "p.tsv"), ("m.csv", "t.tsv")):  # the two files swapped; a matrix
        assert main(["evaluate", h, str(tmp_path / predictions), str(tmp_path / truth), "--json", json_out]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 2 and err[0].startswith("hmcpgm: error: no namespace has both ground truth and predictions")
        assert "warning: 2 lines of predictions file" in err[1] and "fewer than the three fields" in err[1]
        assert not (tmp_path / "r.json").exists()
    # a folder: a file that matches nothing is reported beside the others; a folder where none matches is an error
    (tmp_path / "pred").mkdir()
    (tmp_path / "pred" / "good.tsv").write_text((tmp_path / "p.tsv").read_text())
    (tmp_path / "pred" / "other.tsv").write_text("X9\ta\t0.5\n")
    assert main(["evaluate", h, str(tmp_path / "pred"), str(tmp_path / "t.tsv")]) == 0
    assert "other.tsv:\nno namespace has both ground truth and predictions" in capsys.readouterr().out
    (tmp_path / "pred" / "good.tsv").write_text("X8\tb\t0.5\n")
    assert main(["evaluate", h, str(tmp_path / "pred"), str(tmp_path / "t.tsv")]) == 2
    assert "no file of PREDICTIONS" in capsys.readouterr().err


def test_evaluate_a_ground_truth_of_roots_alone_without_the_roots(tmp_path, capsys):
    """cafaeval (no_orphans) scores it: Fmax 0 at tau 0.01, S 1; AU(PRC) has no positive left, so it is NaN
    (null in the JSON) instead of an error that would hide every other namespace."""
    (tmp_path / "h.csv").write_text("parent,child\nr,a\n")
    (tmp_path / "p.tsv").write_text("P1\ta\t0.8\n")
    (tmp_path / "t.tsv").write_text("P1\tr\n")
    (tmp_path / "ia.tsv").write_text("r\t0\na\t1\n")
    assert main(["evaluate", str(tmp_path / "h.csv"), str(tmp_path / "p.tsv"), str(tmp_path / "t.tsv"), "--ia",
                 str(tmp_path / "ia.tsv"), "--exclude-roots", "--json", str(tmp_path / "r.json")]) == 0
    r = json.loads((tmp_path / "r.json").read_text())["all"]
    assert (r["fmax"], r["fmax_threshold"], r["fmax_coverage"], r["smin"], r["auprc"]) == (0.0, 0.01, 1.0, 1.0, None)


def test_fit_with_an_edge_list_and_annotations(go_files, capsys):
    from hmcpgm.ontology import read_ontology

    d, columns = go_files
    h = read_ontology(d / "go.obo").hierarchy(NAMESPACES[0])
    edges = "".join(f"{p},{c}\n" for p, c in h.edges if p in columns)
    (d / "h.csv").write_text("parent,child\n" + "".join(f"{c}\n" for c in columns) + edges)
    assert main(["fit", str(d / "train_scores.csv"), str(d / "train_annotations.tsv"), str(d / "h.csv"),
                 "--id-column", "gene", "-o", str(d / "m.npz"), "--quiet"]) == 0
    assert f"fitted on 300 objects x {len(columns)} classes" in capsys.readouterr().out


FAST_FIT = ["--score-model", "platt", "--tempering", "none", "--consistency", "hierrank", "--mlpr-version", "full",
            "--quiet"]


def test_check_inference_takes_a_go_model_with_its_obo(go_files, capsys):
    """The model's namespace, restricted to its classes as fit restricted it (it refused every GO model before)."""
    d, columns = go_files
    obo, model = str(d / "go.obo"), str(d / "m.npz")
    assert main(["fit", str(d / "train_scores.csv"), str(d / "train_annotations.tsv"), obo, "--namespace",
                 NAMESPACES[0], "--id-column", "gene", "-o", model, *FAST_FIT]) == 0
    capsys.readouterr()
    assert main(["check-inference", obo, "--model", model, "--objects", "3", "--json", str(d / "c.json")]) == 0
    assert json.loads((d / "c.json").read_text())["n_classes"] == len(columns)
    capsys.readouterr()
    assert main(["check-inference", obo, "--model", model, "--namespace", NAMESPACES[1]]) == 2
    assert "are not all terms of namespace" in capsys.readouterr().err
    assert main(["check-inference", obo]) == 2  # two namespaces: one is chosen, not both merged
    assert "choose one with --namespace" in capsys.readouterr().err
    assert main(["check-inference", obo, "--namespace", NAMESPACES[1], "--objects", "2"]) == 0
    assert "synthetic weak evidence" in capsys.readouterr().out


def _gaf_of(pairs, path):
    """A GAF file of ``(gene, qualifier, term, evidence code)`` rows."""
    row = "UniProtKB\t{}\tsym\t{}\t{}\tPMID:1\t{}\t\tP\tname\t\tprotein\ttaxon:9606\t20240101\tGO_Central\t\t\n"
    path.write_text("!gaf-version: 2.2\n" + "".join(row.format(*r) for r in pairs))


def test_fit_with_evidence_reads_the_gaf_lines_of_those_codes_only(go_files):
    import pandas as pd

    from hmcpgm.persist import load_model

    d, columns = go_files
    pairs = [line.split("\t") for line in (d / "train_annotations.tsv").read_text().splitlines()]
    codes = ["EXP", "IDA", "IPI", "IMP", "IGI", "IEP"]
    rows = [(g, "", t, codes[i % 6]) for i, (g, t) in enumerate(pairs)]  # the two-column file, experimental codes
    # and, for every third gene, a term it is not annotated with, by electronic annotation, by sequence similarity
    # and as a NOT line with an experimental code: lines the filter must leave out
    for i, (g, t) in enumerate(pairs[::3]):
        other = columns[(columns.index(t) + 1) % len(columns)]
        rows.append((g, "", other, ("IEA", "ISS")[i % 2]))
        rows.append((g, "NOT", other, "IDA"))
    _gaf_of(rows, d / "train.gaf")
    obo, ns = str(d / "go.obo"), NAMESPACES[0]
    common = ["--namespace", ns, "--id-column", "gene", *FAST_FIT]
    test = pd.read_csv(d / "test_scores.csv", index_col="gene")
    predictions = {}
    runs = [("tsv", "train_annotations.tsv", []), ("filtered", "train.gaf", ["--evidence", "experimental"]),
            ("every", "train.gaf", [])]
    for name, labels, evidence in runs:
        assert main(["fit", str(d / "train_scores.csv"), str(d / labels), obo, "-o", str(d / f"{name}.npz"), *common,
                     *evidence]) == 0
        predictions[name] = load_model(d / f"{name}.npz").predict_proba(test).to_numpy()
    np.testing.assert_array_equal(predictions["filtered"], predictions["tsv"])
    assert not np.array_equal(predictions["every"], predictions["tsv"])  # the IEA and ISS lines change the labels


@pytest.mark.parametrize("labels, evidence, message", [
    ("train.gaf", "EXP,XYZ", "fit: argument --evidence: 'XYZ' is neither a GO evidence code"),
    ("train_annotations.tsv", "cafa", "train_annotations.tsv has no evidence column (it holds 'target term' lines, "
                                      "not GAF): an evidence filter cannot apply to it; leave out --evidence"),
    ("labels.csv", "cafa", "--evidence keeps GAF lines of some evidence codes, but"),
    ("train.gaf", "IEA", "train.gaf: no line has an evidence code of --evidence (IEA); its lines have EXP (300)"),
])
def test_fit_evidence_refusals_are_one_line(go_files, capsys, labels, evidence, message):
    import pandas as pd

    d, columns = go_files
    pairs = [line.split("\t") for line in (d / "train_annotations.tsv").read_text().splitlines()]
    _gaf_of([(g, "", t, "EXP") for g, t in pairs], d / "train.gaf")
    scores = pd.read_csv(d / "train_scores.csv")
    scores[columns] = 0
    scores.to_csv(d / "labels.csv", index=False)  # a label matrix (all 0: read before the refusal, never fitted)
    try:  # a value argparse refuses exits with status 2, a file the command refuses returns it
        status = main(["fit", str(d / "train_scores.csv"), str(d / labels), str(d / "go.obo"), "--namespace",
                       NAMESPACES[0], "--id-column", "gene", "-o", str(d / "m.npz"), "--evidence", evidence,
                       *FAST_FIT])
    except SystemExit as exc:
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (d / "m.npz").exists()


@pytest.mark.parametrize("step, shown", [("0.005", "0.125"), ("0.0025", "0.1225"), ("0.01", "0.13"),
                                         ("0.25", "0.25"), ("1e-05", "0.12200")])
def test_evaluate_prints_the_threshold_with_the_steps_decimals(tmp_path, capsys, step, shown):
    """On a grid of 0.005 the table printed 0.12 for Fmax's threshold 0.125 (cafaeval and the JSON say 0.125):
    another point of the grid, at which P1's false b (0.122) would count."""
    (tmp_path / "h.csv").write_text("parent,child\nr,a\nr,b\n")
    (tmp_path / "p.tsv").write_text("P1\ta\t0.13\nP1\tb\t0.122\nP2\tb\t0.3\n")
    (tmp_path / "gt.tsv").write_text("P1\ta\nP2\tb\n")
    out = tmp_path / "r.json"
    assert main(["evaluate", *(str(tmp_path / f) for f in ("h.csv", "p.tsv", "gt.tsv")), "--threshold-step", step,
                 "--json", str(out), "--exclude-roots"]) == 0
    head, line = capsys.readouterr().out.splitlines()[:2]
    (result,) = json.loads(out.read_text()).values()  # one namespace
    threshold = result["fmax_threshold"]
    assert line.split()[3] == shown == f"{threshold:.{len(shown) - 2}f}", (head, line)
    assert len(head) == len(line)


@pytest.mark.parametrize("step", ["0", "1e-300", "1e-12", "1"])
def test_evaluate_refuses_a_threshold_step_out_of_range_before_reading(tmp_path, capsys, step):
    """1e-300 made an array of 1e300 thresholds (a traceback); 0 was refused after every file was read."""
    (tmp_path / "h.csv").write_text("parent,child\nr,a\n")
    with pytest.raises(SystemExit) as exc:  # argparse's refusal
        main(["evaluate", str(tmp_path / "h.csv"), str(tmp_path / "missing.tsv"), str(tmp_path / "missing2.tsv"),
              "--threshold-step", step])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--threshold-step: expected a number in [1e-05, 1.0)" in err[0]


def test_evaluate_says_why_nothing_was_evaluated(tmp_path, capsys):
    """Scores below the first threshold, or a ground truth without annotation, were reported as predictions
    that name no target of the ground truth (files swapped?)."""
    (tmp_path / "h.csv").write_text("parent,child\nr,a\nr,b\n")
    (tmp_path / "t.tsv").write_text("P1\ta\nP2\tb\n")
    (tmp_path / "low.tsv").write_text("P1\ta\t0.005\nP2\tb\t0.001\n")
    (tmp_path / "p.tsv").write_text("P1\ta\t0.8\nP2\tb\t0.7\n")
    (tmp_path / "empty.tsv").write_text("")
    h = str(tmp_path / "h.csv")
    assert main(["evaluate", h, str(tmp_path / "low.tsv"), str(tmp_path / "t.tsv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hmcpgm: error: no score reaches the first threshold (0.01) on a target of GROUND_TRUTH")
    assert main(["evaluate", h, str(tmp_path / "low.tsv"), str(tmp_path / "t.tsv"), "--threshold-step", "0.001"]) == 0
    capsys.readouterr()
    assert main(["evaluate", h, str(tmp_path / "p.tsv"), str(tmp_path / "empty.tsv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert any(line.startswith("hmcpgm: error: GROUND_TRUTH") and "annotates no target" in line for line in err)


def test_annotated_genes_spelt_unlike_the_scores_ids_are_said(go_files, capsys):
    """Half the annotated genes spelt TRAIN0 where the scores say train0: they matched nothing, their scored genes
    became negatives for every term, and fit said nothing."""
    d, _ = go_files
    lines = (d / "train_annotations.tsv").read_text().splitlines(keepends=True)
    (d / "ann.tsv").write_text("".join(line.replace("train", "TRAIN", 1) if int(line.split("\t")[0][5:]) % 2 else line
                                       for line in lines))
    args = ["fit", str(d / "train_scores.csv"), str(d / "ann.tsv"), str(d / "go.obo"), "--namespace", NAMESPACES[0],
            "--id-column", "gene", "--mlpr-version", "full", "--score-model", "lpr", "--tempering", "none",
            "--pool", "none", "--quiet", "-o", str(d / "m.npz")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "annotated genes of" in err and "'TRAIN1' and the scores' 'train1'" in err and "spell the ids" in err
    # a scored gene without annotation and annotated genes that were not scored (a whole GAF): nothing to say
    lines = [line for line in lines if not line.startswith("train3\t")]
    (d / "more.tsv").write_text("".join(lines) + "".join(f"other{i}\t{line.split(chr(9))[1]}"
                                                         for i, line in enumerate(lines[:5])))
    args[2] = str(d / "more.tsv")
    assert main(args) == 0
    assert "annotated genes" not in capsys.readouterr().err


def test_a_scores_file_of_one_go_term_is_read_with_an_obo_hierarchy(go_files, capsys):
    """pandas' delimiter sniffing split the header 'GO:0000002' at its colon: '2 columns are not terms'."""
    d, columns = go_files
    (d / "one.csv").write_text(f"{columns[1]}\n0.5\n0.7\n")
    assert main(["rank", str(d / "one.csv"), str(d / "go.obo"), "--namespace", NAMESPACES[0], "-o",
                 str(d / "r.csv"), "--quiet"]) == 0
    assert len((d / "r.csv").read_text().splitlines()) == 3


def test_evaluate_shows_its_steps_on_a_terminal_and_none_with_quiet(tmp_path, capsys, monkeypatch):
    """audit57: evaluate was silent while it read large files, with no --quiet."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    _files(tmp_path, 4)
    argv = ["evaluate", str(tmp_path / "go.obo"), str(tmp_path / "pred" / "m.tsv"), str(tmp_path / "gt.tsv")]
    for quiet, shown in (([], True), (["--quiet"], False)):
        screen = Terminal()
        monkeypatch.setattr(sys, "stderr", screen)
        assert main([*argv, *quiet]) == 0
        monkeypatch.undo()
        assert ("evaluate: " in screen.getvalue() and "step" in screen.getvalue()) is shown, screen.getvalue()
        assert "Fmax" in capsys.readouterr().out
