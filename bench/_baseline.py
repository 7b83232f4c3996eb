"""The before/after bench scripts' shared parts: the baseline package (``git archive`` of a revision,
extracted once) and a child script run on one package or the other."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_baseline(rev):
    """The commit of ``rev`` and a folder holding its ``hmcpgm`` package, reused across runs.

    The archive is extracted into a scratch folder that is renamed into place only
    when complete, so an interrupted extraction is never taken for a baseline.
    """
    commit = git("rev-parse", rev)
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


def git(*args):
    """Standard output of ``git args`` in this checkout, stripped."""
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def describe_checkout():
    """This checkout's short commit, with ``" + uncommitted changes"`` when its package has any."""
    dirty = git("status", "--porcelain", "hmcpgm")
    return git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if dirty else "")


def run_child(code_root, child, *args):
    """Standard output of ``python -c child args`` run on the ``hmcpgm`` package under ``code_root``.

    The child runs in the temporary folder with ``PYTHONPATH=code_root``, so it
    imports that package and not this checkout's; standard error is shown when it fails.
    """
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    done = subprocess.run([sys.executable, "-c", child, *map(str, args)], env=env, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    if done.returncode:
        sys.stderr.write(done.stderr)
    done.check_returncode()
    return done.stdout


def check_package(package, code_root):
    """Refuse a child's result whose ``hmcpgm`` was imported from anywhere but ``code_root``."""
    if not str(package).startswith(str(code_root)):
        raise RuntimeError(f"imported {package}, not the code under {code_root}")
