"""The documentation site: it builds strictly, and the outputs pasted into it are current."""

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from hmc_data import HMC_DATA

from hmcpgm.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _fenced(text, lang):
    return re.findall(rf"```{lang}\n(.*?)\n```", text, flags=re.S)


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs and mkdocstrings are not installed: pip install -e '.[docs]'")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WARNING" not in run.stderr, run.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    for name in ("hmcpgm.estimator.MLPR.predict_proba", "hmcpgm.ranking.hier_rank", "hmcpgm.persist.load_model"):
        assert f'id="{name}"' in api


def test_api_page_covers_every_public_module():
    api = (DOCS / "api.md").read_text()
    modules = {p.stem for p in (ROOT / "hmcpgm").glob("*.py")} | {
        p.name for p in (ROOT / "hmcpgm").iterdir() if (p / "__init__.py").is_file()
    }
    internal = {"__init__", "__main__", "cli", "hierarchy", "estimator", "inference"}  # documented by name below
    for module in sorted(m for m in modules - internal if not m.startswith("_")):
        assert f"::: hmcpgm.{module}" in api, f"docs/api.md does not document hmcpgm.{module}"
    for name in ("hmcpgm.hierarchy.Hierarchy", "hmcpgm.estimator.MLPR", "hmcpgm.inference.mlpr_from_likelihoods",
                 "hmcpgm.inference.loopy_belief_propagation"):
        assert f"::: {name}\n" in api


@pytest.mark.parametrize("command", ["", "demo", "example", "fit", "predict", "rank", "benchmark", "evaluate",
                                     "check-inference"])
def test_help_texts_in_cli_page_are_current(command, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    page = (DOCS / "cli.md").read_text()
    prompt = f"$ hmcpgm {command} --help" if command else "$ hmcpgm --help"
    blocks = [b for b in _fenced(page, "text") if b.startswith(prompt + "\n")]
    assert len(blocks) == 1, f"docs/cli.md has no block for '{prompt}'"
    with pytest.raises(SystemExit):
        main([command, "--help"] if command else ["--help"])
    assert blocks[0][len(prompt) + 1:] == capsys.readouterr().out.rstrip("\n"), (
        "docs/cli.md shows an outdated --help; paste the current output (COLUMNS=80)"
    )


@pytest.mark.slow
def test_cli_page_session_is_current():
    sys.path.insert(0, str(DOCS))
    try:
        from update_cli_help import SESSION, run_session
    finally:
        sys.path.pop(0)
    (block,) = re.findall(SESSION, (DOCS / "cli.md").read_text(), flags=re.S)
    assert _digits(run_session(block)) == _digits(block), (
        "docs/cli.md shows an outdated session: run python docs/update_cli_help.py"
    )


def _digits(text):
    """``text`` with every long decimal rounded to 12 significant digits: the last bits of a
    float differ between numpy / BLAS builds, the session's numbers to 1e-12 do not."""
    return re.sub(r"\d+\.\d{12,}", lambda m: f"{float(m.group()):.12g}", text)


@pytest.mark.slow
def test_index_example_prints_what_the_page_says():
    page = (DOCS / "index.md").read_text()
    (code,) = _fenced(page, "python")
    printed = next(b for b in _fenced(page, "text") if "positives" in b)
    assert len(code.splitlines()) <= 10
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "docs/index.md", "exec"), {})
    assert out.getvalue().rstrip("\n") == printed


def test_readme_commands_on_index_page():
    page = (DOCS / "index.md").read_text()
    assert "python3 -m venv .venv && . .venv/bin/activate && pip install . && hmcpgm demo" in page
    assert 'pip install -e ".[all]" && python -m pytest' in page


def test_make_figures_runs(tmp_path):
    # it fitted the default model and then set version="indpt" on it, which fit refuses since 1c6b2cc (audit38)
    import runpy

    pytest.importorskip("matplotlib")
    runpy.run_path(str(DOCS / "make_figures.py"), run_name="make_figures")["main"](tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hierarchy_mlpr.png", "hit_curves.png", "lpr_curve.png",
                                                          "reliability.png"]


def test_figures_link_only_to_existing_images():
    for page in DOCS.glob("*.md"):
        for target in re.findall(r"\]\((img/[^)]+)\)", page.read_text()):
            assert (DOCS / target).is_file(), f"{page.name} links to missing {target}"


def test_benchmarks_page_matches_its_json():
    page = (DOCS / "benchmarks.md").read_text()
    data = json.loads((DOCS / "benchmarks.json").read_text())
    assert "GENERATED by bench/benchmarks_table.py" in page
    assert "python bench/benchmarks_table.py" in page  # the command that regenerates it
    for result in data["results"]:
        assert f"### {result['dataset']}" in page
        for method, numbers in result["methods"].items():
            row = f"| {method} | {100 * numbers['auprc']:.1f} | {100 * numbers['f1_max_f1_cutoff']:.1f} | " \
                  f"{numbers['violations']} |"
            assert row in page, row
            if method.endswith("-HierRank"):
                assert numbers["violations"] == 0
    # every data set of the collection is either on the page or listed as missing with a reason
    data_dir = HMC_DATA
    if data_dir.is_dir():
        sys.path.insert(0, str(ROOT / "bench"))
        try:
            from benchmarks_table import find_datasets
        finally:
            sys.path.pop(0)
        shown = {r["dataset"] for r in data["results"]}
        for name in find_datasets(data_dir):
            assert name in shown or re.search(rf"\*\*{re.escape(name)}\*\*: not on this page: .+", page), name



def test_leaderboard_shows_the_correction_chosen_on_the_validation_rows():
    # recomputed here from the JSON: the correction with the best validation AU(PRC), its test AU(PRC)
    # and mLPR-auto's gap to it are in that run's row of the leaderboard
    page = (DOCS / "benchmarks.md").read_text()
    data = json.loads((DOCS / "benchmarks.json").read_text())
    for result in data["results"]:
        m = result["methods"]
        families = sorted(k[:-len("-NaiveSort")] for k in m if k.startswith(("iso-", "platt-"))
                          and k.endswith("-NaiveSort"))
        if not families:
            continue
        # ties (e.g. tpr and descens on a two-level hierarchy) go to the first name in sorted order
        chosen = max(families, key=lambda f: m[f"{f}-NaiveSort"]["valid_auprc"])
        test = m[f"{chosen}-NaiveSort"]["auprc"]
        gap = 100 * (m["mLPR-auto-HierRank"]["auprc"] - test)
        se = m[f"{chosen}-NaiveSort"].get("auprc_diff_se")  # the paired bootstrap, in results that have it
        cell = f"{gap:+.2f}" if se is None else f"{gap:+.2f} ± {100 * se:.2f}"
        assert f"| {chosen} | {100 * test:.1f} | {cell} |" in page, (result["dataset"], chosen)


def test_second_stage_page_matches_its_json():
    page = (DOCS / "second_stage.md").read_text()
    data = json.loads((DOCS / "benchmarks.json").read_text())
    assert "GENERATED by bench/benchmarks_table.py" in page and "python bench/benchmarks_table.py" in page
    for result in data["results"]:
        corrections = [k for k in result["methods"] if k.startswith(("iso-", "platt-"))]
        if not corrections:
            continue
        assert f"## {result['dataset']}, {result['first_stage']} first stage" in page
        for method in ("mLPR-auto-HierRank", *corrections):
            fam = method.rsplit("-", 1)[0]
            assert f"| {fam} | {100 * result['methods'][method]['auprc']:.1f} |" in page, (result["dataset"], fam)
