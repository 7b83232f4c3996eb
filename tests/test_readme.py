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


@pytest.mark.slow
@pytest.mark.parametrize("section", ["## Ten lines", "## Real data: a scikit-learn Pipeline"])
def test_python_block_runs_as_written(section):
    block = _blocks("python", section)[0]
    if "../shared/data/hmc" in block and not (README.parent.parent / "shared" / "data" / "hmc").is_dir():
        pytest.skip("the Clus-HMC files are not beside the repository")
    # run from the repository root, where the README's relative data path points
    run = subprocess.run([sys.executable, "-c", block], cwd=README.parent, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
