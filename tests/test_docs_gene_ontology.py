"""docs/gene_ontology.md runs: its Python blocks and its ``hmcpgm`` commands, in order, in an empty folder."""

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from hmcpgm.cli import main

PAGE = Path(__file__).resolve().parents[1] / "docs" / "gene_ontology.md"


def test_gene_ontology_page_runs(tmp_path, monkeypatch):
    pytest.importorskip("obonet")
    monkeypatch.chdir(tmp_path)
    namespace, outputs = {}, []
    blocks = re.findall(r"```(python|bash|text)\n(.*?)\n```", PAGE.read_text(), flags=re.S)
    assert [lang for lang, _ in blocks] == ["python", "bash", "text", "python", "text"]
    for lang, code in blocks:
        if lang == "text":  # what the block before prints, pasted on the page
            assert outputs[-1].rstrip("\n") == code, "docs/gene_ontology.md shows an outdated output"
            continue
        out = io.StringIO()
        if lang == "python":
            with redirect_stdout(out):
                exec(compile(code, str(PAGE), "exec"), namespace)
        for line in code.splitlines() if lang == "bash" else ():
            assert line.startswith("hmcpgm ")
            out = io.StringIO()  # the output of the block's last command
            with redirect_stdout(out):
                assert main(line.split()[1:]) == 0, line
        outputs.append(out.getvalue())
    printed = outputs[-1]
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results) == ["biological_process"]  # molecular_function has no annotation
    # the page says: the Fmax printed by Python is the one `hmcpgm evaluate` prints for the same predictions
    assert main(["evaluate", "go.obo", "predictions_py.tsv", "test_annotations.tsv", "--json", "py.json"]) == 0
    f = json.loads((tmp_path / "py.json").read_text())["biological_process"]
    assert f"Fmax {f['fmax']:.3f} at tau {f['fmax_threshold']:.2f}" in printed
