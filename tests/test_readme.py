"""The README's examples run exactly as written."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang, after):
    text = README.read_text()
    section = text[text.index(after):]
    return re.findall(rf"```{lang}\n(.*?)\n```", section, flags=re.S)


@pytest.mark.slow
def test_command_line_block_runs_as_written(tmp_path):
    block = _blocks("bash", "## The command line")[0]
    hmcpgm = shutil.which("hmcpgm") or str(Path(sys.executable).parent / "hmcpgm")
    env = {**os.environ, "PATH": f"{Path(hmcpgm).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    for name in ("model.npz", "mlpr.csv", "calls.csv", "ranking.csv"):
        assert (tmp_path / name).is_file(), name
    assert "events called positive at estimated FDR <= 0.05" in run.stdout
