"""hmcpgm.scale at its edges: odd chunk sizes, ties, bad cells late in the input, failures midway, memory.

References: ``MLPR.predict_proba`` / ``predict`` on all objects at once, :func:`hier_rank`
(:func:`naive_sort`) of the whole matrix and :func:`bayes_cutoff` / :meth:`Ranking.top` on
that ranking. Equalities are exact (the same floats, the same events).
"""

import os
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import hierarchies, value_matrices

from hmcpgm import MLPR, CutoffWarning, Hierarchy, InputError, LabelNetwork, bayes_cutoff, hier_rank, naive_sort
from hmcpgm.cli import main
from hmcpgm.io import write_hierarchy, write_matrix
from hmcpgm.scale import (
    predict_files,
    predict_proba,
    predict_stream,
    rank_chunks,
    rank_files,
    rank_model,
    rank_stream,
    row_chunks,
)

# a forest and a DAG in one, columns not in topological order
H = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("e", "f")],
                         classes=["d", "f", "b", "a", "e", "c"])
M = 37  # a prime: no chunk size below it divides the rows


def _data(n, seed):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(H, rng.uniform(0.3, 0.9, H.n_classes)).sample(n, rng)
    return rng.normal(1.5 * y), y


@pytest.fixture(scope="module")
def model():
    X, y = _data(1500, 0)
    return MLPR(hierarchy=H).fit(X, y)


@pytest.fixture(scope="module")
def new():
    return _data(M, 1)[0]


def _cutoffs(ranked, ranking, values, alpha):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CutoffWarning)
        return ranked.bayes_cutoff(alpha), bayes_cutoff(ranking, values, alpha=alpha)


def _same_cutoff(got, expected):
    fields = ("rank", "threshold", "n_events", "min_fdr_rank")
    assert [getattr(got, f) for f in fields] == [getattr(expected, f) for f in fields]
    for f in ("precision", "min_fdr"):
        a, b = getattr(got, f), getattr(expected, f)
        assert a == b or (np.isnan(a) and np.isnan(b)), f
    for f in ("recall", "f1"):  # divided by the sum of all values, added in another order
        a, b = getattr(got, f), getattr(expected, f)
        assert a == pytest.approx(b, rel=1e-12, abs=0) or (np.isnan(a) and np.isnan(b)), f


# ---------------------------------------------------------------------- chunk sizes
@pytest.mark.parametrize("chunk_size", [1, 2, 5, M - 1, M, M + 1, 10 * M])
def test_every_chunk_size_gives_the_whole_numbers(model, new, chunk_size):
    p, d = model.predict_proba(new), model.predict(new)
    parts = list(predict_stream(model, new, chunk_size=chunk_size, decisions=True))
    assert len(parts) == -(-M // chunk_size)
    assert np.array_equal(np.concatenate([a for a, _ in parts]), p)
    assert np.array_equal(np.concatenate([b for _, b in parts]), d)
    assert np.array_equal(predict_proba(model, pd.DataFrame(new, columns=H.classes)[list(H.classes)[::-1]],
                                        chunk_size=chunk_size), p)  # a DataFrame, columns in another order
    with rank_model(model, new, chunk_size=chunk_size) as ranked:
        whole = hier_rank(p, H)
        assert np.array_equal(ranked.to_ranking().order, whole.order)
        for alpha in (0.05, 0.3):
            _same_cutoff(*_cutoffs(ranked, whole, p, alpha))
        for r in (0, 1, 7, p.size):
            assert np.array_equal(ranked.top(r), whole.top(r))


def test_rank_model_calibrated_ranks_and_cuts_the_recalibrated_mlprs(model, new):
    """docs/scale.md's recipe took the FDR cutoff on the mLPRs as they are (audit25); calibrated=True ranks
    model.calibrated_proba, as 'hmcpgm rank --fdr' ranks the output of 'hmcpgm predict'."""
    g = model.calibrated_proba(new)
    assert not np.array_equal(g, model.predict_proba(new))  # the map is not the identity here
    whole = hier_rank(g, H)
    with rank_model(model, new, chunk_size=7, calibrated=True) as ranked:
        assert np.array_equal(ranked.to_ranking().order, whole.order)
        for alpha in (0.05, 0.3):
            _same_cutoff(*_cutoffs(ranked, whole, g, alpha))


@pytest.mark.parametrize("method", ["auto", "naive"])
@pytest.mark.parametrize("kind", ["ties", "constant", "zeros", "tiny"])
def test_ties_and_degenerate_values_in_chunks(method, kind):
    rng = np.random.default_rng(3)
    values = {"ties": rng.integers(0, 3, (M, H.n_classes)) / 2, "constant": np.full((M, H.n_classes), 0.5),
              "zeros": np.zeros((M, H.n_classes)), "tiny": rng.random((M, H.n_classes)) * 1e-300}[kind]
    whole = hier_rank(values, H) if method == "auto" else naive_sort(values, H)
    for chunk_size in (1, 4, M):
        with rank_chunks(values, H, chunk_size=chunk_size, method=method) as ranked:
            assert np.array_equal(ranked.to_ranking().order, whole.order)
            for alpha in (0.05, 0.5, 0.9):
                _same_cutoff(*_cutoffs(ranked, whole, values, alpha))
            for r in range(0, values.size + 1, 5):
                assert np.array_equal(ranked.top(r), whole.top(r))


def _same_top(got, want):
    """The same type and content, to the dtype, row index and column names."""
    assert type(got) is type(want)
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    else:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("labelled", [False, True])
@pytest.mark.parametrize("method", ["auto", "naive"])
def test_top_has_the_type_and_content_of_ranking_top(labelled, method):
    # ChunkedRanking.top gave a bare array where Ranking.top of the same DataFrame gives a DataFrame
    rng = np.random.default_rng(5)
    values = rng.integers(0, 4, (M, H.n_classes)) / 3
    if labelled:  # columns in another order than the hierarchy's, objects named
        values = pd.DataFrame(values, columns=H.classes, index=[f"g{i}" for i in range(M)])[list(H.classes)[::-1]]
    rank = hier_rank if method == "auto" else naive_sort
    whole = rank(values, H)
    for chunk_size in (1, 5, M):
        with rank_chunks(values, H, chunk_size=chunk_size, method=method) as ranked:
            for r in (0, 1, 17, whole.n_events):
                _same_top(ranked.top(r), whole.top(r))
            _same_top(ranked.to_ranking().top(9), whole.top(9))
        # chunks that are DataFrames themselves: their row indexes, one after the other
        with rank_stream(row_chunks(values, chunk_size), H, method=method) as ranked:
            _same_top(ranked.top(17), whole.top(17))
    empty = values.iloc[:0] if labelled else values[:0]
    with rank_chunks(empty, H, chunk_size=3, method=method) as ranked:
        _same_top(ranked.top(0), rank(empty, H).top(0))


def test_top_of_a_dask_dataframe_is_labelled_by_its_partitions_indexes():
    dd = pytest.importorskip("dask.dataframe")
    values = pd.DataFrame(np.random.default_rng(6).random((M, H.n_classes)), columns=H.classes,
                          index=[f"g{i}" for i in range(M)])
    lazy = dd.from_pandas(values, npartitions=4)
    whole = hier_rank(lazy.compute(), H)  # the same frame (dask may give its index another string dtype)
    with rank_chunks(lazy, H) as ranked:
        for r in (0, 23, values.size):
            _same_top(ranked.top(r), whole.top(r))


@pytest.mark.parametrize("labelled", [False, True])
def test_top_of_rank_model_has_the_type_and_content_of_ranking_top(model, new, labelled):
    X = pd.DataFrame(new, columns=H.classes, index=[f"g{i}" for i in range(M)]) if labelled else new
    whole = hier_rank(model.predict_proba(X), H)
    with rank_model(model, X, chunk_size=6) as ranked:
        for r in (0, 11, whole.n_events):
            _same_top(ranked.top(r), whole.top(r))


def test_no_rows_in_chunks(model, new):
    assert predict_proba(model, new[:0], chunk_size=3).shape == (0, H.n_classes)
    with rank_chunks(new[:0], H, chunk_size=3) as ranked:
        assert ranked.top(0).shape == (0, H.n_classes)
        assert ranked.bayes_cutoff(0.1).rank == 0
# ---------------------------------------------------------------------- a bad cell late in the input
@pytest.mark.parametrize("run", ["predict_proba", "rank_model", "rank_chunks"])
def test_a_bad_cell_is_named_by_its_row_in_the_whole_input(model, new, run):
    bad = new.copy()
    bad[30, 2] = np.nan
    whole = {"predict_proba": lambda: model.predict_proba(bad), "rank_model": lambda: model.predict_proba(bad),
             "rank_chunks": lambda: hier_rank(bad, H)}[run]
    with pytest.raises(InputError, match="row 30, class 'b'"):
        whole()
    chunked = {"predict_proba": lambda: predict_proba(model, bad, chunk_size=4),
               "rank_model": lambda: rank_model(model, bad, chunk_size=4),
               "rank_chunks": lambda: rank_chunks(bad, H, chunk_size=4)}[run]
    with pytest.raises(InputError, match="row 30, class 'b'"):
        chunked()


# ---------------------------------------------------------------------- files: outputs onto inputs, failures midway
@pytest.fixture(scope="module")
def files(tmp_path_factory, model):
    d = tmp_path_factory.mktemp("scale_edge")
    X, _ = _data(300, 2)
    write_hierarchy(H, d / "h.csv")
    write_matrix(d / "scores.csv", X, H, ids=[f"g{i}" for i in range(len(X))], id_column="gene")
    write_matrix(d / "values.csv", model.predict_proba(X), H)
    return d


def _spellings(folder, name):
    """Other names of ``folder / name``: through 'sub/..', a symlink, a hard link."""
    target = folder / name
    (folder / "sub").mkdir(exist_ok=True)
    link, hard = folder / f"link-{name}", folder / f"hard-{name}"
    for p in (link, hard):
        p.unlink(missing_ok=True)
    link.symlink_to(target)
    os.link(target, hard)
    return [target, folder / "sub" / ".." / name, link, hard]


@pytest.mark.parametrize("which", ["output", "decisions"])
def test_predict_files_refuses_an_output_onto_the_scores_or_the_other_output(files, model, which):
    before = (files / "scores.csv").read_bytes()
    for spelling in _spellings(files, "scores.csv"):
        outputs = {"output": files / "out.csv", "decisions": files / "dec.csv", which: spelling}
        with pytest.raises(InputError, match="scores"):
            predict_files(model, files / "scores.csv", outputs["output"], decisions=outputs["decisions"],
                          id_column="gene", chunk_size=50)
    assert (files / "scores.csv").read_bytes() == before
    (files / "out.csv").unlink(missing_ok=True)
    with pytest.raises(InputError, match="same file"):
        predict_files(model, files / "scores.csv", files / "out.csv", decisions=files / "sub" / ".." / "out.csv",
                      id_column="gene", chunk_size=50)
    assert not (files / "out.csv").exists()


def test_rank_files_refuses_an_output_onto_the_values(files):
    before = (files / "values.csv").read_bytes()
    for spelling in _spellings(files, "values.csv"):
        with pytest.raises(InputError, match="values"):
            rank_files(files / "values.csv", H, spelling, chunk_size=50)
    assert (files / "values.csv").read_bytes() == before


class _FailingModel:
    """A fitted model whose ``predict_proba`` raises on its ``after + 1``-th call (a chunk failing midway)."""

    def __init__(self, model, after):
        self._model, self._calls, self._after = model, 0, after

    def __getattr__(self, name):
        return getattr(self._model, name)

    def __sklearn_is_fitted__(self):
        return True

    def predict_proba(self, X):
        self._calls += 1
        if self._calls > self._after:
            raise RuntimeError("a chunk failed")
        return self._model.predict_proba(X)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".tsv"])
def test_a_chunk_failing_midway_leaves_the_old_outputs(files, model, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out, dec = files / f"old{suffix}", files / "old-decisions.csv"
    out.write_text("old output\n")
    dec.write_text("old decisions\n")
    with pytest.raises(RuntimeError, match="a chunk failed"):
        predict_files(_FailingModel(model, 3), files / "scores.csv", out, decisions=dec, id_column="gene",
                      chunk_size=40, cafa=suffix == ".tsv")
    assert out.read_text() == "old output\n" and dec.read_text() == "old decisions\n"
    assert not [p.name for p in files.iterdir() if p.name.endswith(".hmcpgm-part")]


def test_a_ranking_failing_while_written_leaves_the_old_output(files, monkeypatch):
    from hmcpgm.scale import ChunkedRanking

    whole = ChunkedRanking.iter_frames

    def failing(self, *args, **kwargs):
        frames = whole(self, *args, **kwargs)
        yield next(frames)
        raise RuntimeError("writing failed")

    out = files / "old-ranking.csv"
    out.write_text("old ranking\n")
    monkeypatch.setattr(ChunkedRanking, "iter_frames", failing)
    with pytest.raises(RuntimeError, match="writing failed"):
        rank_files(files / "values.csv", H, out, chunk_size=40, batch=100, fdr=0.2)
    assert out.read_text() == "old ranking\n"
    assert not [p.name for p in files.iterdir() if p.name.endswith(".hmcpgm-part")]


def test_memory_follows_the_chunk_not_the_input(model):
    """Peak traced memory of a streamed prediction (numpy registers its buffers with tracemalloc)."""
    X, _ = _data(4000, 4)

    def peak(chunk_size):
        tracemalloc.start()
        try:
            for _ in predict_stream(model, X, chunk_size=chunk_size, decisions=True):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    peak(400)  # first call: imports and caches
    assert peak(200) * 5 < peak(len(X))


# ---------------------------------------------------------------------- dask, one and two workers
@pytest.mark.slow
@pytest.mark.parametrize("n_workers", [1, 2])
def test_dask_with_one_and_two_workers_gives_the_whole_numbers(model, new, n_workers):
    pytest.importorskip("distributed")
    import dask.array as da

    from hmcpgm.scale import open_client

    client, close = open_client("local", processes=False, n_workers=n_workers)
    try:
        assert len(client.nthreads()) == n_workers
        p, d = model.predict_proba(new), model.predict(new)
        for chunk_size in (1, 5, 10 * M):
            parts = list(predict_stream(model, new, chunk_size=chunk_size, decisions=True, scheduler=client))
            assert np.array_equal(np.concatenate([a for a, _ in parts]), p)
            assert np.array_equal(np.concatenate([b for _, b in parts]), d)
            with rank_model(model, new, chunk_size=chunk_size, scheduler=client) as ranked:
                whole = hier_rank(p, H)
                assert np.array_equal(ranked.to_ranking().order, whole.order)
                _same_cutoff(*_cutoffs(ranked, whole, p, 0.2))
        with rank_chunks(da.from_array(p, chunks=(6, 4)), H, scheduler=client) as ranked:
            assert np.array_equal(ranked.to_ranking().order, hier_rank(p, H).order)
        bad = new.copy()
        bad[30, 2] = np.inf
        with pytest.raises(InputError, match="row 30, class 'b'"):
            list(predict_stream(model, bad, chunk_size=4, scheduler=client))
    finally:
        close()


# ---------------------------------------------------------------------- the door of the chunked functions
def test_an_unfitted_model_is_refused_as_not_fitted(new):
    from sklearn.exceptions import NotFittedError

    for run in (lambda: predict_proba(MLPR(H), new, chunk_size=4), lambda: rank_model(MLPR(H), new, chunk_size=4)):
        with pytest.raises(NotFittedError):
            run()


def test_a_one_dimensional_x_is_one_line_in_chunks(model, new):
    with pytest.raises(InputError, match="2-D|2D"):
        model.predict_proba(new[0])
    with pytest.raises(InputError, match="2-D|2D"):
        predict_proba(model, new[0], chunk_size=4)


def test_a_list_of_rows_is_a_matrix_not_a_list_of_blocks(model, new):
    """predict_proba takes an array-like as MLPR.predict_proba does; a list of rows is one (rank_chunks agrees)."""
    p = model.predict_proba(new)
    for chunk_size in (None, 4):
        assert np.array_equal(predict_proba(model, new.tolist(), chunk_size=chunk_size), p)
    blocks = [new[:10], new[10:]]  # an iterable of row blocks stays one
    assert np.array_equal(predict_proba(model, blocks), p)


# ---------------------------------------------------------------------- the command line, chunked against whole
def test_chunked_rank_on_an_obo_hierarchy_writes_the_whole_ranking_file(tmp_path):
    """Term names included: the chunked path wrote no 'name' column."""
    pytest.importorskip("obonet")
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from go_fixtures import NAMESPACES, live_terms, obo_text, random_ontology

    rng = np.random.default_rng(0)
    terms = random_ontology(rng)
    (tmp_path / "go.obo").write_text(obo_text(terms))
    columns = live_terms(terms, NAMESPACES[0])
    values = pd.DataFrame(rng.random((20, len(columns))), columns=columns)
    values.insert(0, "gene", [f"g{i}" for i in range(len(values))])
    values.to_csv(tmp_path / "v.csv", index=False)
    for extra in ([], ["--chunk-size", "3"], ["--chunk-size", "100"]):
        out = tmp_path / f"r{len(extra)}-{extra[-1] if extra else 0}.csv"
        assert main(["rank", str(tmp_path / "v.csv"), str(tmp_path / "go.obo"), "--namespace", NAMESPACES[0],
                     "--id-column", "gene", "--fdr", "0.3", "-o", str(out), "--quiet", *extra]) == 0
    whole = (tmp_path / "r0-0.csv").read_text()
    assert "name" in whole.splitlines()[0].split(",")
    assert (tmp_path / "r2-3.csv").read_text() == whole
    assert (tmp_path / "r2-100.csv").read_text() == whole


def test_a_dask_dataframe_is_ranked_and_predicted_by_its_partitions(model, new):
    dd = pytest.importorskip("dask.dataframe")
    p = model.predict_proba(new)
    frame = pd.DataFrame(new, columns=H.classes)[list(H.classes)[::-1]]  # columns by name, in another order
    lazy = dd.from_pandas(frame, npartitions=4)
    assert np.array_equal(predict_proba(model, lazy), p)
    with rank_chunks(dd.from_pandas(pd.DataFrame(p, columns=H.classes), npartitions=3), H) as ranked:
        assert len(ranked.summaries) == 3
        assert np.array_equal(ranked.to_ranking().order, hier_rank(p, H).order)
    with pytest.raises(InputError, match="partitions"):
        predict_proba(model, lazy, chunk_size=5)
    import dask.array as da  # a dask array (which has partitions too, of its blocks) stays chunked by rows

    assert np.array_equal(predict_proba(model, da.from_array(new, chunks=(5, 2))), p)
    with rank_chunks(da.from_array(p, chunks=(6, 4)), H) as ranked:
        assert len(ranked.summaries) == -(-M // 6)


# ---------------------------------------------------------------------- the smallest estimated FDR, property-tested
@given(st.data())
def test_the_smallest_estimated_fdr_and_its_rank_equal_the_whole_ranking(data):
    """min_fdr and min_fdr_rank (the longest prefix within 1e-12 of the smallest FDR), ties included."""
    h = data.draw(hierarchies(kind=data.draw(st.sampled_from(["forest", "dag"])), max_classes=6))
    v = data.draw(value_matrices(h.n_classes, max_objects=10, low=0.0, high=1.0))
    if data.draw(st.booleans()):
        v = np.round(v, 1)  # ties, and sums that round differently in different orders
    method = data.draw(st.sampled_from(["auto", "naive"]))
    whole = hier_rank(v, h) if method == "auto" else naive_sort(v, h)
    with rank_chunks(v, h, chunk_size=data.draw(st.integers(1, 11)), method=method) as ranked:
        got, expected = _cutoffs(ranked, whole, v, data.draw(st.sampled_from([0.01, 0.1, 0.5])))
    assert got.min_fdr_rank == expected.min_fdr_rank
    assert got.min_fdr == pytest.approx(expected.min_fdr, abs=1e-12, nan_ok=True)


def test_a_tie_within_rounding_of_the_smallest_fdr_counts_as_in_bayes_cutoff():
    h = Hierarchy.from_parents([None, 0, None])
    v = np.array([[0.2, 0.2, 0.2], [0.2, 0.2, 0.0], [0.0, 0.0, 0.0]])  # prefix FDRs 0.8 up to one ulp
    with rank_chunks(v, h, chunk_size=3) as ranked:
        got, expected = _cutoffs(ranked, hier_rank(v, h), v, 0.01)
    assert (got.min_fdr_rank, got.min_fdr) == (expected.min_fdr_rank, expected.min_fdr)


@pytest.mark.parametrize("method", ["auto", "naive"])
@pytest.mark.parametrize("store", [None, True])
def test_a_bin_of_tied_values_is_written_in_frames_of_the_batch(method, store):
    # a histogram bin was merged whole: 40% exact zeros (recalibrated mLPRs have them) made the write's memory
    # follow the input instead of the chunk. Tied events now come a batch at a time, in the same order.
    h = Hierarchy.from_edges([("a", "b"), ("a", "c"), ("c", "d"), ("b", "d"), ("e", "f")],
                             classes=["d", "c", "f", "a", "e", "b"])  # not topological, a DAG and a tree
    rng = np.random.default_rng(3)
    for v in (np.zeros((1500, 6)), np.where(rng.random((1500, 6)) < 0.5, 0.0, rng.random((1500, 6)))):
        v[rng.random(v.shape) < 0.1] = 1.0
        whole = naive_sort(v, h) if method == "naive" else hier_rank(v, h)
        with rank_chunks(v, h, chunk_size=400, method=method, store=store) as ranked:
            frames = list(ranked.iter_frames(batch=300, positives=1000))
        got = pd.concat(frames, ignore_index=True)
        flat = got["object"].to_numpy() * 6 + np.array([h.classes.index(c) for c in got["class"]])
        np.testing.assert_array_equal(flat, whole.order)
        np.testing.assert_array_equal(got["rank"], np.arange(1, v.size + 1))
        np.testing.assert_array_equal(got["block_mean"], whole.block_means.ravel()[whole.order])
        np.testing.assert_array_equal(got["value"], v.ravel()[whole.order])
        assert got["positive"].sum() == 1000 and got["positive"][:1000].all()
        if ((v == 1) | (v == 0)).all():  # every event in a bin of ties: no frame beyond the batch
            assert max(len(f) for f in frames) <= 300
