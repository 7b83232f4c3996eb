"""Gene Ontology on the command line: ``hmcpgm evaluate`` against cafaeval, OBO hierarchies, annotations, CAFA output."""

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
