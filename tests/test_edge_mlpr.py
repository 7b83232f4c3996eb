"""MLPR and the command line on odd inputs the benchmark data never hold.

Every bad input is refused with one line naming the argument; every odd but valid
input (no rows, a header-only file, standard input, a hierarchy whose columns are
not in topological order) gives the answer the plain case gives.
"""

import io
import itertools
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import MLPR, Hierarchy, InputError, LabelNetwork
from hmcpgm.cli import main

#: The paper's model: a fixed version, exponent 1, nothing cross-fitted.
PAPER = {"version": "full", "tempering": None, "recalibrate": False}


def _tree():
    return Hierarchy.from_edges([("a", "b"), ("a", "c")])


def _data(hierarchy, theta, m=300, seed=0):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(hierarchy, theta).sample(m, rng)
    return rng.normal(loc=1.5 * y), y


@pytest.fixture(scope="module")
def fitted():
    h = _tree()
    X, y = _data(h, [0.6, 0.5, 0.5])
    return MLPR(hierarchy=h, cv=3).fit(X, y), X, y


def _one_line(exc):
    message = str(exc.value)
    assert len(message.splitlines()) == 1, message
    return message


# ---------------------------------------------------------------------- bad scores: one line naming X
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_score_array_is_one_line_naming_row_and_class(fitted, bad):
    model, X, y = fitted
    Xb = X.copy()
    Xb[4, 2] = bad
    for call in (lambda: MLPR(hierarchy=_tree(), **PAPER).fit(Xb, y), lambda: model.predict_proba(Xb)):
        with pytest.raises(InputError) as exc:
            call()
        message = _one_line(exc)
        assert "X must be finite" in message and "row 4, class 'c'" in message, message


@pytest.mark.parametrize("bad", [
    pytest.param(lambda X: X.astype(complex), id="complex"),
    pytest.param(lambda X: X[:, :, None], id="3-D"),
    pytest.param(lambda X: X[:, 0], id="1-D"),
])
def test_a_malformed_score_array_is_one_line_naming_X(fitted, bad):
    model, X, y = fitted
    for call in (lambda: MLPR(hierarchy=_tree(), **PAPER).fit(bad(X), y), lambda: model.predict_proba(bad(X))):
        with pytest.raises(ValueError) as exc:
            call()
        assert "X" in _one_line(exc)


# ---------------------------------------------------------------------- zero rows
def test_zero_rows_give_empty_answers_for_arrays_as_for_dataframes(fitted):
    model, X, _ = fitted
    frame = pd.DataFrame(X[:0], columns=list(model.classes_))
    for method in ("predict_proba", "calibrated_proba", "predict", "lpr"):
        from_array = getattr(model, method)(X[:0])
        from_frame = getattr(model, method)(frame)
        assert from_array.shape == from_frame.shape == (0, 3), method
        assert from_array.dtype == from_frame.to_numpy().dtype, method


def test_fit_recalibration_on_zero_rows_names_X(fitted):
    model, X, y = fitted
    with pytest.raises(InputError) as exc:
        model.fit_recalibration(X[:0], y[:0])
    assert _one_line(exc).startswith("X has no rows")


# ---------------------------------------------------------------------- the command line
@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Example files of a small hierarchy with awkward class names, and a model fitted on them."""
    d = tmp_path_factory.mktemp("edge_cli")
    names = ["root, A", 'b "quoted"', "c", "d"]
    h = Hierarchy.from_edges([(names[0], names[1]), (names[0], names[2]), (names[1], names[3])], classes=names)
    X, y = _data(h, [0.6, 0.5, 0.5, 0.5])
    ids = [f"g{i}" for i in range(len(X))]
    pd.DataFrame({"parent": [names[0], names[0], names[1]], "child": names[1:]}).to_csv(d / "h.csv", index=False)
    pd.DataFrame(X, columns=names).assign(gene=ids)[["gene", *names]].to_csv(d / "s.csv", index=False)
    pd.DataFrame(y, columns=names).assign(gene=ids)[["gene", *names]].to_csv(d / "l.csv", index=False)
    assert main(["fit", str(d / "s.csv"), str(d / "l.csv"), str(d / "h.csv"), "-o", str(d / "m.npz"),
                 "--id-column", "gene", "--tempering", "none", "--no-recalibrate", "--mlpr-version", "full",
                 "--quiet"]) == 0
    return d


def _refused(argv, capsys, *words):
    capsys.readouterr()
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hmcpgm: error: "), lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.mark.parametrize("chunk", [[], ["--chunk-size", "2"]])
@pytest.mark.parametrize("ids", [[], ["--id-column", "gene"]])
@pytest.mark.parametrize("command", ["predict", "rank"])
def test_a_header_only_file_is_refused_as_having_no_rows(folder, capsys, command, ids, chunk):
    header = (folder / "s.csv").read_text().splitlines()[0]
    (folder / "header.csv").write_text((header if ids else header.removeprefix("gene,")) + "\n")
    argv = ([command, str(folder / "m.npz"), str(folder / "header.csv")] if command == "predict"
            else [command, str(folder / "header.csv"), str(folder / "m.npz")])
    _refused([*argv, "-o", str(folder / "out.csv"), *ids, *chunk, "--quiet"], capsys, "header.csv", "no data rows")
    assert not (folder / "out.csv").exists()


def test_standard_input_is_named_as_such_in_messages(folder, capsys, monkeypatch):
    bad = (folder / "s.csv").read_text().replace("g3,", "g3,high", 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode())))
    message = _refused(["predict", str(folder / "m.npz"), "-", "-o", str(folder / "o.csv"), "--id-column", "gene",
                        "--quiet"], capsys, "standard input", "row 4 (line 5)", "not a number")
    assert "hmcpgm-stdin" not in message


# ---------------------------------------------------------------------- score models on odd scores
def test_a_class_with_constant_scores_carries_no_evidence_in_the_gaussian_model():
    """Constant scores say nothing about the label: the class's LPR is its training prevalence.

    0.3 is not exact in binary, so the sample standard deviations of the constant scores came out
    as rounding noise (about 1e-16 and 1e-15), whose ratio read as strong evidence.
    """
    h = _tree()
    X, y = _data(h, [0.6, 0.5, 0.5])
    X[:, 1] = 0.3
    model = MLPR(hierarchy=h, score_model="gaussian", **PAPER).fit(X, y)
    np.testing.assert_allclose(model.lpr(X)[:, 1], y[:, 1].mean(), rtol=1e-12)
    np.testing.assert_allclose(model.likelihoods(X)[:, 1, 0], model.likelihoods(X)[:, 1, 1], rtol=1e-12)


@pytest.mark.parametrize("unit", [1e-300, 1e90])
def test_the_gaussian_model_does_not_depend_on_the_unit_of_the_scores(unit):
    """Scores in another unit (tiny e-values, huge margins) give the same LPRs: the model is affine invariant."""
    h = _tree()
    X, y = _data(h, [0.6, 0.5, 0.5])
    plain = MLPR(hierarchy=h, score_model="gaussian", **PAPER).fit(X, y)
    scaled = MLPR(hierarchy=h, score_model="gaussian", **PAPER).fit(X * unit, y)
    np.testing.assert_allclose(scaled.predict_proba(X * unit), plain.predict_proba(X), rtol=1e-6)


def _evaluate_files(tmp_path, score):
    (tmp_path / "o.csv").write_text("parent,child\nR,B\nR,C\nB,D\n")
    (tmp_path / "p.tsv").write_text(f"t1\tR\t0.9\nt1\tB\t0.7\nt2\tC\t{score}\n")
    (tmp_path / "g.tsv").write_text("t1\tD\nt2\tC\n")
    return ["evaluate", *(str(tmp_path / f) for f in ("o.csv", "p.tsv", "g.tsv"))]


def test_evaluate_refuses_an_infinite_prediction_score(tmp_path, capsys):
    _refused(_evaluate_files(tmp_path, "inf"), capsys, "p.tsv", "line 3", "'inf'", "infinite")


@pytest.mark.parametrize("score", ["nan", "1.9", "-0.1"])
def test_evaluate_warns_of_a_prediction_score_that_is_not_a_probability(tmp_path, capsys, score):
    """NaN scores were dropped and 1.9 read as a certainty without a word. cafaeval reads them so (NaN: no
    prediction; the others above or below every threshold), and so do we, so the numbers stay cafaeval's: but
    the user is told, naming the file and the first line."""
    assert main(_evaluate_files(tmp_path, score)) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "p.tsv" in line]
    assert len(lines) == 1 and lines[0].startswith("hmcpgm: warning: 1 lines of predictions file"), err
    assert "(first: line 3)" in lines[0] and "[0, 1]" in lines[0]


def test_an_arff_file_saved_with_a_byte_order_mark_reads_like_plain_utf8(tmp_path):
    """Editors on Windows save 'UTF-8 with BOM'; CSV inputs accept it, and so must ARFF inputs."""
    from hmcpgm.datasets import load_hmc_arff

    text = ("@RELATION tiny\n@ATTRIBUTE x numeric\n@ATTRIBUTE class hierarchical A,A/B,C\n@DATA\n"
            "0.5,A@A/B\n?,C\n-1.25,A\n")
    (tmp_path / "plain.arff").write_text(text, encoding="utf-8")
    (tmp_path / "bom.arff").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    plain, bom = load_hmc_arff(tmp_path / "plain.arff"), load_hmc_arff(tmp_path / "bom.arff")
    assert bom.hierarchy.classes == plain.hierarchy.classes
    np.testing.assert_array_equal(bom.labels, plain.labels)
    np.testing.assert_array_equal(bom.features, plain.features)


# ---------------------------------------------------------------------- answers against enumeration
def _enumerated(hierarchy, theta, lik, keep):
    """P(Y_k = 1 | the evidence of the classes in ``keep``) by summing over all 2^K label vectors."""
    k = hierarchy.n_classes
    post, total = np.zeros((lik.shape[0], k)), np.zeros(lik.shape[0])
    for labels in itertools.product((0, 1), repeat=k):
        prior = 1.0
        for c in range(k):
            p = theta[c] if all(labels[j] for j in hierarchy.parent_indices[c]) else 0.0
            prior *= p if labels[c] else 1 - p
        weight = prior * np.prod([lik[:, c, labels[c]] for c in range(k) if keep[c]], axis=0)
        post += weight[:, None] * np.array(labels)
        total += weight
    return post / total[:, None]


@pytest.mark.parametrize("edges", [
    pytest.param([("b", "d"), ("c", "d"), ("a", "b"), ("a", "c"), ("e", "c")], id="dag"),
    pytest.param([("b", "d"), ("a", "b"), ("a", "c")], id="forest"),
])
@pytest.mark.parametrize("version", ["full", "nbh"])
def test_mlprs_out_of_topological_order_match_enumeration(version, edges):
    """Two roots (one class with two parents on the DAG), columns children first: the tempered mLPRs are
    exact posteriors, whichever engine (junction tree, tree) answers."""
    h = Hierarchy.from_edges(edges, classes=["d", "b", "c", "a", "e"])
    rng = np.random.default_rng(5)
    y = LabelNetwork(h, [0.5, 0.6, 0.6, 0.6, 0.7]).sample(600, rng)
    X = 1.5 * y + rng.normal(size=(600, 1)) + 0.5 * rng.normal(size=y.shape)  # shared errors: exponent < 1
    model = MLPR(hierarchy=h, version=version, recalibrate=False, consistency="hierrank", prior="network",
                 cv=3, stack=None).fit(X, y)
    raw = model.score_model_.likelihoods(X[:30])
    own = model.own_tempering_ if model.own_tempering_ is not None else model.tempering_
    expected = np.zeros((30, h.n_classes))
    for k in range(h.n_classes):
        lik = raw ** model.tempering_[None, :, None]
        lik[:, k] = raw[:, k] ** own[k]
        near = {k, *h.parent_indices[k], *h.child_indices[k]}
        keep = [version == "full" or c in near for c in range(h.n_classes)]
        expected[:, k] = _enumerated(h, model.theta_, lik, keep)[:, k]
    np.testing.assert_allclose(model.predict_proba(X[:30]), expected, atol=1e-12)


# ---------------------------------------------------------------------- decide: mLPRs only
@pytest.mark.parametrize("value, words", [(np.nan, "finite"), (np.inf, "finite"), (3.0, "[0, 1]"), (-0.5, "[0, 1]")])
def test_decide_refuses_values_that_are_not_mlprs(fitted, value, words):
    """decide(mlpr) turned 3.0 into positive decisions and named a NaN 'values'."""
    model, _, _ = fitted
    mlpr = np.full((2, 3), 0.2)
    mlpr[1, 2] = value
    with pytest.raises(InputError) as exc:
        model.decide(mlpr)
    message = _one_line(exc)
    assert message.startswith("mlpr must") and words in message and "row 1, class 'c'" in message, message


@pytest.mark.parametrize("ids", [True, False])
def test_fit_refuses_holdout_rows_that_were_trained_on(folder, tmp_path, capsys, ids):
    """--holdout given the training rows recalibrated on them and reported 'held-out objects'."""
    scores, labels = pd.read_csv(folder / "s.csv"), pd.read_csv(folder / "l.csv")
    if not ids:
        scores, labels = scores.drop(columns="gene"), labels.drop(columns="gene")
    scores.iloc[:200].to_csv(tmp_path / "s.csv", index=False)
    labels.iloc[:200].to_csv(tmp_path / "l.csv", index=False)
    scores.iloc[150:].to_csv(tmp_path / "hs.csv", index=False)  # 50 training rows among the held-out ones
    labels.iloc[150:].to_csv(tmp_path / "hl.csv", index=False)
    base = ["fit", str(tmp_path / "s.csv"), str(tmp_path / "l.csv"), str(folder / "h.csv"), "-o",
            str(tmp_path / "m.npz"), "--quiet", *(["--id-column", "gene"] if ids else [])]
    if ids:
        _refused([*base, "--holdout", str(tmp_path / "hs.csv"), str(tmp_path / "hl.csv")], capsys,
                 "--holdout", "50 of its objects", "'g150'")
    _refused([*base, "--holdout", str(tmp_path / "s.csv"), str(tmp_path / "l.csv")], capsys,
             "--holdout", "training")
    assert not (tmp_path / "m.npz").exists()


# ---------------------------------------------------------------------- DataFrames aligned by name, any hierarchy
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(h=hierarchies(kind="dag", min_classes=2, max_classes=6), int_names=st.booleans(), seed=st.integers(0, 99))
def test_dataframes_in_any_column_and_row_order_give_the_array_answer(h, int_names, seed):
    """Columns permuted and labels' rows shuffled: fit and predict align by name and index, never by position."""
    if int_names:
        h = Hierarchy.from_edges([(h.classes.index(p), h.classes.index(c)) for p, c in h.edges],
                                 classes=list(range(h.n_classes)))
    rng = np.random.default_rng(seed)
    y = LabelNetwork(h, rng.uniform(0.3, 0.9, h.n_classes)).sample(120, rng)
    X = rng.normal(loc=1.5 * y)
    params = dict(hierarchy=h, score_model="gaussian", allow_empty=True, **PAPER)
    expected = MLPR(**params).fit(X, y).predict_proba(X[:7])
    cols = list(rng.permutation(list(h.classes)))
    Xf = pd.DataFrame(X, columns=list(h.classes), index=[f"o{i}" for i in range(120)])
    yf = pd.DataFrame(y, columns=list(h.classes), index=Xf.index).sample(frac=1.0, random_state=seed)
    model = MLPR(**params).fit(Xf[cols], yf[list(rng.permutation(list(h.classes)))])
    got = model.predict_proba(Xf[cols].iloc[:7])
    assert list(got.columns) == list(h.classes) and list(got.index) == list(Xf.index[:7])
    np.testing.assert_array_equal(got.to_numpy(), expected)
    decisions = model.predict(Xf[cols].iloc[:7]).to_numpy()
    for k in range(h.n_classes):
        for parent in h.parent_indices[k]:
            assert (decisions[:, k] <= decisions[:, parent]).all()


def test_semicolon_files_with_a_comma_in_a_class_name_read_like_comma_files(folder, tmp_path, capsys):
    """Spreadsheets in many locales save ';'-separated CSV, quoting only fields that hold a ';'."""
    for name in ("s", "l"):
        pd.read_csv(folder / f"{name}.csv").to_csv(tmp_path / f"{name}.csv", sep=";", index=False)
    (tmp_path / "h.csv").write_text('"root, A";"b ""quoted"""\n"root, A";c\n"b ""quoted""";d\n')
    assert "root, A;" in (tmp_path / "s.csv").read_text().splitlines()[0]  # the comma is not quoted
    common = ["--id-column", "gene", "--tempering", "none", "--no-recalibrate", "--mlpr-version", "full", "--quiet"]
    assert main(["fit", *(str(tmp_path / f"{n}.csv") for n in "slh"), "-o", str(tmp_path / "m.npz"), *common]) == 0
    for model, out in ((folder / "m.npz", "plain.csv"), (tmp_path / "m.npz", "semi.csv")):
        assert main(["predict", str(model), str(tmp_path / "s.csv"), "-o", str(tmp_path / out), "--id-column",
                     "gene", "--quiet"]) == 0
    assert (tmp_path / "semi.csv").read_text() == (tmp_path / "plain.csv").read_text()


def test_evaluate_json_to_standard_output(tmp_path, capsys, monkeypatch):
    """--json - wrote a file named '-' into the working folder; '-' is standard output everywhere else."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "o.csv").write_text("parent,child\nR,B\nR,C\nB,D\n")
    (tmp_path / "p.tsv").write_text("t1\tR\t0.9\nt1\tB\t0.7\nt2\tC\t0.4\nt2\tD\t0.8\n")
    (tmp_path / "g.tsv").write_text("t1\tD\nt2\tC\n")
    capsys.readouterr()
    assert main(["evaluate", "o.csv", "p.tsv", "g.tsv", "--json", "-"]) == 0
    out = capsys.readouterr()
    assert not (tmp_path / "-").exists()
    import json

    assert json.loads(out.out)["all"]["n_targets"] == 2  # only the JSON on standard output
    assert "Fmax" in out.err


@pytest.mark.parametrize("empty", [0, 1, 2])
def test_benchmark_refuses_an_arff_file_without_rows(tmp_path, capsys, empty):
    """A header-only test or validation file ended in a scikit-learn traceback (SimpleImputer, 0 samples)."""
    header = "@RELATION t\n@ATTRIBUTE x numeric\n@ATTRIBUTE class hierarchical A,A/B,C\n@DATA\n"
    rng = np.random.default_rng(0)
    rows = "".join(f"{rng.normal():.3f},{rng.choice(['A', 'A@A/B', 'C'])}\n" for _ in range(60))
    files = [tmp_path / f"{n}.arff" for n in ("train", "valid", "test")]
    for i, path in enumerate(files):
        path.write_text(header + ("" if i == empty else rows))
    _refused(["benchmark", *map(str, files), "--quiet"], capsys, files[empty].name, "no data rows")


@pytest.mark.parametrize("params, words", [
    ({"random_state": -1}, ["random_state", "-1"]),
    ({"random_state": 2**32}, ["random_state", str(2**32)]),
    ({"tempering": "none"}, ["tempering", "'none'", "None"]),
])
def test_parameters_are_refused_in_one_line_naming_them(params, words):
    """random_state=-1 failed deep in numpy ('Seed must be between 0 and 2**32 - 1'); tempering='none' (the
    command line's word) did not say that Python's is None."""
    X, y = _data(_tree(), [0.6, 0.5, 0.5], m=60)
    with pytest.raises(InputError) as exc:
        MLPR(hierarchy=_tree(), **params).fit(X, y)
    message = _one_line(exc)
    for word in words:
        assert word in message, message


def test_the_precision_model_reads_binary_scores():
    """A first stage that outputs 0/1 decisions: fewer than five distinct scores gave every object the class's
    prevalence (no evidence at all); the LPR of a score is the fraction of positives among the rows that have it."""
    h = Hierarchy.from_edges([], classes=["a", "b"])
    rng = np.random.default_rng(0)
    y = (rng.random((2000, 2)) < [0.3, 0.6]).astype(int)
    X = np.where(rng.random((2000, 2)) < 0.8, y, 1 - y) * [1.0, 7.0] - [0.0, 3.0]  # values 0, 1 and -3, 4
    model = MLPR(hierarchy=h, score_model="precision", **PAPER).fit(X, y)
    for k in range(2):
        for value in np.unique(X[:, k]):
            rows = X[:, k] == value
            np.testing.assert_allclose(model.lpr(X[rows])[:, k], y[rows, k].mean(), rtol=1e-9)


@pytest.mark.parametrize("change", [
    pytest.param(lambda text: text.replace("\n", "\r"), id="cr-line-endings"),
    pytest.param(lambda text: "\n".join(", ".join(f" {f} " for f in line.split(",")) if i else line
                                        for i, line in enumerate(text.splitlines())) + "\n", id="padded-ids"),
])
def test_old_mac_line_endings_and_padded_ids_read_like_plain_csv(folder, tmp_path, change):
    """A file with CR line endings ended in a _csv.Error traceback; ' g0 ' was written out with its spaces."""
    names = ['"root, A"', '"b ""quoted"""', "c", "d"]
    plain = pd.DataFrame(np.random.default_rng(1).normal(size=(5, 4)), columns=names)
    text = "gene," + ",".join(plain.columns) + "\n" + "".join(
        f"g{i}," + ",".join(repr(float(v)) for v in row) + "\n" for i, row in enumerate(plain.to_numpy()))
    (tmp_path / "plain.csv").write_text(text)
    (tmp_path / "odd.csv").write_bytes(change(text).encode())
    for name in ("plain", "odd"):
        assert main(["predict", str(folder / "m.npz"), str(tmp_path / f"{name}.csv"), "-o",
                     str(tmp_path / f"p_{name}.csv"), "--id-column", "gene", "--quiet"]) == 0
    assert (tmp_path / "p_odd.csv").read_text() == (tmp_path / "p_plain.csv").read_text()


@pytest.mark.parametrize("which", ["p.tsv", "g.tsv", "ia.tsv"])
def test_evaluate_refuses_a_file_that_is_not_utf8_in_one_line(tmp_path, capsys, which):
    """A Latin-1 byte in the predictions, ground truth or IA file ended in a UnicodeDecodeError traceback."""
    (tmp_path / "o.csv").write_text("parent,child\nR,B\nR,C\nB,D\n")
    (tmp_path / "p.tsv").write_text("t1\tR\t0.9\nt1\tB\t0.7\nt2\tC\t0.4\n")
    (tmp_path / "g.tsv").write_text("t1\tD\nt2\tC\n")
    (tmp_path / "ia.tsv").write_text("R\t0\nB\t1\nC\t1\nD\t1\n")
    (tmp_path / which).write_bytes((tmp_path / which).read_bytes() + "t3\tcaf\u00e9\t0.5\n".encode("latin-1"))
    argv = ["evaluate", *(str(tmp_path / f) for f in ("o.csv", "p.tsv", "g.tsv")), "--ia", str(tmp_path / "ia.tsv")]
    line = len((tmp_path / which).read_bytes().splitlines())
    _refused(argv, capsys, which, "not UTF-8", f"byte 0xe9 on line {line}")


@pytest.mark.parametrize("name", ["NA", "None", "null", "NaN"])
def test_an_id_that_pandas_reads_as_missing_is_an_id(folder, tmp_path, name):
    """The object id 'NA' (or 'None', 'null') was refused as 'no value in the id column'."""
    text = (folder / "s.csv").read_text().replace("\ng3,", f"\n{name},", 1)
    (tmp_path / "s.csv").write_text(text)
    assert main(["predict", str(folder / "m.npz"), str(tmp_path / "s.csv"), "-o", str(tmp_path / "p.csv"),
                 "--id-column", "gene", "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "p.csv", dtype=str, keep_default_na=False)["gene"].iloc[3] == name


def test_a_hierarchy_whose_first_line_is_one_quoted_class_name(tmp_path):
    """A lone quoted class (a root without children) on the first line: its comma is part of the name."""
    from hmcpgm.io import read_hierarchy, write_hierarchy

    h = Hierarchy.from_edges([("root, A", "b"), ("x y", "c")], classes=["lone, one", "x y", "root, A", "c", "b"])
    write_hierarchy(h, tmp_path / "h.csv")
    lines = (tmp_path / "h.csv").read_text().splitlines()
    assert lines[1] == '"lone, one"'
    (tmp_path / "no_header.csv").write_text("\n".join(lines[1:]) + "\n")  # the lone class comes first
    for name in ("h.csv", "no_header.csv"):
        got = read_hierarchy(tmp_path / name)
        assert got.classes == h.classes and set(got.edges) == set(h.edges)


def test_a_pyarrow_table_is_aligned_by_class_name_like_a_dataframe():
    """A pyarrow Table (any table of the dataframe interchange protocol: polars too) names its columns, yet
    its columns were taken in position order: permuted columns gave wrong mLPRs without a word."""
    pa = pytest.importorskip("pyarrow")
    h = _tree()
    X, y = _data(h, [0.6, 0.5, 0.5])
    frame = pd.DataFrame(X, columns=list(h.classes))
    expected = MLPR(hierarchy=h, **PAPER).fit(X, y).predict_proba(X[:5])
    table = pa.Table.from_pandas(frame[["c", "a", "b"]])
    labels = pa.Table.from_pandas(pd.DataFrame(y, columns=list(h.classes))[["b", "c", "a"]])
    model = MLPR(hierarchy=h, **PAPER).fit(table, labels)
    got = model.predict_proba(pa.Table.from_pandas(frame[["b", "c", "a"]].iloc[:5]))
    assert list(got.columns) == list(h.classes)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(table.slice(0, 5)).to_numpy(), model.predict(frame.iloc[:5]).to_numpy())


def test_decide_aligns_a_dataframe_of_mlprs_by_class_name(fitted):
    """decide(DataFrame) took the columns in position order: mLPRs with their columns reordered were decided
    as if each class had another's posterior."""
    model, X, _ = fitted
    frame = pd.DataFrame(X[:20], columns=list(model.classes_), index=[f"o{i}" for i in range(20)])
    mlpr = model.predict_proba(frame)
    got = model.decide(mlpr[["c", "a", "b"]])
    assert list(got.columns) == list(model.classes_) and list(got.index) == list(frame.index)
    np.testing.assert_array_equal(got.to_numpy(), model.decide(mlpr.to_numpy()))
    np.testing.assert_array_equal(got.to_numpy(), model.predict(frame).to_numpy())


@pytest.mark.parametrize("score_model", ["lpr", "auto"])
def test_the_paper_model_is_the_network_and_score_models_fitted_by_hand(score_model):
    """MLPR(version='full', tempering=None, recalibrate=False) adds nothing to its parts: theta from
    LabelNetwork.from_labels, evidence from fit_score_model, mLPRs from mlpr_from_likelihoods."""
    from hmcpgm import fit_score_model, mlpr_from_likelihoods

    h = Hierarchy.from_edges([("b", "d"), ("c", "d"), ("a", "b"), ("a", "c")], classes=["d", "b", "c", "a"])
    X, y = _data(h, [0.5, 0.6, 0.6, 0.6], m=400, seed=1)
    model = MLPR(hierarchy=h, score_model=score_model, **PAPER).fit(X, y)
    network = LabelNetwork.from_labels(y, h, pseudo_count=0.5)
    evidence = fit_score_model(X, y, h, kind=score_model, cv=5, seed=0).likelihoods(X[:50])
    np.testing.assert_array_equal(model.theta_, network.theta)
    np.testing.assert_allclose(model.predict_proba(X[:50]), mlpr_from_likelihoods(network, evidence), atol=1e-15)


@pytest.mark.parametrize("parents, rows", [([None, 0, 0], 50), ([None, 0, 0, [1, 2]], 150)])
def test_labels_without_any_positive_fit_the_untempered_model_without_warnings(parents, rows):
    # Nothing to rank: the exponent search and the bootstrap of the version choice had only
    # NaN AU(PRC)s (fit raised 'All-NaN slice encountered'). With allow_empty the default now
    # keeps a = 1 and indpt, and predicts as the fixed untempered indpt model does.
    import warnings

    h = Hierarchy.from_parents(parents)
    rng = np.random.default_rng(0)
    s = rng.random((rows, h.n_classes))
    y = np.zeros((rows, h.n_classes), int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = MLPR(hierarchy=h, allow_empty=True).fit(s, y)
    assert model.version_ == "indpt"
    np.testing.assert_array_equal(model.tempering_, 1.0)
    fixed = MLPR(hierarchy=h, allow_empty=True, version="indpt", tempering=None, consistency="hierrank").fit(s, y)
    np.testing.assert_allclose(model.predict_proba(s), fixed.predict_proba(s), rtol=0, atol=1e-15)


def test_complex_arrays_are_refused_in_one_line_not_cast_with_a_warning():
    # numpy casts a complex array to float with a ComplexWarning, dropping the imaginary part:
    # likelihoods, theta, rankings and aligned score matrices were read that way
    import warnings

    from hmcpgm import hier_rank, mlpr_from_likelihoods
    from hmcpgm._columns import class_matrix

    h = Hierarchy.from_parents([None, 0])
    calls = [
        lambda: mlpr_from_likelihoods(LabelNetwork(h, [0.5, 0.5]), np.ones((1, 2, 2)) * (1 + 1j)),
        lambda: LabelNetwork(h, np.array([0.5, 0.5]) * (1 + 0j)),
        lambda: hier_rank(np.ones((2, 2)) * (1 + 0j), h),
        lambda: hier_rank(pd.DataFrame(np.ones((2, 2)) * (1 + 0j), columns=h.classes), h),
        lambda: class_matrix(np.ones((2, 2)) * (1 + 0j), h, "scores"),
    ]
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(InputError, match="must be real numbers, got a complex array") as info:
                call()
        assert "\n" not in str(info.value)
