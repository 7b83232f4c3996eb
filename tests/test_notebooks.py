"""Execute every teaching notebook in notebooks/ top to bottom (a broken cell fails CI)."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    nbformat = pytest.importorskip("nbformat", reason='needs the notebooks extra: pip install "hmcpgm[notebooks]"')
    nbclient = pytest.importorskip("nbclient", reason='needs the notebooks extra: pip install "hmcpgm[notebooks]"')
    pytest.importorskip("matplotlib", reason='needs the plot extra: pip install "hmcpgm[plot]"')
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError naming the cell on the first failure


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3
