"""hmcpgm.scale: chunked runs give the numbers of the whole-matrix functions, in this process and on dask.

References: ``MLPR.predict_proba`` / ``predict`` on all objects at once, :func:`hier_rank`
(:func:`naive_sort`) of the whole matrix, :func:`bayes_cutoff` and :meth:`Ranking.top`
on that ranking. Equalities are exact (the same floats, the same events) unless said.
"""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import hierarchies, value_matrices

from hmcpgm import MLPR, CutoffWarning, Hierarchy, LabelNetwork, bayes_cutoff, hier_rank, naive_sort
from hmcpgm.cli import main
from hmcpgm.datasets import paper_forest
from hmcpgm.exceptions import InputError, MissingDependencyError
from hmcpgm.options import RANK_METHODS
from hmcpgm.scale import (
    N_BINS,
    descending_bins,
    open_client,
    predict_proba,
    predict_stream,
    rank_chunks,
    rank_model,
)

# a DAG of 20 classes (8 with two parents) whose junction tree stays small
DAG = Hierarchy.from_parents([None, 0, 0, 1, [1, 2], 2, 3, [3, 4], 4, [5, 4], 5, 6, [7, 8], 9, [9, 10], None, 15,
                              [15, 10], 16, 17])
N = 5000


def _data(h, n, seed):
    rng = np.random.default_rng(seed)
    y = LabelNetwork(h, rng.uniform(0.3, 0.9, h.n_classes)).sample(n, rng)
    return rng.normal(1.5 * y), y


@pytest.fixture(scope="module", params=["forest", "dag"])
def fitted(request):
    """A model fitted on 2,000 objects and the scores of 5,000 new ones."""
    h = paper_forest() if request.param == "forest" else DAG
    X, y = _data(h, 2000, 0)
    new, _ = _data(h, N, 1)
    return MLPR(hierarchy=h).fit(X, y), new


def _values_of(ranked):
    """The (M, K) values kept in a chunked ranking's runs, read back through iter_frames."""
    frame = pd.concat(list(ranked.iter_frames(batch=10_000)))
    col = {c: j for j, c in enumerate(ranked.classes)}
    out = np.full(ranked.shape, np.nan)
    out[frame["object"].to_numpy(), frame["class"].map(col).to_numpy()] = frame["value"].to_numpy()
    return out


def _assert_same_as_whole(ranked, p, h, alpha=0.1):
    ranking = hier_rank(p, h)
    expected = bayes_cutoff(ranking, p, alpha=alpha)
    got = ranked.bayes_cutoff(alpha)
    assert (got.rank, got.precision, got.threshold) == (expected.rank, expected.precision, expected.threshold)
    assert got.recall == pytest.approx(expected.recall, rel=1e-12)
    assert expected.rank > 0
    assert np.array_equal(ranked.top(got.rank), expected.apply(ranking))
    assert np.array_equal(ranked.to_ranking().order, ranking.order)


# ---------------------------------------------------------------------- the pipeline, in this process
def test_chunked_mlprs_and_decisions_equal_unchunked(fitted):
    model, X = fitted
    h = model.hierarchy_
    p = model.predict_proba(X)
    assert np.array_equal(predict_proba(model, X, chunk_size=777), p)
    decisions = np.concatenate([d for _, d in predict_stream(model, X, chunk_size=777, decisions=True)])
    assert np.array_equal(decisions, model.predict(X))
    with rank_model(model, X, chunk_size=777) as ranked:
        assert len(ranked.summaries) == 7
        assert np.array_equal(_values_of(ranked), p)  # the mLPRs made inside the chunks' tasks
        _assert_same_as_whole(ranked, p, h)


def test_nbh_on_a_dag_is_equal_to_rounding_only():
    """nbh on a DAG sums neighbourhood configurations with a BLAS matrix product whose rounding
    depends on how many objects are in the product, so a chunk's mLPRs can differ from the
    whole run's in the last bits (measured: at most a few 1e-16). Every other version and
    engine is bitwise equal (test above). Decisions from the same mLPRs are always exact."""
    X, y = _data(DAG, 2000, 0)
    model = MLPR(hierarchy=DAG, version="nbh").fit(X, y)
    new, _ = _data(DAG, N, 1)
    p = model.predict_proba(new)
    chunked = predict_proba(model, new, chunk_size=777)
    np.testing.assert_allclose(chunked, p, rtol=0, atol=1e-14)
    with rank_chunks(p, DAG, chunk_size=777) as ranked:
        _assert_same_as_whole(ranked, p, DAG)


def test_runs_on_disk_give_the_same_ranking(tmp_path):
    rng = np.random.default_rng(5)
    h = paper_forest()
    p = np.round(rng.random((3000, h.n_classes)), 2)  # many ties
    for store in (True, tmp_path / "runs"):
        with rank_chunks(p, h, chunk_size=400, store=store) as ranked:
            folder = ranked.store.directory
            assert ranked.store.nbytes == p.size * 20
            for alpha in (0.02, 0.1, 0.3):
                _assert_same_as_whole(ranked, p, h, alpha)
        assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
        if store is True:
            assert not __import__("os").path.exists(folder)


def test_two_runs_sharing_a_store_folder_keep_their_own_runs(tmp_path):
    """Two rankings alive at once with the same store= folder: each reads back its own runs, and closing one
    leaves the other's in place (they wrote run-0000000.npy ... into the folder itself, the second over the
    first, and the first close removed both)."""
    rng = np.random.default_rng(6)
    h = paper_forest()
    p, q = np.round(rng.random((1200, h.n_classes)), 2), np.round(rng.random((900, h.n_classes)), 2)
    folder = tmp_path / "runs"
    with rank_chunks(p, h, chunk_size=400, store=folder) as first:
        with rank_chunks(q, h, chunk_size=300, store=folder) as second:
            _assert_same_as_whole(second, q, h)
            _assert_same_as_whole(first, p, h)
        _assert_same_as_whole(first, p, h)  # the second's close removed none of the first's runs
    assert not any(folder.iterdir())
    (tmp_path / "a-file").write_text("")
    with pytest.raises(InputError, match="^store folder .*a-file.* cannot hold the runs"):
        rank_chunks(p, h, chunk_size=400, store=tmp_path / "a-file")


def _rank_in_a_process(folder, seed, barrier, out):
    """Rank in a store folder another process uses at the same time; put (seed, same as the whole ranking?)."""
    try:
        rng = np.random.default_rng(seed)
        h = paper_forest()
        p = np.round(rng.random((800, h.n_classes)), 2)
        r = int(rng.integers(1, p.size))
        with rank_chunks(p, h, chunk_size=200, store=folder) as ranked:
            barrier.wait(timeout=60)  # both processes have written their runs
            try:
                same = bool(np.array_equal(ranked.top(r), hier_rank(p, h).top(r)))
            finally:
                barrier.wait(timeout=60)  # neither closes before the other has read
        out.put((seed, same))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        out.put((seed, f"{type(exc).__name__}: {exc}"))


def test_two_processes_sharing_a_store_folder(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # fork after OpenMP (numba's threads) is unsafe
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_rank_in_a_process, args=(tmp_path, seed, barrier, out)) for seed in (1, 2)]
    for proc in procs:
        proc.start()
    results = dict(out.get(timeout=180) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
    assert results == {1: True, 2: True}
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------------- on a dask cluster
@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    # threads, not processes: starts in about a second and needs no pickling by name
    client, close = open_client("local", processes=False, n_workers=2)
    yield client
    close()


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_numbers(client, fitted):
    import dask.array as da

    model, X = fitted
    h = model.hierarchy_
    assert len(client.nthreads()) == 2
    p = model.predict_proba(X)
    assert np.array_equal(predict_proba(model, X, chunk_size=777, scheduler=client), p)
    assert np.array_equal(predict_proba(model, da.from_array(X, chunks=(900, 3)), scheduler=client), p)
    with rank_model(model, X, chunk_size=777, scheduler=client) as ranked:
        assert np.array_equal(_values_of(ranked), p)
        _assert_same_as_whole(ranked, p, h)
    with rank_chunks(da.from_array(p, chunks=(1000, 5)), h, scheduler=client) as ranked:  # a dask array
        assert len(ranked.summaries) == 5
        _assert_same_as_whole(ranked, p, h)


def _warns(key, payload):
    import warnings

    from hmcpgm.exceptions import ApproximationWarning

    warnings.warn(f"chunk {key} is approximate", ApproximationWarning, stacklevel=2)
    return payload * 2


@pytest.mark.slow
def test_warnings_raised_on_the_workers_reach_the_caller():
    # a worker process's warnings (loopy BP that did not converge) went to its own standard error, or a
    # remote worker's log, and the command line printed no 'hmcpgm: warning:' line. Worker processes, not
    # threads: a thread's warning reaches this process's filters anyway
    pytest.importorskip("distributed")
    from hmcpgm.exceptions import ApproximationWarning
    from hmcpgm.scale._execute import ordered_map

    client, close = open_client("local", processes=True, n_workers=1)
    try:
        with pytest.warns(ApproximationWarning) as caught:
            got = list(ordered_map(_warns, [(k, k) for k in range(4)], client=client))
    finally:
        close()
    assert got == [0, 2, 4, 6]
    assert sorted(str(w.message) for w in caught) == [f"chunk {k} is approximate" for k in range(4)]


# ---------------------------------------------------------------------- the two passes, property-tested
@given(st.data())
def test_two_pass_decisions_equal_the_whole_ranking(data):
    h = data.draw(hierarchies(kind=data.draw(st.sampled_from(["forest", "dag"])), max_classes=7))
    v = data.draw(value_matrices(h.n_classes, max_objects=12, low=0.0, high=1.0))
    chunk = data.draw(st.integers(1, 13))
    method = data.draw(st.sampled_from(["auto", "naive"]))
    alpha = data.draw(st.sampled_from([0.1, 0.25, 0.5]) | st.floats(0.001, 0.999))
    ranking = hier_rank(v, h) if method == "auto" else naive_sort(v, h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CutoffWarning)
        expected = bayes_cutoff(ranking, v, alpha=alpha)
        with rank_chunks(v, h, chunk_size=chunk, method=method) as ranked:
            got = ranked.bayes_cutoff(alpha)
            r = data.draw(st.integers(0, v.size))
            assert np.array_equal(ranked.top(r), ranking.top(r))
            assert np.array_equal(ranked.to_ranking().order, ranking.order)
            assert np.array_equal(ranked.to_ranking().block_means, ranking.block_means)
    assert (got.rank, got.threshold) == (expected.rank, expected.threshold)
    assert got.precision == expected.precision or (got.rank == 0 and np.isnan(expected.precision))


@given(st.lists(st.floats(allow_nan=False, allow_infinity=True), min_size=1, max_size=50))
def test_bins_never_increase_with_the_value(xs):
    x = np.sort(np.asarray(xs))[::-1]
    b = descending_bins(x)
    assert np.all(np.diff(b) >= 0) and b.min() >= 0 and b.max() < N_BINS
    assert np.array_equal(descending_bins(-x), descending_bins(-x))  # deterministic
    assert descending_bins([0.0])[0] == descending_bins([-0.0])[0]


@pytest.mark.parametrize("method", RANK_METHODS)
@pytest.mark.parametrize("kind", ["forest", "dag"])
def test_every_ranking_method_is_the_same_in_chunks(method, kind):
    h = paper_forest() if kind == "forest" else DAG
    if method == "horn" and kind == "dag":
        pytest.skip("horn needs a forest")
    p = np.round(np.random.default_rng(1).random((120, h.n_classes)), 2)
    ranking = hier_rank(p, h, method=method)
    with rank_chunks(p, h, chunk_size=37, method=method) as ranked:
        assert np.array_equal(ranked.to_ranking().order, ranking.order)
        assert np.array_equal(ranked.to_ranking().block_means, ranking.block_means)


def test_the_top_event_of_many_equal_block_means_follows_the_object_order():
    h = Hierarchy.from_parents([None, 0])
    v = np.full((9, 2), 0.5)
    with rank_chunks(v, h, chunk_size=2) as ranked:
        assert np.array_equal(ranked.top(3), hier_rank(v, h).top(3))
        assert ranked.top(3).ravel().tolist() == [1, 1, 1, 0] + [0] * 14


# ---------------------------------------------------------------------- the command line
@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("scale_cli")
    assert main(["example", str(d), "--n-train", "1500", "--n-new", "900"]) == 0
    assert main(["fit", str(d / "train_scores.csv"), str(d / "train_labels.csv"), str(d / "hierarchy.csv"),
                 "-o", str(d / "model.npz"), "--quiet"]) == 0
    frame = pd.read_csv(d / "new_scores.csv")
    frame.insert(0, "gene", [f"g{i}" for i in range(len(frame))])
    frame.to_csv(d / "ids.csv", index=False)
    return d


def _run(*argv):
    assert main([str(a) for a in argv] + ["--quiet"]) == 0


def test_cli_chunked_predict_writes_the_same_files(cli_files, tmp_path, capsys):
    d = cli_files
    _run("predict", d / "model.npz", d / "ids.csv", "-o", tmp_path / "p.csv", "--decisions", tmp_path / "d.csv",
         "--id-column", "gene")
    whole = capsys.readouterr().out
    _run("predict", d / "model.npz", d / "ids.csv", "-o", tmp_path / "pc.csv", "--decisions", tmp_path / "dc.csv",
         "--id-column", "gene", "--chunk-size", "128")
    assert capsys.readouterr().out == whole.replace("p.csv", "pc.csv").replace("d.csv", "dc.csv")
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "pc.csv").read_bytes()
    assert (tmp_path / "d.csv").read_bytes() == (tmp_path / "dc.csv").read_bytes()
    # Parquet in and out, chunked: the same numbers and ids
    pytest.importorskip("pyarrow")
    pd.read_csv(d / "ids.csv").to_parquet(tmp_path / "ids.parquet")
    _run("predict", d / "model.npz", tmp_path / "ids.parquet", "-o", tmp_path / "p.parquet", "--decisions",
         tmp_path / "d.parquet", "--id-column", "gene", "--chunk-size", "100")
    for csv, parquet in (("p.csv", "p.parquet"), ("d.csv", "d.parquet")):
        a, b = pd.read_csv(tmp_path / csv), pd.read_parquet(tmp_path / parquet)
        assert list(a.columns) == list(b.columns)
        assert a["gene"].tolist() == b["gene"].tolist()
        assert np.array_equal(a.iloc[:, 1:].to_numpy(float), b.iloc[:, 1:].to_numpy(float))


@pytest.mark.parametrize("method", ["hierrank", "naive"])
def test_cli_chunked_rank_writes_the_same_ranking(cli_files, tmp_path, capsys, method):
    d = cli_files
    _run("predict", d / "model.npz", d / "ids.csv", "-o", tmp_path / "p.csv", "--id-column", "gene")
    capsys.readouterr()
    common = ["--fdr", "0.1", "--method", method, "--id-column", "gene"]
    _run("rank", tmp_path / "p.csv", d / "model.npz", "-o", tmp_path / "r.csv", *common)
    whole = capsys.readouterr().out
    _run("rank", tmp_path / "p.csv", d / "model.npz", "-o", tmp_path / "rc.csv", *common, "--chunk-size", "64")
    assert capsys.readouterr().out == whole.replace("r.csv", "rc.csv")
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "rc.csv").read_bytes()
    table = pd.read_csv(tmp_path / "r.csv")
    assert 0 < table["positive"].sum() < len(table)
    pytest.importorskip("pyarrow")
    _run("rank", tmp_path / "p.csv", d / "model.npz", "-o", tmp_path / "r.parquet", *common, "--chunk-size", "300")
    again = pd.read_parquet(tmp_path / "r.parquet")
    assert again["class"].tolist() == table["class"].astype(str).tolist()
    for column in ("rank", "gene", "value", "block_mean", "positive"):
        assert again[column].tolist() == table[column].tolist(), column


@pytest.mark.slow
def test_cli_on_a_local_dask_cluster(cli_files, tmp_path):
    pytest.importorskip("distributed")
    d = cli_files
    _run("predict", d / "model.npz", d / "new_scores.csv", "-o", tmp_path / "p.csv")
    _run("rank", tmp_path / "p.csv", d / "model.npz", "-o", tmp_path / "r.csv", "--fdr", "0.1")
    _run("rank", tmp_path / "p.csv", d / "model.npz", "-o", tmp_path / "rc.csv", "--fdr", "0.1",
         "--chunk-size", "200", "--scheduler", "local")
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "rc.csv").read_bytes()


# ---------------------------------------------------------------------- without the extra
@pytest.mark.parametrize("module", ["pyarrow.parquet", "distributed"])
def test_a_missing_extra_says_how_to_install_it(cli_files, tmp_path, monkeypatch, capsys, module):
    monkeypatch.setitem(sys.modules, module, None)  # "import module" now raises ImportError
    d = cli_files
    argv = ["predict", d / "model.npz", d / "new_scores.csv", "-o", tmp_path / "p.parquet"]
    if module == "distributed":
        argv = ["predict", d / "model.npz", d / "new_scores.csv", "-o", tmp_path / "p.csv", "--chunk-size", "100",
                "--scheduler", "local"]
    assert main([str(a) for a in argv] + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hmcpgm: error: ") and len(err.splitlines()) == 1, err
    assert err.endswith('pip install "hmcpgm[scale]"'), err
    assert not list(tmp_path.iterdir())
    with pytest.raises(MissingDependencyError, match=r'pip install "hmcpgm\[scale\]"'):
        if module == "distributed":
            rank_chunks(np.zeros((2, 2)), Hierarchy.from_parents([None, 0]), scheduler="local")
        else:
            from hmcpgm.scale import TableWriter

            TableWriter(tmp_path / "x.parquet")


def test_loopy_bp_that_did_not_converge_is_reported_once_for_all_chunks():
    """Each chunk warned on its own: 60 lines for 6,000 objects in chunks of 100, none giving the run's total (a
    review, audit45). Now one warning counts the objects of every chunk; other warnings pass as they are."""
    from hmcpgm import MLPR, make_paper_synthetic
    from hmcpgm.exceptions import ConvergenceWarning
    from hmcpgm.scale import predict_proba

    data = make_paper_synthetic(3000, 0, seed=0)
    model = MLPR(hierarchy=data.hierarchy, version="full", score_model="gaussian", tempering=None,
                 recalibrate=False, engine="loopy", inference_options={"max_iter": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(data.train_scores[:1000], data.train_labels[:1000])
    scores = data.train_scores[1000:1250]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        whole = model.predict_proba(scores)
        chunked = predict_proba(model, scores, chunk_size=60)
    np.testing.assert_array_equal(chunked, whole)
    loopy = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(loopy) == 2 and loopy[0] == loopy[1]  # the whole run's count, as one call gives it
    assert loopy[0].startswith("loopy belief propagation did not converge for 250 of 250 objects within max_iter=1")


def _loopy_on_some_chunks(key, payload):
    from hmcpgm.exceptions import ConvergenceWarning
    from hmcpgm.inference._loopy import unconverged_warning

    if key % 2:  # the odd chunks did not converge: half of their objects
        warnings.warn(unconverged_warning(len(payload) // 2, len(payload), 6, 0.01 * key, 1e-9), ConvergenceWarning,
                      stacklevel=2)
    warnings.warn(f"chunk {key} read", UserWarning, stacklevel=2)
    return payload


def test_the_one_loopy_warning_counts_every_chunk_and_is_given_when_the_results_are_left():
    """A review of the tally (audit46): the chunks that converged were left out of the total ('5 of 5' where one
    call says '5 of 55'), and a loop left early lost the warning."""
    from hmcpgm.exceptions import ConvergenceWarning
    from hmcpgm.scale._execute import ordered_map

    items = [(k, list(range(10 * (k + 1)))) for k in range(4)]  # chunks of 10, 20, 30, 40 objects
    for size, stop, want in [(len, 4, "for 30 of 100 objects"), (None, 4, "for 30 of 60 objects"),
                             (len, 2, "for 10 of 30 objects")]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n, got in enumerate(ordered_map(_loopy_on_some_chunks, items, size=size), 1):
                assert got == items[n - 1][1]
                if n == stop:
                    break
        loopy = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
        others = [str(w.message) for w in caught if not issubclass(w.category, ConvergenceWarning)]
        assert len(loopy) == 1 and f"did not converge {want} within max_iter=6" in loopy[0]
        assert others == [f"chunk {k} read" for k in range(stop)]
