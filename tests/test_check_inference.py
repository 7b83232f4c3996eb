"""``hmcpgm check-inference`` through ``hmcpgm.cli.main``: the numbers it prints are recomputed here."""

import json

import numpy as np
import pytest

from hmcpgm import Hierarchy, LabelNetwork, make_paper_synthetic, mlpr_from_likelihoods
from hmcpgm.cli import main
from hmcpgm.inference import loopy_belief_propagation, synthetic_evidence
from hmcpgm.io import read_hierarchy, write_hierarchy, write_matrix

# two diamonds sharing a class: loops, so loopy BP is approximate
DAG = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("c", "f"), ("e", "g"),
                            ("f", "g"), ("b", "h")])


def _error_line(capsys):
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hmcpgm: error: "), err
    return lines[0]


@pytest.mark.parametrize("evidence", ["weak", "strong", "random"])
def test_reported_errors_are_the_true_errors_on_a_csv_dag(tmp_path, capsys, evidence):
    path = tmp_path / "h.csv"
    write_hierarchy(DAG, path)
    out = tmp_path / "report.json"
    argv = ["check-inference", str(path), "--objects", "7", "--engines", "loopy", "junction", "--reference",
            "enumerate", "--evidence", evidence, "--seed", "4", "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "where loopy errs" in text and "reference: enumerate" in text
    report = json.loads(out.read_text())
    # the same network and evidence, built here from the documented recipe (classes in the file's order)
    h = read_hierarchy(path)
    theta = np.random.default_rng(4).uniform(0.2, 0.8, size=h.n_classes)
    net = LabelNetwork(h, theta)
    _, lik = synthetic_evidence(net, 7, evidence, seed=4)
    exact = mlpr_from_likelihoods(net, lik, engine="enumerate")
    loopy, _ = loopy_belief_propagation(net, lik)
    rows = {r["engine"]: r for r in report["engines"]}
    assert list(rows) == ["enumerate", "loopy", "junction"]
    assert rows["loopy"]["max_abs_error"] == pytest.approx(np.abs(loopy - exact).max(), abs=1e-12)
    assert rows["loopy"]["mean_abs_error"] == pytest.approx(np.abs(loopy - exact).mean(), abs=1e-12)
    worst_row, worst_class = np.unravel_index(np.abs(loopy - exact).argmax(), exact.shape)
    # the command line counts rows from 1 (the Python report from 0)
    assert (rows["loopy"]["worst_object"], rows["loopy"]["worst_class"]) == (worst_row + 1, h.classes[worst_class])
    assert rows["junction"]["max_abs_error"] < 1e-12
    assert not rows["loopy"]["exact"] and rows["junction"]["exact"]
    # the grouped table: per (parents, depth), the largest error over its classes
    err = np.abs(loopy - exact).max(axis=0)
    # parents 0, 1, 2, 3+; depths in bins "lo-hi" (at most 5 bins)
    for g in report["loopy_errors_by_class_structure"]["loopy"]:
        n_par = int(str(g["n_parents"]).rstrip("+"))
        bounds = str(g["depth"]).split("-")
        lo, hi = int(bounds[0]), int(bounds[-1])
        members = [j for j in range(h.n_classes) if min(len(h.parent_indices[j]), 3) == n_par
                   and lo <= h.depth[j] <= hi]
        assert g["n_classes"] == len(members)
        assert g["max_abs_error"] == pytest.approx(err[members].max(), abs=1e-12)


def test_model_and_scores(tmp_path, capsys):
    data = make_paper_synthetic(n_train=800, n_test=30, seed=2)
    h = data.hierarchy
    paths = {n: tmp_path / f"{n}.csv" for n in ("hierarchy", "scores", "labels", "new")}
    write_hierarchy(h, paths["hierarchy"])
    write_matrix(paths["scores"], data.train_scores, h)
    write_matrix(paths["labels"], data.train_labels, h)
    write_matrix(paths["new"], data.test_scores, h)
    model = tmp_path / "m.npz"
    assert main(["fit", *(str(paths[n]) for n in ("scores", "labels", "hierarchy")), "-o", str(model),
                 "--quiet", "--mlpr-version", "full", "--tempering", "none", "--no-recalibrate"]) == 0
    capsys.readouterr()
    out = tmp_path / "r.json"
    assert main(["check-inference", str(paths["hierarchy"]), "--model", str(model), "--scores", str(paths["new"]),
                 "--objects", "10", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "the model's likelihoods of the first 10 rows" in text
    report = json.loads(out.read_text())
    assert report["reference"] == "tree"  # a forest: the tree engine is exact
    loopy = next(r for r in report["engines"] if r["engine"] == "loopy")
    assert loopy["exact"] and loopy["max_abs_error"] < 1e-9  # loopy BP is exact on forests
    # the scores with a column of gene ids, as 'fit' and 'predict' read them: it was taken for a class
    named = tmp_path / "named.csv"
    write_matrix(named, data.test_scores, h, ids=[f"g{i}" for i in range(len(data.test_scores))],
                 id_column="gene")
    again = tmp_path / "again.json"
    assert main(["check-inference", str(paths["hierarchy"]), "--model", str(model), "--scores", str(named),
                 "--id-column", "gene", "--objects", "10", "--json", str(again)]) == 0
    errors = lambda r: [(e["engine"], e["max_abs_error"], e["mean_abs_error"]) for e in r["engines"]]  # noqa: E731
    assert errors(json.loads(again.read_text())) == errors(report)  # the same objects' evidence
    capsys.readouterr()
    assert main(["check-inference", str(paths["hierarchy"]), "--id-column", "gene"]) == 2
    assert _error_line(capsys) == "hmcpgm: error: --id-column names a column of --scores, and no --scores is given"


def test_arff_hierarchy_takes_theta_from_its_labels(tmp_path, capsys):
    header = ("@RELATION tiny\n@ATTRIBUTE x1 numeric\n"
              "@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/01\n@DATA\n")
    leaves = ["01/01", "01/02", "02/01", "02", "01"]
    (tmp_path / "t.arff").write_text(header + "\n".join(f"{i}.0,{leaves[i % 5]}" for i in range(20)) + "\n")
    assert main(["check-inference", str(tmp_path / "t.arff"), "--objects", "3", "--engines", "loopy"]) == 0
    assert "theta from the ARFF labels" in capsys.readouterr().out


def test_obo_hierarchy(tmp_path, capsys):
    pytest.importorskip("obonet", reason="needs the obo extra: pip install 'hmcpgm[obo]'")
    path = tmp_path / "mini.obo"
    terms = [("GO:1", []), ("GO:2", ["GO:1"]), ("GO:3", ["GO:1"]), ("GO:4", ["GO:2", "GO:3"])]
    path.write_text("format-version: 1.2\nontology: mini\n\n" + "\n".join(
        f"[Term]\nid: {t}\nname: {t}\nnamespace: biological_process\n" + "".join(f"is_a: {p}\n" for p in ps)
        for t, ps in terms))
    assert main(["check-inference", str(path), "--objects", "3", "--damping", "0.3"]) == 0
    text = capsys.readouterr().out
    assert "4 classes (dag)" in text and "loopy(damping=0.3)" in text


def test_scores_need_a_model_and_damping_is_checked(tmp_path, capsys):
    path = tmp_path / "h.csv"
    write_hierarchy(DAG, path)
    assert main(["check-inference", str(path), "--scores", str(path)]) == 2
    assert "--scores needs --model" in _error_line(capsys)
    with pytest.raises(SystemExit):
        main(["check-inference", str(path), "--damping", "1.5"])
    assert "--damping" in capsys.readouterr().err


def test_loopy_options_without_loopy_and_a_reference_that_cannot_run_are_refused(tmp_path, capsys):
    """audit48: --damping and --max-iter with --engines naming no loopy BP were ignored (predict refuses them);
    --reference enumerate on 499 classes ran the other engines, printed no errors and exited 0, advising
    Python's max_classes."""
    path = tmp_path / "h.csv"
    write_hierarchy(DAG, path)
    assert main(["check-inference", str(path), "--engines", "junction", "--damping", "0.5", "--max-iter", "3"]) == 2
    assert _error_line(capsys) == ("hmcpgm: error: --damping and --max-iter set loopy BP's options, and no loopy BP "
                                   "runs: add loopy to --engines, or leave them out")
    wide = tmp_path / "wide.csv"
    wide.write_text("parent,child\n" + "".join(f"r,c{i}\n" for i in range(24)))
    assert main(["check-inference", str(wide), "--reference", "enumerate", "--objects", "2"]) == 2
    assert _error_line(capsys) == ("hmcpgm: error: --reference enumerate sums over all 2^K label configurations; "
                                   "refused for a hierarchy of 25 classes (the limit is 20 classes). Use "
                                   "--reference tree")
    assert main(["check-inference", str(path), "--engines", "junction", "--objects", "2"]) == 0
    table = capsys.readouterr().out
    assert " KiB" in table or " MiB" in table or " B " in table
    assert "0.0 MiB" not in table  # a few kB were shown as 0.0 MiB


def test_advice_names_the_engines_option_of_this_command(tmp_path, capsys):
    # loopy's non-convergence advice said '--engine junction', an option check-inference does not have
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e"), ("d", "f"), ("e", "g"), ("f", "g")]
    path = tmp_path / "dag.csv"
    path.write_text("parent,child\n" + "".join(f"{p},{c}\n" for p, c in edges))
    main(["check-inference", str(path), "--engines", "loopy", "junction", "--max-iter", "1", "--evidence", "strong"])
    warning = [line for line in capsys.readouterr().err.splitlines() if "did not converge" in line]
    assert warning and "use --engines junction" in warning[0] and "--engine " not in warning[0]


def test_the_report_says_the_budget_and_refusals_with_this_commands_options(tmp_path, capsys):
    """The printed report said 'fits budget_bytes=4,294,967,296' and "Use engine='tree'": Python's parameters."""
    path = tmp_path / "h.csv"
    path.write_text("parent,child\n" + "".join(f"r,c{i}\n" for i in range(24)))
    assert main(["check-inference", str(path), "--engines", "tree", "enumerate", "--objects", "2"]) == 0
    out = capsys.readouterr().out
    assert "the --budget-gb budget (4,294,967,296 bytes)" in out and "Use --engines tree" in out
    assert "budget_bytes=" not in out and "engine='" not in out
    assert main(["check-inference", str(path), "--engines", "tree", "--reference", "tree", "--objects", "2"]) == 0
    out = capsys.readouterr().out
    assert "asked for (--reference tree)" in out and "reference='" not in out
    # --namespace picks a namespace of an OBO file: with an edge list it was ignored
    assert main(["check-inference", str(path), "--namespace", "biological_process"]) == 2
    assert "--namespace picks a namespace of an OBO file" in capsys.readouterr().err


def test_a_refused_reference_is_named_by_reference_and_loopy_not_converged_is_not_exact(tmp_path, capsys):
    """--reference tree on a DAG said "--engines tree ...; use --engines junction (exact) or 'loopy'"; loopy capped
    below a polytree's diameter was reported exact, with an error of 0.11 (a review, audit41)."""
    path = tmp_path / "dag.csv"
    write_hierarchy(DAG, path)
    assert main(["check-inference", str(path), "--reference", "tree", "--objects", "3"]) == 2  # asked for: refused
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "hmcpgm: error: --reference tree needs a tree or forest, but the hierarchy is a DAG (some class has several "
        "parents); use --reference junction (exact)\n")
    zigzag = [e for i in range(5) for e in ((f"r{i}", f"m{i}"), (f"r{i + 1}", f"m{i}"))]  # no loop: a polytree
    path = tmp_path / "zigzag.csv"
    write_hierarchy(Hierarchy.from_edges(zigzag, classes=sorted({c for e in zigzag for c in e}, reverse=True)), path)
    out = tmp_path / "report.json"
    assert main(["check-inference", str(path), "--evidence", "random", "--objects", "20", "--seed", "1",
                 "--engines", "loopy", "--max-iter", "1", "--json", str(out)]) == 0
    rows = {r["engine"]: r for r in json.loads(out.read_text())["engines"]}
    capped = rows["loopy(max_iter=1)"]
    assert capped["loopy_converged"] < 1 and capped["max_abs_error"] > 1e-3
    assert capped["exact"] is False and "not exact" in capped["note"]
    from hmcpgm.inference import compare_engines

    h = read_hierarchy(path)
    lik = np.random.default_rng(0).uniform(0.2, 3.0, size=(5, h.n_classes, 2))
    report = compare_engines(LabelNetwork(h, np.full(h.n_classes, 0.5)), lik, engines=["loopy"], memory=False)
    assert bool(report.set_index("engine").loc["loopy", "exact"])  # converged on a polytree: exact


def test_max_clique_reaches_the_engines_that_run(tmp_path, capsys):
    # --max-clique chose the engines, but the junction tree ran (and was the reference) at max_clique 20
    edges = [("r", "a"), ("r", "b"), ("r", "c"), ("a", "k"), ("b", "k"), ("c", "k")]  # a clique of 4 classes
    path = tmp_path / "wide.csv"
    path.write_text("parent,child\n" + "".join(f"{p},{c}\n" for p, c in edges))
    assert main(["check-inference", str(path), "--objects", "2", "--engines", "junction", "--reference", "enumerate",
                 "--max-clique", "3"]) == 0
    text = capsys.readouterr().out
    assert "junction: refused: --engines junction needs a clique of 4" in text and "--max-clique 3" in text
    # the advice names only what each flag offers (audit51: "--reference loopy", "--engines auto")
    assert "or --engines loopy (approximate)" in text and "--engines auto" not in text
    assert main(["check-inference", str(path), "--objects", "2", "--engines", "loopy", "--reference", "junction",
                 "--max-clique", "3", "--json", str(tmp_path / "none.json")]) == 2
    line = _error_line(capsys)
    assert "--reference junction needs a clique of 4" in line
    assert line.endswith("Use --reference sparse (exact, stores only the configurations the hierarchy allows) "
                         "or --reference auto")
    assert not (tmp_path / "none.json").exists()
    assert main(["check-inference", str(path), "--objects", "2", "--engines", "junction", "--reference", "enumerate",
                 "--max-clique", "4", "--json", str(tmp_path / "r.json")]) == 0
    rows = {r["engine"]: r for r in json.loads((tmp_path / "r.json").read_text())["engines"]}
    assert rows["junction"]["max_abs_error"] < 1e-12


@pytest.mark.parametrize("objects", ["1000001", "1000000000000000", "100000000000000000000"])
def test_objects_beyond_the_bound_is_one_line(tmp_path, capsys, objects):
    # 1e15 objects: numpy's MemoryError traceback (exit 1); 1e20: 'Maximum allowed dimension exceeded'
    path = tmp_path / "h.csv"
    write_hierarchy(DAG, path)
    with pytest.raises(SystemExit) as exit_:
        main(["check-inference", str(path), "--objects", objects])
    assert exit_.value.code == 2
    line = _error_line(capsys)
    assert "--objects: expected an integer from 1 to 1,000,000" in line


def test_evidence_that_does_not_fit_in_memory_is_one_line(tmp_path, capsys, monkeypatch):
    import hmcpgm.inference

    def no_memory(network, n_objects, *args, **kwargs):
        raise MemoryError(f"Unable to allocate an array of shape ({n_objects}, {network.hierarchy.n_classes})")

    monkeypatch.setattr(hmcpgm.inference, "synthetic_evidence", no_memory)
    path = tmp_path / "h.csv"
    write_hierarchy(DAG, path)
    assert main(["check-inference", str(path), "--objects", "1000000"]) == 2
    assert "--objects 1,000,000: not enough memory for the evidence of 1,000,000 objects of 8 classes" in \
        _error_line(capsys)


def test_a_progress_bar_over_the_engines_on_a_terminal_and_none_with_quiet(tmp_path, capsys, monkeypatch):
    """audit57: check-inference on a million objects was silent for half a minute on a terminal, with no --quiet."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    write_hierarchy(h, tmp_path / "h.csv")
    for quiet, shown in (([], True), (["--quiet"], False)):
        screen = Terminal()
        monkeypatch.setattr(sys, "stderr", screen)
        assert main(["check-inference", str(tmp_path / "h.csv"), "--objects", "5", "--engines", "enumerate",
                     "loopy", *quiet]) == 0
        monkeypatch.undo()
        assert ("engines" in screen.getvalue()) is shown, screen.getvalue()
        assert "loopy" in capsys.readouterr().out
