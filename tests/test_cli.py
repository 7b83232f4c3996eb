"""The ``hmcpgm`` command line, through ``hmcpgm.cli.main`` (and once as ``python -m hmcpgm``)."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from hmcpgm import MLPR, Hierarchy, make_paper_synthetic
from hmcpgm.cli import build_parser, main
from hmcpgm.datasets import load_hmc_arff
from hmcpgm.io import read_hierarchy, read_matrix, write_hierarchy, write_matrix
from hmcpgm.persist import load_model


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Small CSV inputs from the paper's synthetic model, written with hmcpgm.io."""
    d = tmp_path_factory.mktemp("cli")
    data = make_paper_synthetic(n_train=1500, n_test=200, seed=3)
    paths = {
        "dir": d,
        "hierarchy": d / "hierarchy.csv",
        "scores": d / "scores.csv",
        "labels": d / "labels.csv",
        "test": d / "test.csv",
        "model": d / "model.npz",
    }
    write_hierarchy(data.hierarchy, paths["hierarchy"])
    write_matrix(paths["scores"], data.train_scores, data.hierarchy)
    write_matrix(paths["labels"], data.train_labels, data.hierarchy)
    ids = [f"gene{i}" for i in range(len(data.test_scores))]
    write_matrix(paths["test"], data.test_scores, data.hierarchy, ids=ids, id_column="gene")
    assert main(["fit", str(paths["scores"]), str(paths["labels"]), str(paths["hierarchy"]),
                 "-o", str(paths["model"])]) == 0
    return paths


def _error_line(capsys):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hmcpgm: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------------- happy paths
def test_fit_predict_equals_estimator(files, tmp_path, capsys):
    out = tmp_path / "mlpr.csv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--id-column", "gene",
                 "--uncalibrated"]) == 0
    assert "wrote mLPRs of 200 objects" in capsys.readouterr().out

    # the same fit through the Python API, on the same files
    hierarchy = read_hierarchy(files["hierarchy"])
    _, scores = read_matrix(files["scores"], hierarchy, "scores")
    _, labels = read_matrix(files["labels"], hierarchy, "labels")
    ids, test = read_matrix(files["test"], hierarchy, "scores", id_column="gene")
    expected = MLPR(hierarchy=hierarchy).fit(scores, labels).predict_proba(test)

    frame = pd.read_csv(out, dtype={"gene": str})
    assert list(frame["gene"]) == list(ids)
    got = frame[[str(c) for c in hierarchy.classes]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)  # CSV holds repr-precision floats


@pytest.mark.parametrize("version", ["indpt", "nbh"])
def test_predict_version_option(files, tmp_path, version):
    # the paper's model (nothing cross-fitted) predicts any version from one fit
    model, out = tmp_path / "paper.npz", tmp_path / "mlpr.csv"
    assert main(["fit", str(files["scores"]), str(files["labels"]), str(files["hierarchy"]), "-o", str(model),
                 "--mlpr-version", "full", "--tempering", "none", "--no-recalibrate", "--quiet"]) == 0
    assert main(["predict", str(model), str(files["test"]), "-o", str(out),
                 "--id-column", "gene", "--mlpr-version", version]) == 0
    hierarchy = read_hierarchy(files["hierarchy"])
    _, scores = read_matrix(files["scores"], hierarchy, "scores")
    _, labels = read_matrix(files["labels"], hierarchy, "labels")
    _, test = read_matrix(files["test"], hierarchy, "scores", id_column="gene")
    expected = MLPR(hierarchy=hierarchy, version=version, tempering=None, recalibrate=False).fit(
        scores, labels).predict_proba(test)
    _, got = read_matrix(out, hierarchy, "mlpr", id_column="gene")
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_predict_refuses_another_version_of_a_cross_fitted_model(files, tmp_path, capsys):
    chosen = load_model(files["model"]).version_
    other = next(v for v in ("indpt", "nbh", "full") if v != chosen)
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(tmp_path / "p.csv"),
                 "--id-column", "gene", "--mlpr-version", other]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"was fitted for version {chosen}" in err


@pytest.mark.parametrize("extra, message", [
    (["--engine", "loopy", "--budget-gb", "2"], "--engine loopy takes --damping and --max-iter, not --budget-gb"),
    (["--engine", "sparse", "--damping", "0.5"], "--engine sparse takes --budget-gb, not --damping"),
    (["--engine", "tree", "--max-iter", "5"], "--engine tree takes none of the inference options, not --max-iter"),
])
def test_predict_refuses_an_engines_option_in_flags(files, tmp_path, capsys, extra, message):
    """audit48: the refusal named Python's options ("takes the options ['damping', 'max_iter', 'return_report',
    'start', 'tol']; got unknown option(s) ['budget_bytes']")."""
    out = tmp_path / "p.csv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--id-column", "gene",
                 *extra]) == 2
    assert capsys.readouterr().err == f"hmcpgm: error: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("extra", [["--calibrated"], [], ["--chunk-size", "70"]])
def test_predict_writes_the_recalibrated_mlprs_by_default(files, tmp_path, extra):
    """What 'rank --fdr' needs is the default, chunked or not."""
    out = tmp_path / "calibrated.csv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--id-column", "gene",
                 "--quiet", *extra]) == 0
    model = load_model(files["model"])
    assert model.recalibration_ is not None
    _, test = read_matrix(files["test"], model.hierarchy_, "scores", id_column="gene")
    _, got = read_matrix(out, model.hierarchy_, "mlpr", id_column="gene")
    np.testing.assert_allclose(got, model.calibrated_proba(test), rtol=1e-12, atol=0)
    assert np.abs(got - model.predict_proba(test)).max() > 1e-6  # not the mLPRs themselves


@pytest.mark.parametrize("chunk", [None, "70"])
def test_predict_with_decisions_runs_inference_once_per_chunk(files, tmp_path, monkeypatch, chunk):
    """One predict path (hmcpgm.scale.predict_files): the decisions come from the chunk's own mLPRs."""
    import hmcpgm.inference
    from hmcpgm.scale import DEFAULT_CHUNK_SIZE

    model = load_model(files["model"])
    if model.version_ == "indpt":  # indpt runs no network inference: count a network version's
        pytest.skip("the fixture's model chose indpt")
    calls = []
    real = hmcpgm.inference.mlpr_from_likelihoods

    def counted(network, likelihoods, **options):
        calls.append(len(likelihoods))
        return real(network, likelihoods, **options)

    monkeypatch.setattr(hmcpgm.inference, "mlpr_from_likelihoods", counted)
    out, dec = tmp_path / "p.csv", tmp_path / "d.csv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--decisions", str(dec),
                 "--id-column", "gene", "--quiet", *(["--chunk-size", chunk] if chunk else [])]) == 0
    _, test = read_matrix(files["test"], model.hierarchy_, "scores", id_column="gene")
    size = int(chunk) if chunk else DEFAULT_CHUNK_SIZE
    assert calls == [min(size, len(test) - start) for start in range(0, len(test), size)]
    monkeypatch.undo()
    _, got = read_matrix(dec, model.hierarchy_, "decisions", id_column="gene", binary=True)
    np.testing.assert_array_equal(got, model.predict(test))


def test_predict_accepts_the_version_auto_the_parser_offers(files, tmp_path):
    out = tmp_path / "p.csv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--id-column", "gene",
                 "--quiet", "--mlpr-version", "auto"]) == 0
    model = load_model(files["model"])
    _, test = read_matrix(files["test"], model.hierarchy_, "scores", id_column="gene")
    _, got = read_matrix(out, model.hierarchy_, "mlpr", id_column="gene")
    np.testing.assert_allclose(got, model.calibrated_proba(test), rtol=1e-12, atol=0)


def test_predict_cafa_lines_are_the_same_in_chunks(files, tmp_path):
    from hmcpgm.ontology import write_cafa_predictions

    out = tmp_path / "p.tsv"
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(out), "--quiet", "--format", "cafa",
                 "--id-column", "gene", "--chunk-size", "70"]) == 0
    model = load_model(files["model"])
    ids, test = read_matrix(files["test"], model.hierarchy_, "scores", id_column="gene")
    whole = tmp_path / "whole.tsv"
    write_cafa_predictions(whole, model.calibrated_proba(test), model.hierarchy_, ids)
    assert out.read_text() == whole.read_text()


@pytest.mark.parametrize("method", ["hierrank", "naive"])
@pytest.mark.parametrize("source", ["hierarchy", "model"])
def test_rank_output_is_consistent(files, tmp_path, capsys, method, source):
    mlpr = tmp_path / "mlpr.csv"
    main(["predict", str(files["model"]), str(files["test"]), "-o", str(mlpr), "--id-column", "gene"])
    out = tmp_path / "rank.csv"
    assert main(["rank", str(mlpr), str(files[source]), "-o", str(out), "--id-column", "gene",
                 "--method", method, "--fdr", "0.1"]) == 0
    stdout = capsys.readouterr().out
    table = pd.read_csv(out, dtype={"gene": str, "class": str})
    hierarchy = read_hierarchy(files["hierarchy"])
    ids, values = read_matrix(mlpr, hierarchy, "values", id_column="gene")
    m, k = values.shape
    assert len(table) == m * k
    assert list(table["rank"]) == list(range(1, m * k + 1))
    # every event exactly once, with its value
    pos = {str(c): j for j, c in enumerate(hierarchy.classes)}
    row = {g: i for i, g in enumerate(ids)}
    flat = np.array([row[g] * k + pos[c] for g, c in zip(table["gene"], table["class"])])
    assert np.array_equal(np.sort(flat), np.arange(m * k))
    np.testing.assert_array_equal(table["value"].to_numpy(), values.ravel()[flat])
    # HierRank puts a parent's event before its child's; NaiveSort does wherever the parent's value is higher
    # (the default averages full's mLPRs with the neighbour stack: a child can rise above its parent)
    rank_of = np.empty(m * k, dtype=int)
    rank_of[flat] = np.arange(m * k)
    rank_matrix = rank_of.reshape(m, k)
    parent, child = np.asarray(hierarchy.edge_indices).T
    first = rank_matrix[:, parent] < rank_matrix[:, child]
    higher = values[:, parent] > values[:, child]
    assert first.all() if method == "hierrank" else first[higher].all() and higher.mean() > 0.5
    # --fdr marks a prefix, whose estimated FDR (mean of 1 - mLPR) is at most 0.1, and is maximal
    positive = table["positive"].to_numpy()
    r = int(positive.sum())
    assert r > 0 and (positive[:r] == 1).all() and (positive[r:] == 0).all()
    assert f"{r} of {m * k} events called positive" in stdout
    v = table["value"].to_numpy()
    assert np.mean(1 - v[:r]) <= 0.1 + 1e-12
    assert r == m * k or np.mean(1 - v[: r + 1]) > 0.1


@pytest.mark.parametrize("chunked", [False, True])
def test_an_id_column_named_like_a_ranking_column_is_refused(tmp_path, capsys, chunked):
    """--id-column rank gave a traceback, --id-column positive overwrote the ids with the decisions, value /
    class / block_mean wrote two columns of one name (audit25). An id column 'name' is refused only where the
    term names are written."""
    (tmp_path / "h.csv").write_text("parent,child\nA,B\nA,C\n")
    (tmp_path / "t.obo").write_text("format-version: 1.2\n\n[Term]\nid: A\nname: top\nnamespace: n\n\n"
                                    "[Term]\nid: B\nname: b\nnamespace: n\nis_a: A\n\n"
                                    "[Term]\nid: C\nname: c\nnamespace: n\nis_a: A\n")
    out = tmp_path / "r.csv"
    extra = ["--chunk-size", "1"] if chunked else []
    for name, hierarchy in [(n, "h.csv") for n in ("rank", "class", "value", "block_mean", "positive")] + [
            ("name", "t.obo")]:
        (tmp_path / "v.csv").write_text(f"{name},A,B,C\n001,0.9,0.8,0.1\n1,0.7,0.2,0.6\n")
        assert main(["rank", str(tmp_path / "v.csv"), str(tmp_path / hierarchy), "-o", str(out), "--fdr", "0.3",
                     "--id-column", name, "--quiet"] + extra) == 2
        err = capsys.readouterr().err
        assert f"the id column {name!r} has the name of a column of the ranking file" in err
        assert "choose another --id-column" in err and "Traceback" not in err and not out.exists()
    (tmp_path / "v.csv").write_text("name,A,B,C\n001,0.9,0.8,0.1\n1,0.7,0.2,0.6\n")
    assert main(["rank", str(tmp_path / "v.csv"), str(tmp_path / "h.csv"), "-o", str(out), "--fdr", "0.3",
                 "--id-column", "name", "--quiet"] + extra) == 0  # no term names: 'name' is free
    table = pd.read_csv(out, dtype={"name": str})
    assert list(table.columns) == ["rank", "name", "class", "value", "block_mean", "positive"]
    assert set(table["name"]) == {"001", "1"}


def test_rank_without_fdr_has_no_decision_column(files, tmp_path):
    out = tmp_path / "rank.csv"
    assert main(["rank", str(files["scores"]), str(files["hierarchy"]), "-o", str(out)]) == 0
    table = pd.read_csv(out, dtype={"class": str})
    assert "positive" not in table.columns
    # without --id-column, objects are the row numbers of the values file, from 1 under the header
    hierarchy = read_hierarchy(files["hierarchy"])
    _, scores = read_matrix(files["scores"], hierarchy, "scores")
    col = {str(c): j for j, c in enumerate(hierarchy.classes)}
    cols = table["class"].map(col).to_numpy()
    assert table["object"].min() == 1 and table["object"].max() == len(scores)
    np.testing.assert_array_equal(table["value"].to_numpy(), scores[table["object"].to_numpy() - 1, cols])
    assert len(table) == scores.size


def test_demo_prints_tables_and_writes_csv(tmp_path, capsys):
    assert main(["demo", "--n-train", "3000", "--n-test", "1000", "--quiet", "--csv", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Criterion I" in out and "Criterion II" in out
    assert "mLPR-full-HierRank" in out and "Raw-NaiveSort" in out
    written = sorted(p.name for p in tmp_path.glob("*.csv"))
    assert written == sorted(["precision.csv", "recall.csv", "fdp.csv", "discovery.csv", "summary.csv"])
    precision = pd.read_csv(tmp_path / "precision.csv", index_col=0)
    assert precision.shape == (10, 5)  # Raw, mLPR-indpt, nbh, full and auto, each by NaiveSort and HierRank
    assert ((precision.to_numpy() >= 0) & (precision.to_numpy() <= 1)).all()
    for name in written:
        assert f"wrote {tmp_path / name}" in out


def test_demo_csv_checks_every_table_first_and_replaces_them_together(tmp_path, capsys, monkeypatch):
    """audit55: only precision.csv was checked before the run, so a folder named summary.csv failed after the
    whole experiment, in words that did not name --csv, with four tables already written; a missing folder was
    refused though the tables' writer makes it; a full disk at the last table left four new beside an old one."""
    import errno

    from hmcpgm.applications import paper

    def run(folder):
        return main(["demo", "--n-train", "1000", "--n-test", "500", "--quiet", "--csv", str(folder)])

    (tmp_path / "d" / "summary.csv").mkdir(parents=True)
    monkeypatch.setattr(paper, "synthetic_experiment", lambda *a, **k: pytest.fail("the run started"))
    assert run(tmp_path / "d") == 2
    assert "--csv" in capsys.readouterr().err and os.listdir(tmp_path / "d") == ["summary.csv"]
    monkeypatch.undo()
    (tmp_path / "f").write_text("")
    assert run(tmp_path / "f" / "x") == 2 and "is a file" in capsys.readouterr().err
    assert run(tmp_path / "new" / "sub") == 0  # made, with its parents
    names = sorted(p.name for p in (tmp_path / "new" / "sub").iterdir())
    assert names == sorted(f"{name}.csv" for name in paper.TABLES)
    old = {name: (tmp_path / "new" / "sub" / name).read_bytes() for name in names}
    real_fsync = os.fsync

    def fsync(fd):
        if ".summary.csv" in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main(["demo", "--n-train", "1000", "--n-test", "500", "--quiet", "--seed", "1", "--csv",
                 str(tmp_path / "new" / "sub")]) == 2
    assert {p.name: p.read_bytes() for p in (tmp_path / "new" / "sub").iterdir()} == old  # every table old


def _write_arff(path, rows):
    header = (
        "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE x2 numeric\n"
        "@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/01\n@DATA\n"
    )
    path.write_text(header + "\n".join(rows) + "\n")


def test_benchmark_on_tiny_arff(tmp_path, capsys):
    rng = np.random.default_rng(0)
    leaves = ["01/01", "01/02", "02/01", "02", "01"]
    centers = {"01/01": (2, 2), "01/02": (2, -2), "02/01": (-2, 2), "02": (-2, -2), "01": (2, 0)}

    def rows(n):
        out = []
        for i in range(n):
            leaf = leaves[i % len(leaves)]
            x = np.add(centers[leaf], rng.normal(size=2))
            out.append(f"{x[0]:.4f},{x[1]:.4f},{leaf}")
        return out

    paths = [tmp_path / f"tiny.{part}.arff" for part in ("train", "valid", "test")]
    for path, n in zip(paths, (60, 30, 30)):
        _write_arff(path, rows(n))
    out_json = tmp_path / "result.json"
    assert main(["benchmark", *map(str, paths), "--json", str(out_json), "--quiet"]) == 0
    text = capsys.readouterr().out
    result = json.loads(out_json.read_text())
    assert result["dataset"] == "tiny"
    assert result["rows"] == {"train": 60, "valid": 30, "test": 30}
    assert result["hierarchy"]["classes"] == load_hmc_arff(paths[0]).hierarchy.n_classes == 5
    families = ["Raw", "mLPR-auto", "mLPR-indpt", "mLPR-nbh", "mLPR-full"]
    from hmcpgm.applications.leaderboard import CALIBRATION_PREFIX, LEADERBOARD

    corrections = {f"{prefix}-{label}" for prefix in CALIBRATION_PREFIX.values() for _, _, label in LEADERBOARD}
    assert set(result["methods"]) == {f"{f}-{r}" for f in families for r in ("NaiveSort", "HierRank")} | {
        f"{c}-NaiveSort" for c in corrections}
    assert set(result["fit_seconds"]) == set(families[1:]) | corrections
    for c in corrections - {"iso-flat", "platt-flat"}:  # the corrections respect the hierarchy
        assert result["methods"][f"{c}-NaiveSort"]["violations"] == 0
    stage = result["second_stage"]
    assert stage["version"] in ("indpt", "nbh", "full") and f"mLPR-auto chose {stage['version']}" in text
    assert [row["version"] for row in stage["cv_results"]] == ["indpt", "nbh", "full"]
    for family in families[1:]:  # the Bayesian FDR cutoff of every mLPR method
        numbers = result["methods"][f"{family}-HierRank"]
        for alpha in (0.05, 0.1, 0.2):
            called, fdp = numbers[f"bayes_rank@{alpha}"], numbers[f"bayes_fdp@{alpha}"]
            assert 0 <= called <= 30 * 4 and (fdp is None) == (called == 0)
    # every number of the printed table is in the JSON: AU(PRC) rows, in percent with one decimal
    for method, numbers in result["methods"].items():
        assert 0 <= numbers["auprc"] <= 1
        line = next(row for row in text.splitlines() if row.startswith(method + " "))
        assert f"{100 * numbers['auprc']:.1f}" in line.split()
        assert str(numbers["violations"]) == line.split()[-1]
        if method.endswith("HierRank"):
            assert numbers["violations"] == 0
    # the paired bootstrap against mLPR-auto-HierRank: zero against itself, and printed for the best other method
    assert result["bootstrap"] == {"resamples": 200, "reference": "mLPR-auto-HierRank", "seed": 0}
    ref = result["methods"]["mLPR-auto-HierRank"]
    assert ref["auprc_diff_se"] == ref["auprc_diff_low"] == ref["auprc_diff_high"] == 0
    assert all(n["auprc_diff_low"] <= n["auprc_diff_high"] and n["auprc_se"] >= 0 for n in result["methods"].values())
    assert "Bootstrap of the test rows (200 resamples" in text


@pytest.mark.parametrize("file_name, name", [
    ("cellcycle_FUN.train.arff", "cellcycle_FUN"), ("ImCLEF07A_Train.arff", "ImCLEF07A"),
    ("Enron_corr_trainvalid.arff", "Enron_corr"), ("Diatoms_train.arff", "Diatoms"), ("Diatoms_test.arff", "Diatoms"),
    ("mine.arff", "mine"), ("notes.txt", "notes.txt")])
def test_benchmark_names_the_data_set_from_each_spelling_of_the_training_file(file_name, name):
    from hmcpgm.applications.clus import dataset_name

    assert dataset_name(f"/data/{file_name}") == name


# ---------------------------------------------------------------------- help
def test_benchmark_on_a_loopy_dag_answers_full_exactly_and_reports_loopy_beside(tmp_path):
    """On a DAG with loops the paper's mLPR-full runs auto's exact engine; mLPR-full-loopy is loopy BP."""
    from hmcpgm.applications import run_benchmark
    from hmcpgm.applications.clus import format_benchmark
    from hmcpgm.inference import engine_in_use

    rng = np.random.default_rng(3)
    header = ("@RELATION loopy\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE x2 numeric\n@ATTRIBUTE class hierarchical "
              "root/A,root/B,A/C,B/C,A/F,B/F,C/D\n@DATA\n")
    leaves = ["D", "F", "C", "A", "B", "D@F"]
    paths = [tmp_path / f"loopy.{part}.arff" for part in ("train", "valid", "test")]
    for path, n in zip(paths, (80, 40, 40)):
        rows = []
        for i in range(n):
            x = rng.normal(size=2) + (i % len(leaves))
            rows.append(f"{x[0]:.4f},{x[1]:.4f},{leaves[i % len(leaves)]}")
        path.write_text(header + "\n".join(rows) + "\n")
    h = load_hmc_arff(paths[0]).hierarchy
    assert h.kind == "dag" and not engine_in_use(h, "full", "loopy")[1]  # loopy BP is approximate here
    result = run_benchmark(paths[0], paths[2], paths[1], corrections=False, progress=False)
    assert result["engine"]["full"] == dict(zip(("engine", "exact"), engine_in_use(h, "full")))
    assert result["engine"]["full"]["exact"] and result["engine"]["full"]["engine"] != "loopy"
    assert result["engine"]["full-loopy"] == {"engine": "loopy", "exact": False}
    assert {"mLPR-full-loopy-HierRank", "mLPR-full-loopy-NaiveSort"} <= set(result["methods"])
    assert "bayes_rank@0.1" not in result["methods"]["mLPR-full-loopy-HierRank"]  # not a second stage of its own
    text = format_benchmark(result)  # the printed table lists the cutoffs of the second stages only
    cutoffs = [line for line in text.split("Bayesian FDR cutoff", 1)[1].splitlines() if ": alpha 0.05: " in line]
    assert [line.split(":")[0].strip() for line in cutoffs] == [
        f"mLPR-{v}-HierRank" for v in ("auto", "indpt", "nbh", "full")]
    gap = result["full_exact_vs_loopy"]
    assert gap["exact_engine"] == result["engine"]["full"]["engine"]
    assert 0 <= gap["mean_abs_diff"] <= gap["max_abs_diff"] < 1


@pytest.mark.parametrize("command", [[], ["demo"], ["example"], ["fit"], ["predict"], ["rank"], ["benchmark"],
                                     ["evaluate"]])
def test_help_exits_zero(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: hmcpgm")


def test_help_loads_neither_scikit_learn_nor_pandas():
    """The parser imported the second stage, which imported the corrections' scikit-learn estimator:
    ``hmcpgm --help`` took three seconds, two of them in scikit-learn."""
    import subprocess
    import sys

    code = ("import sys; from hmcpgm.cli import build_parser; build_parser().format_help(); "
            "print(sorted(m for m in ('sklearn', 'pandas', 'pgmpy') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_the_command_handles_ctrl_c_before_it_imports_anything_heavy():
    """``import hmcpgm`` imported numba and networkx (0.8 s): a Ctrl-C in that time, before ``main`` had
    taken over the signal, printed a traceback instead of ``hmcpgm: interrupted``."""
    import subprocess
    import sys

    code = ("import sys; import hmcpgm.cli; "
            "print(sorted(m for m in ('numpy', 'numba', 'networkx', 'pandas') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_every_command_is_tested_for_help():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == {"demo", "example", "fit", "predict", "rank", "benchmark", "evaluate",
                                "check-inference"}


def test_python_dash_m(files, tmp_path):
    out = tmp_path / "mlpr.csv"
    run = subprocess.run(
        [sys.executable, "-m", "hmcpgm", "predict", str(files["model"]), str(files["test"]),
         "-o", str(out), "--id-column", "gene"],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert out.is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "hmcpgm", "predict", str(files["hierarchy"]), str(files["test"]), "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("hmcpgm: error: ") and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr


# ---------------------------------------------------------------------- bad input
def _fit_with_scores(files, tmp_path, frame):
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    return main(["fit", str(path), str(files["labels"]), str(files["hierarchy"]), "-o", str(tmp_path / "m.npz")])


def test_missing_columns(files, tmp_path, capsys):
    frame = pd.read_csv(files["scores"]).drop(columns=["7", "24"])
    assert _fit_with_scores(files, tmp_path, frame) == 2
    line = _error_line(capsys)
    assert "bad.csv" in line and "missing" in line and "'7'" in line and "'24'" in line


def test_unknown_class_name(files, tmp_path, capsys):
    frame = pd.read_csv(files["scores"]).rename(columns={"24": "C99"})
    assert _fit_with_scores(files, tmp_path, frame) == 2
    line = _error_line(capsys)
    assert "'C99'" in line and "not classes of the hierarchy" in line and "missing: ['24']" in line


def test_extra_column(files, tmp_path, capsys):
    frame = pd.read_csv(files["scores"]).assign(C99=0.5)
    assert _fit_with_scores(files, tmp_path, frame) == 2
    assert "'C99'" in _error_line(capsys)


def test_nan_scores(files, tmp_path, capsys):
    frame = pd.read_csv(files["scores"])
    frame.loc[4, "3"] = np.nan
    assert _fit_with_scores(files, tmp_path, frame) == 2
    line = _error_line(capsys)
    assert "row 5 (line 6), column '3'" in line and "finite" in line


def test_non_numeric_cell(files, tmp_path, capsys):
    frame = pd.read_csv(files["scores"]).astype(object)
    frame.loc[2, "5"] = "high"
    assert _fit_with_scores(files, tmp_path, frame) == 2
    line = _error_line(capsys)
    assert "'high'" in line and "not a number" in line and "'5'" in line


def test_labels_not_zero_one(files, tmp_path, capsys):
    frame = pd.read_csv(files["labels"])
    frame.loc[0, "0"] = 2
    path = tmp_path / "labels.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(files["scores"]), str(path), str(files["hierarchy"]), "-o", str(tmp_path / "m")]) == 2
    line = _error_line(capsys)
    assert "labels.csv" in line and "row 1 (line 2)" in line and "must be 0 or 1" in line


def test_row_count_mismatch(files, tmp_path, capsys):
    path = tmp_path / "labels.csv"
    pd.read_csv(files["labels"]).iloc[:100].to_csv(path, index=False)
    assert main(["fit", str(files["scores"]), str(path), str(files["hierarchy"]), "-o", str(tmp_path / "m")]) == 2
    assert "1500 rows" in _error_line(capsys)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A,B\nB,C\nC,A\n", "cycle"),
        ("parent,child\nA,B,C\n", "line 2"),
        ("", "no edges"),
        ("# only a comment\n\n", "no edges"),
    ],
    ids=["cycle", "three-fields", "empty", "only-comments"],
)
def test_malformed_hierarchy(files, tmp_path, capsys, text, expected):
    path = tmp_path / "h.csv"
    path.write_text(text)
    assert main(["rank", str(files["scores"]), str(path), "-o", str(tmp_path / "r.csv")]) == 2
    line = _error_line(capsys)
    assert expected in line and "h.csv" in line


def test_missing_file(files, tmp_path, capsys):
    assert main(["predict", str(files["model"]), str(tmp_path / "nope.csv"), "-o", str(tmp_path / "o.csv")]) == 2
    line = _error_line(capsys)
    assert "nope.csv" in line and "does not exist" in line


def test_missing_arff(tmp_path, capsys):
    assert main(["benchmark", str(tmp_path / "a.arff"), "b.arff", "c.arff", "--quiet"]) == 2
    assert "a.arff" in _error_line(capsys)


@pytest.mark.parametrize("content", [b"not a zip at all", "npz", "zip"])
def test_model_file_that_is_not_a_model(files, tmp_path, capsys, content):
    path = tmp_path / "model.npz"
    if content == "npz":
        np.savez(path, a=np.arange(3))
    elif content == "zip":
        import zipfile

        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("meta.txt", "hello")
    else:
        path.write_bytes(content)
    assert main(["predict", str(path), str(files["test"]), "-o", str(tmp_path / "o.csv")]) == 2
    line = _error_line(capsys)
    assert "model.npz" in line and "not an hmcpgm model" in line


@pytest.mark.parametrize("alpha", ["1.5", "0", "-0.1", "1e-400", "0.99999999999999999999"])
def test_fdr_out_of_range(files, tmp_path, capsys, alpha):
    with pytest.raises(SystemExit) as exc:
        main(["rank", str(files["scores"]), str(files["hierarchy"]), "-o", str(tmp_path / "r.csv"), "--fdr", alpha])
    assert exc.value.code == 2
    # as typed: 1e-400 is 0.0 and 0.99999999999999999999 is 1.0 as floats, and the message said "got 0.0"
    assert f"argument --fdr: expected a number in (0, 1), got {alpha} (see hmcpgm rank --help)" in _error_line(capsys)


def test_fdr_needs_probabilities(files, tmp_path, capsys):
    # raw scores are not mLPRs; some fall outside [0, 1]
    frame = pd.read_csv(files["scores"])
    frame.iloc[0, 0] = 3.0
    path = tmp_path / "values.csv"
    frame.to_csv(path, index=False)
    assert main(["rank", str(path), str(files["hierarchy"]), "-o", str(tmp_path / "r.csv"), "--fdr", "0.1"]) == 2
    assert "probabilities" in _error_line(capsys)


def test_unknown_id_column(files, tmp_path, capsys):
    assert main(["predict", str(files["model"]), str(files["test"]), "-o", str(tmp_path / "o.csv"),
                 "--id-column", "sample"]) == 2
    assert "no id column 'sample'" in _error_line(capsys)


def test_output_in_missing_directory(files, tmp_path, capsys):
    out = tmp_path / "no" / "such" / "dir.csv"
    assert main(["rank", str(files["scores"]), str(files["hierarchy"]), "-o", str(out)]) == 2
    line = _error_line(capsys)
    assert "-o" in line and "the folder" in line and "does not exist" in line


def test_usage_error_is_argparse_status_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["rank", "only-one-argument"])
    assert exc.value.code == 2
    assert "the following arguments are required" in capsys.readouterr().err


@pytest.mark.parametrize("given, expected", [(None, "auto"), ("auto", "auto"), ("none", None), ("0.25", 0.25),
                                             ("1", 1.0)])
def test_fit_pool_option_parses_to_the_values_mlpr_takes(given, expected):
    args = ["fit", "s.csv", "y.csv", "h.csv", "-o", "m.npz", *([] if given is None else ["--pool", given])]
    assert build_parser().parse_args(args).pool == expected


def _fit_command(tmp_path, edges, seed):
    """``hmcpgm fit``'s arguments on 200 rows drawn from a network on ``edges`` (classes d, c, b, a), quiet,
    the model to ``tmp_path / "m.npz"``."""
    from hmcpgm import Hierarchy, LabelNetwork

    h = Hierarchy.from_edges(edges, classes=["d", "c", "b", "a"])
    rng = np.random.default_rng(seed)
    y = LabelNetwork(h, [0.6, 0.6, 0.6, 0.7]).sample(200, rng)
    write_hierarchy(h, tmp_path / "h.csv")
    write_matrix(tmp_path / "s.csv", y + rng.normal(size=y.shape), h)
    write_matrix(tmp_path / "y.csv", y, h)
    return ["fit", str(tmp_path / "s.csv"), str(tmp_path / "y.csv"), str(tmp_path / "h.csv"), "--quiet",
            "-o", str(tmp_path / "m.npz")]


def test_fit_with_a_neighbour_stack_says_so_and_saves_it(tmp_path, capsys):
    args = _fit_command(tmp_path, [("a", "b"), ("a", "c"), ("c", "d")], seed=5)
    assert main([*args, "--stack", "0.5"]) == 0
    assert "with the neighbour stack at weight 0.50" in capsys.readouterr().out
    assert load_model(tmp_path / "m.npz").stack_weight_ == 0.5
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "s.csv", "y.csv", "h.csv", "-o", "m.npz", "--stack", "1.5"])
    parsed = [build_parser().parse_args(["fit", "s.csv", "y.csv", "h.csv", "-o", "m.npz", *extra]).stack
              for extra in ([], ["--stack", "none"], ["--stack", "auto"], ["--stack", "0"])]
    assert parsed == ["auto", None, "auto", 0.0]


@pytest.mark.parametrize("prior, shown", [("auto", True), ("network", False)])
def test_fit_says_when_nbh_uses_the_prevalence_prior_on_a_dag(tmp_path, capsys, prior, shown):
    args = _fit_command(tmp_path, [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], seed=4)
    assert main([*args, "--mlpr-version", "nbh", "--prior", prior]) == 0
    out = capsys.readouterr().out
    assert ("under the training prevalence's prior" in out) is shown
    assert load_model(tmp_path / "m.npz").prior_ == ("prevalence" if shown else "network")


def test_benchmark_valid_fraction_that_leaves_no_rows_is_one_line(tmp_path, capsys):
    header = "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE class hierarchical 01,01/01,02\n@DATA\n"
    rows = "".join(f"{i}.0,{['01/01', '02', '01'][i % 3]}\n" for i in range(10))
    (tmp_path / "t.arff").write_text(header + rows)
    for fraction, left in (("0.01", "no validation"), ("0.99", "no training")):
        assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "t.arff"), "--valid-fraction", fraction,
                     "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"hmcpgm: error: --valid-fraction {fraction} of the 10 training rows leaves {left} rows", err


def test_benchmark_test_rows_without_positives_are_named(tmp_path, capsys):
    header = "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE class hierarchical 01,01/01,02\n@DATA\n"
    (tmp_path / "t.arff").write_text(header + "".join(f"{i}.0,{['01/01', '02', '01'][i % 3]}\n" for i in range(30)))
    (tmp_path / "e.arff").write_text(header + "1.0,\n2.0,\n")  # rows without a class
    assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "e.arff"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hmcpgm: error: the test rows (") and "e.arff) have no positive label" in err, err


def test_benchmark_reads_nominal_features_one_hot_and_refuses_other_features_in_the_test_file(tmp_path, capsys,
                                                                                                  monkeypatch):
    from hmcpgm.applications import clus

    header = "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE x2 {a,b,c}\n" \
             "@ATTRIBUTE class hierarchical 01,01/01,02\n@DATA\n"
    (tmp_path / "t.arff").write_text(header + "".join(f"{i}.0,{'abc'[i % 3]},{['01/01', '02', '01'][i % 3]}\n"
                                                      for i in range(30)))
    seen = []
    first_stage_scores = clus.first_stage_scores
    monkeypatch.setattr(clus, "first_stage_scores", lambda train, *a, **k: seen.append(train.feature_names)
                        or first_stage_scores(train, *a, **k))
    assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "t.arff"), "--quiet"]) == 0
    assert seen == [("x1", "x2=a", "x2=b", "x2=c")]
    capsys.readouterr()
    # a path beside loaded data (codes): one-hot both, not refused as other features (a review, audit35)
    from hmcpgm.applications import run_benchmark
    from hmcpgm.datasets import load_hmc_arff

    seen.clear()
    run_benchmark(tmp_path / "t.arff", load_hmc_arff(tmp_path / "t.arff"), corrections=False, bootstrap=0,
                  versions=(), progress=False)
    assert seen == [("x1", "x2=a", "x2=b", "x2=c")]
    seen.clear()  # values that are ordered: their codes, if asked
    run_benchmark(tmp_path / "t.arff", tmp_path / "t.arff", corrections=False, bootstrap=0, versions=(),
                  progress=False, nominal="codes")
    assert seen == [("x1", "x2")]
    (tmp_path / "o.arff").write_text(header.replace("{a,b,c}", "{c,b,a}") + "1.0,a,01\n")
    assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "o.arff"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()  # before: scikit-learn's feature-count error, or columns read wrongly
    assert err.startswith("hmcpgm: error: "), err
    assert "o.arff and " in err and "t.arff differ in feature number 2 of 4: 'x2=c' against 'x2=a'" in err, err


def test_benchmark_says_how_the_test_files_hierarchy_differs(tmp_path, capsys):
    """'declare a different hierarchy than the training rows' said neither what differs nor the training file."""
    rows = "".join(f"{i}.0,{['01/01', '02', '01'][i % 3]}\n" for i in range(30))
    head = "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE class hierarchical {}\n@DATA\n"
    (tmp_path / "t.arff").write_text(head.format("01,01/01,02") + rows)
    (tmp_path / "e.arff").write_text(head.format("02,01,01/01") + rows)
    assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "e.arff"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "e.arff declares a different hierarchy than " in err and err.endswith(
        "t.arff (the same classes in another order: position 0 is '02' against '01'); the splits of a benchmark "
        "must share one class attribute"), err


def test_benchmark_names_the_file_and_row_of_an_infinite_feature(tmp_path, capsys):
    """'X must not hold infinite values' named neither the file nor the row (a review, audit36)."""
    header = "@RELATION tiny\n@ATTRIBUTE x1 numeric\n@ATTRIBUTE class hierarchical 01,01/01,02\n@DATA\n"
    rows = [f"{i}.0,{['01/01', '02', '01'][i % 3]}" for i in range(30)]
    (tmp_path / "t.arff").write_text(header + "\n".join(rows) + "\n")
    rows[4] = "-inf,02"
    (tmp_path / "e.arff").write_text(header + "\n".join(rows) + "\n")
    assert main(["benchmark", str(tmp_path / "t.arff"), str(tmp_path / "e.arff"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hmcpgm: error: the test rows (") and err.endswith(
        "e.arff) hold an infinite feature value: data row 5, feature 'x1' is -inf; the first stage needs numbers, or ? "
        "for a missing one"), err


def test_too_few_rows_for_the_default_cross_fitting_say_what_to_fix(tmp_path, capsys):
    """Three training rows gave 'cv must be an int between 2 and the 3 rows, got 5': a parameter the command
    line does not have, and no way out."""
    (tmp_path / "h.csv").write_text("parent,child\nA,B\n")
    (tmp_path / "s.csv").write_text("A,B\n0.9,0.8\n0.1,0.2\n0.8,0.3\n")
    (tmp_path / "y.csv").write_text("A,B\n1,1\n0,0\n1,0\n")
    files = [str(tmp_path / f) for f in ("s.csv", "y.csv", "h.csv")]
    assert main(["fit", *files, "-o", str(tmp_path / "m.npz"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "needs at least 5 training rows, got 3" in err and "cv must" not in err
    fixed = ["--mlpr-version", "full", "--score-model", "platt", "--tempering", "none", "--pool", "none",
             "--consistency", "hierrank", "--no-recalibrate"]
    assert main(["fit", *files, "-o", str(tmp_path / "m.npz"), "--quiet", *fixed]) == 0


def test_annotations_of_numbered_classes_and_a_matrix_with_its_id_column_second_are_told_apart(tmp_path, capsys):
    """Annotations of FunCat-like classes ('01.01', a number) were read as a label matrix, and a 0/1 matrix
    whose id column came second ('A,gene,B') as annotations: both fits failed."""
    from hmcpgm.ontology import is_annotation_file

    (tmp_path / "h.csv").write_text("parent,child\n01,01.01\n01,01.02\n")
    (tmp_path / "ann.tsv").write_text("g1\t01.01\ng3\t01.02\n")
    (tmp_path / "y.csv").write_text("01.01,gene,01,01.02\n1,g1,1,0\n0,g2,0,0\n0,g3,1,1\n0,g4,0,0\n")
    (tmp_path / "y2.csv").write_text("01,01.01\n1,0\n0,0\n")  # no id column: its header is classes
    classes = ("01", "01.01", "01.02")
    assert is_annotation_file(tmp_path / "ann.tsv", classes, "gene")
    assert not is_annotation_file(tmp_path / "y.csv", classes, "gene")
    assert not is_annotation_file(tmp_path / "y2.csv", classes)
    (tmp_path / "s.csv").write_text("gene,01,01.01,01.02\ng1,0.9,0.8,0.1\ng2,0.2,0.1,0.3\ng3,0.8,0.2,0.9\n"
                                    "g4,0.1,0.2,0.1\n")
    fixed = ["--mlpr-version", "indpt", "--score-model", "platt", "--tempering", "none", "--pool", "none",
             "--no-recalibrate", "--allow-empty", "--quiet", "--id-column", "gene"]
    for labels in ("ann.tsv", "y.csv"):
        assert main(["fit", str(tmp_path / "s.csv"), str(tmp_path / labels), str(tmp_path / "h.csv"),
                     "-o", str(tmp_path / "m.npz"), *fixed]) == 0, capsys.readouterr().err


def test_the_program_ignores_ctrl_c_once_the_run_has_finished(monkeypatch):
    """A Ctrl-C in the moment between the last output and the end of the process killed it by SIGINT, status 130
    without a word, after a run that had finished and written its outputs."""
    import signal

    import hmcpgm.cli as cli

    monkeypatch.setattr(cli, "main", lambda: 3)
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as exit_:
            cli.run()
        assert exit_.value.code == 3 and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_namespace_with_an_edge_list_hierarchy_is_refused(tmp_path, capsys):
    """--namespace with a CSV hierarchy was ignored without a word: every edge of the file was read."""
    (tmp_path / "h.csv").write_text("parent,child\nA,B\n")
    (tmp_path / "v.csv").write_text("A,B\n0.9,0.8\n0.1,0.2\n")
    assert main(["rank", str(tmp_path / "v.csv"), str(tmp_path / "h.csv"), "--namespace", "biological_process",
                 "-o", str(tmp_path / "r.csv"), "--quiet"]) == 2
    assert "--namespace picks a namespace of an OBO file" in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe")
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_pipe_closed_by_its_reader_ends_with_status_1(tmp_path, unbuffered):
    """docs/cli.md: a closed pipe ends quietly, status 1 when output was cut off. With PYTHONUNBUFFERED set the run
    ended with status 0: the write the reader cut short returned the bytes it took, and Python's text layer, writing
    straight to the file, dropped the rest without an error (a review, audit45)."""
    h = Hierarchy.from_edges([(f"c{k}", f"c{k + 1}") for k in range(19)])
    write_hierarchy(h, tmp_path / "h.csv")
    values = np.random.default_rng(0).random((600, h.n_classes))  # one write, of more than a pipe holds
    write_matrix(tmp_path / "v.csv", values, h)
    command = [sys.executable, "-m", "hmcpgm", "rank", str(tmp_path / "v.csv"), str(tmp_path / "h.csv"), "-o", "-",
               "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    whole = subprocess.run(command, capture_output=True, check=True, env=env)
    assert len(whole.stdout) > 200_000 and whole.returncode == 0
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = process.stdout.read(100)
    process.stdout.close()  # the reader goes away, as 'head' does
    _, err = process.communicate(timeout=120)
    assert first == whole.stdout[:100]
    assert process.returncode == 1, err
    assert b"Traceback" not in err
