"""Every warning hmcpgm gives names the user's line (its ``filename`` is the caller's file), whatever depth
inside hmcpgm it was raised at. A fixed ``stacklevel`` is right for one route only: the score models' warning
through ``MLPR.fit`` named hmcpgm's own selection module."""

import warnings

import numpy as np
import pytest

from hmcpgm import CutoffWarning, Hierarchy, HmcpgmWarning


def _caught(call, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    mine = [w for w in caught if issubclass(w.category, category)]
    assert mine, f"no {category.__name__} was given"
    return mine


def _annotations(tmp_path):
    from hmcpgm.ontology import read_annotations

    h = Hierarchy.from_edges([("GO:1", "GO:2")])
    (tmp_path / "a.tsv").write_text("g1\tGO:2\ng2\tGO:9\n")
    return lambda: read_annotations(tmp_path / "a.tsv", h)


def _predictions(text):
    def make(tmp_path):
        from hmcpgm.ontology import read_cafa_predictions

        h = Hierarchy.from_edges([("GO:1", "GO:2")])
        (tmp_path / "p.txt").write_text(text)
        return lambda: read_cafa_predictions(tmp_path / "p.txt", h, ["A"])
    return make


def _arff(tmp_path):
    from hmcpgm.datasets import load_hmc_arff

    path = tmp_path / "image.arff"
    path.write_text("@RELATION r\n@ATTRIBUTE x numeric\n@ATTRIBUTE class hierarchical 1,1/2,1\n@DATA\n0.5,1/2\n")
    return lambda: load_hmc_arff(path)


def _logistic(tmp_path):
    from hmcpgm.first_stage import LogisticColumns

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (X[:, :2] + rng.normal(size=(60, 2)) > 0).astype(int)
    return lambda: LogisticColumns(max_iter=1).fit(X, Y)


def _score_model(tmp_path):
    from hmcpgm.likelihood import fit_score_model

    h = Hierarchy.from_parents([None, 0])
    y = np.array([[1, 0], [1, 1], [1, 0], [1, 1]])
    s = np.array([[0.3, -1.0], [2.0, 1.5], [-0.5, -0.2], [0.1, 2.2]])
    return lambda: fit_score_model(s, y, h)


def _mlpr(tmp_path):
    from hmcpgm import MLPR

    h = Hierarchy.from_parents([None, 0])
    y = np.array([[1, 0], [1, 1], [1, 0], [1, 1]] * 5)
    s = np.random.default_rng(1).normal(size=(20, 2))
    return lambda: MLPR(hierarchy=h).fit(s, y)


def _chunked_cutoff(tmp_path):
    from hmcpgm.scale import rank_chunks

    h = Hierarchy.from_parents([None, 0])
    values = np.array([[0.5, 0.4], [0.3, 0.2]])

    def call():
        with rank_chunks(values, h, chunk_size=1) as ranked:
            ranked.bayes_cutoff(0.01)
    return call


CASES = {
    "annotations naming unknown terms": (_annotations, UserWarning),
    "predictions with a NaN score": (_predictions("A GO:2 nan\nA GO:1 0.5\n"), UserWarning),
    "predictions with a short line": (_predictions("A GO:2 0.75\nA GO:1\n"), UserWarning),
    "an ARFF class attribute listing a path twice": (_arff, UserWarning),
    "LogisticColumns not converged": (_logistic, Warning),
    "a class positive for every object": (_score_model, HmcpgmWarning),
    "the same through MLPR.fit": (_mlpr, HmcpgmWarning),  # was attributed to hmcpgm/selection/_auto.py
    "a chunked FDR cutoff calling nothing": (_chunked_cutoff, CutoffWarning),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_warning_names_the_callers_line(case, tmp_path):
    make, category = CASES[case]
    call = make(tmp_path)
    assert {w.filename for w in _caught(call, category)} == {__file__}
