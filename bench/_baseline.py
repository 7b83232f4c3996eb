"""The baseline package of the before/after bench scripts: ``git archive`` of a revision, extracted once."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_baseline(rev):
    """The commit of ``rev`` and a folder holding its ``hmcpgm`` package, reused across runs.

    The archive is extracted into a scratch folder that is renamed into place only
    when complete, so an interrupted extraction is never taken for a baseline.
    """
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    folder = Path(tempfile.gettempdir()) / f"hmcpgm-baseline-{commit[:12]}"
    if not (folder / "hmcpgm" / "__init__.py").is_file():
        scratch = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
        try:
            archive = subprocess.run(["git", "archive", commit, "hmcpgm"], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive.stdout, check=True)
            shutil.rmtree(folder, ignore_errors=True)  # a folder left without its package
            os.replace(scratch, folder)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    return commit, folder
