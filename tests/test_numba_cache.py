"""numba's cache goes to the per-user folder, never beside the installed sources (where leftovers outlive
``pip uninstall`` and turn a later editable install into an empty namespace package)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hmcpgm"
# every module that imports numba itself: whichever is imported first must find the cache folder already set
NUMBA_USERS = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py")
    if re.search(r"^\s*(from numba|import numba)", path.read_text(encoding="utf-8"), flags=re.M)
    and path.name != "_numba.py"
)


def test_the_scan_finds_the_modules():
    assert "hmcpgm.ranking._kernels" in NUMBA_USERS and len(NUMBA_USERS) >= 5


@pytest.mark.parametrize("module", NUMBA_USERS)
def test_numba_cache_folder_is_set_whichever_module_comes_first(module, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    code = f"import {module}, numba; print(numba.config.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent)
    assert Path(out.stdout.strip()) == tmp_path / "hmcpgm" / "numba"
