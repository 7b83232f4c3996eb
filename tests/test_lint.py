"""The lint rules of pyproject.toml ([tool.ruff]) hold over the whole repository."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["hmcpgm", "tests", "bench", "docs"]


def _ruff():
    """The ruff executable: beside this Python (a virtualenv's bin/) first, then on PATH."""
    beside = Path(sys.executable).parent / ("ruff.exe" if os.name == "nt" else "ruff")
    if beside.is_file():
        return str(beside)
    return shutil.which("ruff")


def test_ruff_check_passes():
    ruff = _ruff()
    if ruff is None:
        pytest.skip('ruff is not installed (pip install "hmcpgm[test]")')
    done = subprocess.run(
        [ruff, "check", "--no-cache", *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"ruff check {' '.join(PATHS)} found problems:\n{done.stdout}{done.stderr}"
