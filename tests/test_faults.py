"""Faults: nothing lost or mixed up when runs are killed, disks fill, runs collide or files are damaged.

Each case runs the command line (in-process, or as ``python -m hmcpgm`` in a
subprocess where a signal or a resource limit is involved) and checks that the
outputs are either complete and right, or untouched with one ``hmcpgm:`` line on
standard error.
"""

import contextlib
import functools
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ctrl_c import with_ctrl_c_at_call

from hmcpgm import InputError, make_paper_synthetic
from hmcpgm.cli import main
from hmcpgm.io import write_hierarchy, write_matrix
from hmcpgm.persist import load_model, save_model

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    data = make_paper_synthetic(n_train=1500, n_test=20000, seed=4)
    paths = {name: d / f"{name}.csv" for name in ("hierarchy", "scores", "labels", "new")}
    write_hierarchy(data.hierarchy, paths["hierarchy"])
    write_matrix(paths["scores"], data.train_scores, data.hierarchy)
    write_matrix(paths["labels"], data.train_labels, data.hierarchy)
    ids = [f"g{i}" for i in range(len(data.test_scores))]
    write_matrix(paths["new"], data.test_scores, data.hierarchy, ids=ids, id_column="gene")
    write_matrix(d / "small.csv", data.test_scores[:300], data.hierarchy, ids=ids[:300], id_column="gene")
    paths["small"] = d / "small.csv"
    for name, matrix in (("small_scores", data.train_scores[:300]), ("small_labels", data.train_labels[:300])):
        paths[name] = d / f"{name}.csv"
        write_matrix(paths[name], matrix, data.hierarchy)
    paths["model"] = d / "model.npz"
    assert main(["fit", *(str(paths[n]) for n in ("scores", "labels", "hierarchy")), "-o", str(paths["model"]),
                 "--quiet", "--tempering", "none", "--score-model", "lpr"]) == 0
    paths["dir"] = d
    return paths


def _one_error_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hmcpgm: error: "), err
    return lines[0]


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _cli(*args, **kwargs):
    """``python -m hmcpgm ARGS`` in a subprocess running this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "hmcpgm", *map(str, args)], env=env, capture_output=True,
                          text=True, **kwargs)


def _popen(*args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "hmcpgm", *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def _leftovers(folder):
    return [p.name for p in Path(folder).iterdir() if p.name.endswith(".hmcpgm-part")]


# ---------------------------------------------------------------------- -o onto an input, or onto another output
def _spellings(tmp_path, target):
    """Several names of ``target``: itself, through a folder and '..', a symlink, a hard link."""
    (tmp_path / "sub").mkdir(exist_ok=True)
    link = tmp_path / f"link-{target.name}"
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    hard = tmp_path / f"hard-{target.name}"
    hard.unlink(missing_ok=True)
    os.link(target, hard)
    return [str(target), str(target.parent / "sub" / ".." / target.name), str(link), str(hard)]


@pytest.mark.parametrize("chunked", [False, True])
def test_output_onto_an_input_is_refused(files, tmp_path, capsys, chunked):
    scores = tmp_path / "s.csv"
    scores.write_bytes(files["small"].read_bytes())
    model = tmp_path / "m.npz"
    model.write_bytes(files["model"].read_bytes())
    before = {p: _digest(p) for p in (scores, model)}
    extra = ["--chunk-size", "100"] if chunked else []
    for spelling in _spellings(tmp_path, scores):
        assert main(["predict", str(model), str(scores), "-o", spelling, "--quiet", *extra]) == 2
        assert "is the scores file" in _one_error_line(capsys.readouterr().err)
        assert main(["rank", str(scores), str(model), "-o", spelling, "--quiet", *extra]) == 2
        assert "is the values file" in _one_error_line(capsys.readouterr().err)
    for spelling in _spellings(tmp_path, model):
        assert main(["rank", str(scores), str(model), "-o", spelling, "--quiet", *extra]) == 2
        assert "is the hierarchy or model file" in _one_error_line(capsys.readouterr().err)
        assert main(["predict", str(model), str(scores), "-o", spelling, "--quiet", *extra]) == 2
        _one_error_line(capsys.readouterr().err)
    assert {p: _digest(p) for p in (scores, model)} == before


def test_fit_output_onto_its_training_files_is_refused(files, tmp_path, capsys):
    for name in ("scores", "labels", "hierarchy"):
        copy = tmp_path / f"{name}.csv"
        copy.write_bytes(files[name].read_bytes())
    before = _digest(tmp_path / "labels.csv")
    args = ["fit", *(str(tmp_path / f"{n}.csv") for n in ("scores", "labels", "hierarchy")), "--quiet"]
    assert main([*args, "-o", str(tmp_path / "sub" / ".." / "labels.csv")]) == 2
    assert "is the labels file" in _one_error_line(capsys.readouterr().err)
    assert _digest(tmp_path / "labels.csv") == before


def test_two_outputs_onto_one_file_are_refused(files, tmp_path, capsys):
    out = tmp_path / "x.csv"
    out.write_text("old")
    for other in (str(out), str(tmp_path / "." / "x.csv")):
        assert main(["predict", str(files["model"]), str(files["small"]), "-o", str(out), "--decisions", other,
                     "--id-column", "gene", "--quiet"]) == 2
        assert "are the same file" in _one_error_line(capsys.readouterr().err)
    assert out.read_text() == "old"
    # /dev/null twice is fine: streams are written through, not replaced
    assert main(["predict", str(files["model"]), str(files["small"]), "-o", os.devnull, "--decisions", os.devnull,
                 "--id-column", "gene", "--quiet"]) == 0


# ---------------------------------------------------------------------- streams: -, pipes, devices
def test_dash_reads_stdin_and_writes_stdout(files, tmp_path):
    expected = tmp_path / "expected.csv"
    assert main(["predict", str(files["model"]), str(files["small"]), "-o", str(expected), "--id-column", "gene",
                 "--quiet"]) == 0
    for extra in ([], ["--chunk-size", "70"]):
        run = _cli("predict", files["model"], "-", "-o", "-", "--id-column", "gene", "--quiet", *extra,
                   input=files["small"].read_text())
        assert run.returncode == 0, run.stderr
        assert run.stdout == expected.read_text()  # data only: the summary line went to stderr
        assert "mLPRs of 300 objects" in run.stderr


def test_dev_stdout_is_standard_output_written_through(files, tmp_path):
    # -o /dev/stdout with '>> log' followed /proc/self/fd/1 to the log file and replaced it (its earlier lines
    # lost), and the summary line went into the data of a pipe
    expected = tmp_path / "expected.csv"
    assert main(["predict", str(files["model"]), str(files["small"]), "-o", str(expected), "--id-column", "gene",
                 "--quiet"]) == 0
    log = tmp_path / "log.txt"
    log.write_text("an earlier line\n")
    with open(log, "a") as fh:
        run = subprocess.run([sys.executable, "-m", "hmcpgm", "predict", str(files["model"]), str(files["small"]),
                              "-o", "/dev/stdout", "--id-column", "gene"], stdout=fh, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert log.read_text() == "an earlier line\n" + expected.read_text()
    assert "mLPRs of 300 objects" in run.stderr and not _leftovers(tmp_path)


def test_two_outputs_on_standard_output_are_refused(files, capsys):
    for out in ("-", "/dev/stdout"):
        assert main(["predict", str(files["model"]), str(files["small"]), "-o", out, "--decisions", "-",
                     "--id-column", "gene", "--quiet"]) == 2
        assert "-o and --decisions are both standard output" in _one_error_line(capsys.readouterr().err)
    # the one check of outputs, so the Python front door refuses it too
    from hmcpgm.persist import load_model
    from hmcpgm.scale import predict_files

    with pytest.raises(InputError, match="output and decisions are both standard output"):
        predict_files(load_model(files["model"]), files["small"], "-", decisions="-", id_column="gene")


def test_symlink_to_a_pipe_is_written_through(files, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "out.csv"
    link.symlink_to(fifo)
    with open(tmp_path / "got.csv", "wb") as got:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=got)
        run = _cli("predict", files["model"], files["small"], "-o", link, "--chunk-size", "100", "--quiet",
                   "--id-column", "gene")
        reader.wait(timeout=60)
    got = (tmp_path / "got.csv").read_text()
    assert run.returncode == 0, run.stderr
    assert link.is_symlink() and os.readlink(link) == str(fifo)
    assert len(got.splitlines()) == 301
    assert not _leftovers(tmp_path)


def test_symlink_to_a_file_keeps_the_link(files, tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert main(["predict", str(files["model"]), str(files["small"]), "-o", str(link), "--quiet",
                 "--id-column", "gene"]) == 0
    assert link.is_symlink() and len(real.read_text().splitlines()) == 301


# ---------------------------------------------------------------------- failures while writing
def _limited(limit):
    """A preexec_fn: files may grow to ``limit`` bytes; beyond, write() fails with EFBIG (a full disk)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("extra", [[], ["--chunk-size", "500"], ["--decisions", "DEC"]])
def test_full_disk_leaves_the_old_output(files, tmp_path, extra):
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    dec = tmp_path / "dec.csv"
    dec.write_text("the old decisions\n")
    extra = [str(dec) if e == "DEC" else e for e in extra]
    run = _cli("predict", files["model"], files["small"], "-o", out, "--id-column", "gene", "--quiet", *extra,
               preexec_fn=_limited(20_000))
    assert run.returncode == 2
    assert "File too large" in _one_error_line(run.stderr)
    assert out.read_text() == "the old output\n" and dec.read_text() == "the old decisions\n"
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("failing", ["out", "dec"])
@pytest.mark.parametrize("chunk", ["40", "1000"])
def test_a_full_disk_at_the_last_sync_leaves_both_outputs_old(files, tmp_path, monkeypatch, failing, chunk):
    # -o was put in place before --decisions was synced: a disk that filled then left new mLPRs beside old
    # decisions. Now both are synced before either is renamed.
    import errno

    out, dec = tmp_path / "out.csv", tmp_path / "dec.csv"
    out.write_text("the old output\n")
    dec.write_text("the old decisions\n")
    real_fsync = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path / f".{failing}.csv")):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    args = ["predict", str(files["model"]), str(files["small"]), "-o", str(out), "--decisions", str(dec),
            "--id-column", "gene", "--quiet", "--chunk-size", chunk]
    assert main(args) == 2
    assert out.read_text() == "the old output\n" and dec.read_text() == "the old decisions\n"
    assert not _leftovers(tmp_path)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert main(args) == 0
    assert len(out.read_text().splitlines()) == len(dec.read_text().splitlines()) == 301


def test_ctrl_c_while_outputs_are_renamed_puts_both_in_place(files, tmp_path, monkeypatch):
    # the renames of -o and --decisions are not cut between the two: a signal there is held until both are done
    out, dec = tmp_path / "out.csv", tmp_path / "dec.csv"
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # delivered before the next line of Python
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    status = main(["predict", str(files["model"]), str(files["small"]), "-o", str(out), "--decisions", str(dec),
                   "--id-column", "gene", "--quiet"])
    # both renamed, then the held Ctrl-C ends the run, as one after its last output is committed does
    assert status == 130 and len(calls) == 2, (status, calls)
    assert len(out.read_text().splitlines()) == len(dec.read_text().splitlines()) == 301
    assert not _leftovers(tmp_path)


def test_predict_files_called_from_python_holds_ctrl_c_until_both_outputs_are_in_place(files, tmp_path,
                                                                                        monkeypatch):
    # outside the command line SIGINT has Python's own handler: a Ctrl-C after -o's rename left it new beside
    # the old --decisions (a review, audit40); it is now raised once both are in place
    from hmcpgm.scale import predict_files

    out, dec = tmp_path / "out.csv", tmp_path / "dec.csv"
    dec.write_text("the old decisions\n")
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        predict_files(load_model(files["model"]), files["small"], out, decisions=dec, id_column="gene")
    assert len(calls) == 2
    assert len(out.read_text().splitlines()) == len(dec.read_text().splitlines()) == 301
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_full_disk_at_example_s_last_file_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    # the five files were written one after another: a failure at the last left four new files beside an old one
    import errno

    folder = tmp_path / "ex"
    folder.mkdir()
    for name in ("hierarchy.csv", "new_labels.csv"):
        (folder / name).write_text("old\n")
    real_fsync = os.fsync

    def fsync(fd):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".new_labels.csv"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main(["example", str(folder), "--n-train", "1000", "--n-new", "20"]) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["hierarchy.csv", "new_labels.csv"]
    assert (folder / "hierarchy.csv").read_text() == "old\n"
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert main(["example", str(folder), "--n-train", "1000", "--n-new", "20"]) == 0
    assert len((folder / "new_labels.csv").read_text().splitlines()) == 21


def test_outputs_that_are_one_file_by_a_link_are_refused_before_any_is_written(tmp_path, capsys):
    """audit57: example and demo --csv wrote their outputs together, but two of them linked to one file gave the
    new labels to train_labels.csv (exit 0, the training labels lost); one table of demo was lost alike."""
    folder = tmp_path / "ex"
    folder.mkdir()
    (folder / "train_labels.csv").write_text("old\n")
    (folder / "new_labels.csv").symlink_to("train_labels.csv")
    assert main(["example", str(folder), "--n-train", "1000", "--n-new", "20"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "train_labels.csv" in line and "new_labels.csv" in line and "are the same file" in line
    assert sorted(p.name for p in folder.iterdir()) == ["new_labels.csv", "train_labels.csv"]
    assert (folder / "train_labels.csv").read_text() == "old\n"
    tables = tmp_path / "dm"
    tables.mkdir()
    (tables / "precision.csv").write_text("old\n")
    (tables / "recall.csv").symlink_to("precision.csv")
    assert main(["demo", "--n-train", "1000", "--n-test", "200", "--quiet", "--csv", str(tables)]) == 2
    assert "--csv's recall.csv" in _one_error_line(capsys.readouterr().err)
    assert (tables / "precision.csv").read_text() == "old\n"


def test_a_full_disk_writing_several_outputs_names_their_folder(tmp_path):
    """audit57: 'hmcpgm: error: [Errno 27] File too large' named no file when example's outputs filled the disk."""
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # noqa: E731
    run = _cli("example", tmp_path / "ex", "--n-train", "1000", "--n-new", "20", preexec_fn=limit)
    assert run.returncode == 2
    assert _one_error_line(run.stderr) == f"hmcpgm: error: File too large: {str(tmp_path / 'ex')!r}"


def test_an_output_named_by_a_descriptor_is_written_through_it_and_standard_input_is_no_output(files, tmp_path):
    """audit57: -o /dev/stderr (or /dev//stdout, /dev/fd/2) with standard error appended to a log replaced the
    log by the output (its earlier lines lost); -o onto the file standard input (-) was redirected from replaced
    that input."""
    from hmcpgm.io import read_hierarchy

    hierarchy = files["hierarchy"]
    h = read_hierarchy(hierarchy)
    values = tmp_path / "values.csv"
    write_matrix(values, np.random.default_rng(0).random((30, h.n_classes)), h)
    for name, stream in [("/dev/stderr", "stderr"), ("/dev/fd/2", "stderr"), ("/dev//stdout", "stdout")]:
        log = tmp_path / "log.txt"
        log.write_text("PREVIOUS\n")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        other = "stdout" if stream == "stderr" else "stderr"
        with open(log, "a") as appended:
            run = subprocess.run([sys.executable, "-m", "hmcpgm", "rank", str(values), str(hierarchy), "-o", name,
                                  "--quiet"], env=env, text=True, **{stream: appended, other: subprocess.PIPE})
        assert run.returncode == 0, name
        text = log.read_text().splitlines()
        assert text[0] == "PREVIOUS" and text[1].startswith("rank,") and len(text) == 2 + 30 * h.n_classes, name
    before = _digest(values)
    with open(values) as given:
        run = _cli("rank", "-", hierarchy, "-o", values, "--quiet", stdin=given)
    assert run.returncode == 2 and "read from standard input (-)" in _one_error_line(run.stderr)
    assert _digest(values) == before


def test_example_leaves_every_file_when_one_target_is_a_folder(tmp_path):
    # the renames ran until the one onto a folder failed: four files replaced, one not (a review, audit43)
    folder = tmp_path / "ex"
    (folder / "new_labels.csv").mkdir(parents=True)
    (folder / "hierarchy.csv").write_text("old\n")
    assert main(["example", str(folder), "--n-train", "1000", "--n-new", "20"]) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["hierarchy.csv", "new_labels.csv"]
    assert (folder / "hierarchy.csv").read_text() == "old\n"


def test_an_aborted_output_cannot_be_committed(tmp_path):
    from hmcpgm._atomic import AtomicFile

    target = tmp_path / "t.txt"
    out = AtomicFile(target)
    out.file.write("new")
    out.finish()
    out.abort()
    with pytest.raises(ValueError):  # it returned as if the file had been put in place
        out.commit()
    assert not target.exists() and not _leftovers(tmp_path)


def test_full_disk_keeps_the_old_model_and_ranking(files, tmp_path):
    model = tmp_path / "m.npz"
    model.write_bytes(b"old model")
    run = _cli("fit", files["scores"], files["labels"], files["hierarchy"], "-o", model, "--quiet",
               "--tempering", "none", "--score-model", "lpr", preexec_fn=_limited(4_000))
    assert run.returncode == 2, run.stderr
    _one_error_line(run.stderr)
    assert model.read_bytes() == b"old model"
    ranking = tmp_path / "r.csv"
    ranking.write_text("old ranking")
    run = _cli("rank", files["small"], files["model"], "-o", ranking, "--quiet", "--id-column", "gene",
               preexec_fn=_limited(20_000))
    assert run.returncode == 2
    _one_error_line(run.stderr)
    assert ranking.read_text() == "old ranking"
    assert not _leftovers(tmp_path)


def _wait_for_part(folder, proc, timeout=120):
    """Poll until a run has a temporary output beside its target (True) or has ended (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _leftovers(folder):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--chunk-size", "1000"], []])
def test_kill_9_while_writing_leaves_the_old_output(files, tmp_path, extra):
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    proc = _popen("predict", files["model"], files["new"], "-o", out, "--id-column", "gene", "--quiet", *extra)
    seen = _wait_for_part(tmp_path, proc)
    proc.kill()
    proc.communicate()
    if not seen:
        pytest.skip("the run ended before it could be killed mid-write")
    assert out.read_text() == "the old output\n"


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--chunk-size", "1000"], []])
@pytest.mark.parametrize(("stop", "message"), [
    (signal.SIGINT, "hmcpgm: interrupted"),  # Ctrl-C
    (signal.SIGTERM, "hmcpgm: stopped by SIGTERM"),  # kill, timeout, a cancelled cluster job
    (getattr(signal, "SIGHUP", None), "hmcpgm: stopped by SIGHUP"),  # the terminal closed
])
def test_ctrl_c_prints_one_line_and_leaves_the_old_output(files, tmp_path, extra, stop, message):
    """Each signal that stops a run: one line, the shell's status 128 + signal, the old output, nothing beside.
    (SIGTERM and SIGHUP used to end the process on the spot, leaving the half-written temporary file.)"""
    if stop is None:
        pytest.skip("no SIGHUP here")
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    proc = _popen("predict", files["model"], files["new"], "-o", out, "--id-column", "gene", "--quiet", *extra)
    seen = _wait_for_part(tmp_path, proc)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=120)
    if not seen:
        pytest.skip("the run ended before it could be interrupted mid-write")
    assert proc.returncode == 128 + stop, err
    assert err.strip() == message
    assert out.read_text() == "the old output\n"
    assert not _leftovers(tmp_path)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP here")
def test_a_signal_the_process_ignores_stays_ignored():
    # nohup ignores SIGHUP (a shell's background job SIGINT): the run installed its own handler over that,
    # and 'nohup hmcpgm ... &' died when the terminal closed
    from hmcpgm._interrupt import ctrl_c_recorded

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with ctrl_c_recorded():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)  # ignored: nothing raised, nothing recorded
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


def test_a_sigterm_while_the_local_cluster_starts_is_raised_once_it_is_up_and_closes_it(monkeypatch):
    """SIGTERM inside dask's LocalCluster start left a half-started cluster, whose exit-time close printed a long
    traceback after 'hmcpgm: stopped by SIGTERM' (a review, audit33). The signal now waits for the start to end;
    then the cluster is closed and the stop raised."""
    distributed = pytest.importorskip("distributed")
    from hmcpgm._interrupt import ctrl_c_recorded, interrupted_by
    from hmcpgm.scale import open_client

    events = []

    class Cluster:  # a LocalCluster that gets SIGTERM in the middle of its start
        def __init__(self, **options):
            os.kill(os.getpid(), signal.SIGTERM)
            events.append("started")  # the start runs to its end

        def close(self):
            events.append("closed")

    class NoClient:
        def __init__(self, cluster):
            raise AssertionError("no client is made for a run that was stopped")

    monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(distributed, "Client", NoClient)
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_recorded():
            open_client("local", n_workers=1)
    assert events == ["started", "closed"]
    assert interrupted_by() == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # every handler restored


def test_an_output_name_near_the_limit_is_written(files, tmp_path, capsys):
    """The temporary name beside it adds 26 characters: cut to fit instead of failing once the work is done."""
    from hmcpgm._atomic import atomic_write

    out = tmp_path / ("a" * 240 + ".csv")  # 244 bytes: a legal name on file systems of 255
    with atomic_write(out) as fh:
        fh.write("whole\n")
    assert out.read_text() == "whole\n" and not _leftovers(tmp_path)
    out = tmp_path / ("\u00e9" * 120 + ".csv")  # 244 bytes in UTF-8: the cut keeps whole characters
    with atomic_write(out) as fh:
        fh.write("whole\n")
    assert out.read_text() == "whole\n" and not _leftovers(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--chunk-size", "2000"], []])
def test_two_runs_to_one_output_leave_one_whole_file(files, tmp_path, extra):
    out = tmp_path / "out.csv"
    expected = tmp_path / "expected.csv"
    assert main(["predict", str(files["model"]), str(files["new"]), "-o", str(expected), "--id-column", "gene",
                 "--quiet"]) == 0
    runs = [_popen("predict", files["model"], files["new"], "-o", out, "--id-column", "gene", "--quiet", *extra)
            for _ in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
    assert out.read_text() == expected.read_text()
    assert not _leftovers(tmp_path)


# ---------------------------------------------------------------------- damaged model files
def _reseal(raw):
    """Re-seal hand-made model bytes the way save_model does (a hostile file passes the checksum)."""
    prefix = b"hmcpgm-sha256:"
    buffer = io.BytesIO(raw)
    with zipfile.ZipFile(buffer, "a") as zf:
        zf.comment = prefix + b"0" * 64
    body = buffer.getvalue()[:-(len(prefix) + 64)]
    return body + prefix + hashlib.sha256(body).hexdigest().encode()


def test_every_flipped_byte_is_one_error(files, tmp_path):
    raw = files["model"].read_bytes()
    offsets = np.unique(np.linspace(0, len(raw) - 1, 400).astype(int))
    for offset in offsets:
        damaged = bytearray(raw)
        damaged[offset] ^= 0x20
        path = tmp_path / "flipped.npz"
        path.write_bytes(bytes(damaged))
        with pytest.raises((InputError, FileNotFoundError)) as exc:
            load_model(path)
        assert len(str(exc.value).splitlines()) == 1, offset


def test_flipped_bytes_in_a_file_without_seal_never_crash(files, tmp_path):
    """A model saved before the seal: a flipped byte is an error line, or (zip metadata) changes nothing."""
    raw = files["model"].read_bytes()[:-78]
    unsealed = raw[:-2] + b"\x00\x00"  # the end record's comment length back to 0
    model = load_model(_write(tmp_path / "unsealed.npz", unsealed))
    s = np.random.default_rng(0).normal(size=(5, model.hierarchy_.n_classes))
    reference = model.predict_proba(s)
    for offset in np.unique(np.linspace(0, len(unsealed) - 1, 400).astype(int)):
        damaged = bytearray(unsealed)
        damaged[offset] ^= 0x01
        try:
            again = load_model(_write(tmp_path / "flipped.npz", bytes(damaged)))
        except InputError as exc:
            assert len(str(exc).splitlines()) == 1
        else:
            np.testing.assert_array_equal(again.predict_proba(s), reference)


def _write(path, raw):
    path.write_bytes(raw)
    return path


def test_truncations_are_one_error(files, tmp_path):
    raw = files["model"].read_bytes()
    for size in (0, 1, 30, len(raw) // 3, len(raw) // 2, len(raw) - 100, len(raw) - 1):
        with pytest.raises(InputError) as exc:
            load_model(_write(tmp_path / "cut.npz", raw[:size]))
        assert len(str(exc.value).splitlines()) == 1


@pytest.mark.parametrize("sealed", [True, False])
def test_a_huge_array_header_is_refused_before_allocating(files, tmp_path, sealed):
    with np.load(files["model"]) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, a in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, a, allow_pickle=False)
            zf.writestr(f"{name}.npy", header.getvalue() + a.tobytes() if name == "theta" else member.getvalue())
    raw = _reseal(buffer.getvalue()) if sealed else buffer.getvalue()
    with pytest.raises(InputError, match="huge.npz") as exc:
        load_model(_write(tmp_path / "huge.npz", raw))
    assert len(str(exc.value).splitlines()) == 1


def test_a_damaged_model_is_one_line_on_the_command_line(files, tmp_path):
    raw = bytearray(files["model"].read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    bad = _write(tmp_path / "bad.npz", bytes(raw))
    run = _cli("predict", bad, files["small"], "-o", tmp_path / "out.csv", "--quiet")
    assert run.returncode == 2
    assert "bad.npz is damaged" in _one_error_line(run.stderr)


def test_save_model_replaces_whole_or_not_at_all(files, tmp_path, monkeypatch):
    model = load_model(files["model"])
    path = tmp_path / "m.npz"
    path.write_bytes(b"old")
    original = np.savez_compressed

    def fails(*args, **kwargs):
        original(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", fails)
    with pytest.raises(KeyboardInterrupt):
        save_model(model, path)
    monkeypatch.undo()
    assert path.read_bytes() == b"old" and not _leftovers(tmp_path)
    save_model(model, path)
    assert load_model(path).get_params() == model.get_params()


def test_the_seal_covers_the_whole_file(files):
    raw = files["model"].read_bytes()
    assert raw[-78:-64] == b"hmcpgm-sha256:"
    assert hashlib.sha256(raw[:-78]).hexdigest().encode() == raw[-64:]
    with zipfile.ZipFile(files["model"]) as zf:  # still a plain .npz archive
        assert json.loads(str(np.load(zf.open("meta.npy")))).get("format") == "hmcpgm-model"
    assert pd.read_csv(files["small"]).shape == (300, 26)


# ---------------------------------------------------------------------- numbers
def _deep_dag_problem(seed=1, k=60, m=2000, spread=5.0):
    """A random 60-class DAG with strong evidence: the sparse junction tree's products round past 1."""
    sys.path.insert(0, str(ROOT / "tests"))
    from strategies import from_parent_lists

    rng = np.random.default_rng(seed)
    parents = [[]] + [sorted(set(rng.integers(0, j, size=rng.integers(1, 3)).tolist())) for j in range(1, k)]
    h = from_parent_lists(parents)
    theta = rng.uniform(0.3, 0.99, size=k)
    theta[0] = 0.999
    return h, theta, np.exp(rng.normal(0, spread, size=(m, k, 2)))


def test_sparse_junction_mlprs_stay_probabilities():
    from hmcpgm import LabelNetwork, bayes_cutoff, hier_rank, mlpr_from_likelihoods

    h, theta, lik = _deep_dag_problem()
    p = mlpr_from_likelihoods(LabelNetwork(h, theta), lik, engine="sparse")
    assert p.min() >= 0.0 and p.max() <= 1.0
    assert bayes_cutoff(hier_rank(p[:200], h), p[:200], alpha=0.2).rank >= 0  # accepted as probabilities


def test_fdr_message_shows_the_value_past_1(files, tmp_path, capsys):
    values = pd.read_csv(files["small"])
    values.iloc[3, 5] = 1.0000000000000009
    path = tmp_path / "v.csv"
    values.to_csv(path, index=False, float_format="%.17g")
    for extra in ([], ["--chunk-size", "100"]):
        assert main(["rank", str(path), str(files["model"]), "-o", str(tmp_path / "r.csv"), "--fdr", "0.1",
                     "--id-column", "gene", "--quiet", *extra]) == 2
        assert "to 1.0000000000000009" in _one_error_line(capsys.readouterr().err)


def _ctrl_c_at_the_next_collection():
    """A gc callback that presses Ctrl-C once: Python swallows the KeyboardInterrupt raised inside it."""
    import gc

    fired = []

    def callback(phase, info):
        if phase == "start" and not fired:
            fired.append(True)
            signal.raise_signal(signal.SIGINT)

    gc.callbacks.append(callback)
    return fired, lambda: gc.callbacks.remove(callback)


@pytest.mark.parametrize("command", ["predict", "rank"])
def test_ctrl_c_swallowed_by_a_gc_callback_still_interrupts(files, tmp_path, capsys, command):
    """dask's distributed watches every collection; a Ctrl-C landing there must not be lost (a CI failure)."""
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    args = (["predict", files["model"], files["small"]] if command == "predict"
            else ["rank", files["small"], files["model"], "--fdr", "0.1"])
    fired, disarm = _ctrl_c_at_the_next_collection()
    handler, hook = signal.getsignal(signal.SIGINT), sys.unraisablehook
    try:
        status = main([*map(str, args), "-o", str(out), "--id-column", "gene", "--quiet"])
    finally:
        disarm()
    assert fired  # the interrupt did land in a collection
    assert status == 130
    assert capsys.readouterr().err.strip() == "hmcpgm: interrupted"
    assert out.read_text() == "the old output\n"
    assert not _leftovers(tmp_path)
    assert signal.getsignal(signal.SIGINT) is handler and sys.unraisablehook is hook  # restored


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # Ctrl-C at the call of __del__
def test_ctrl_c_at_any_call_of_opening_an_output_leaves_no_file(tmp_path):
    """The temporary file is named before it exists: no call of its creation can leave it behind."""
    from hmcpgm._atomic import AtomicFile

    def open_and_drop():
        AtomicFile(tmp_path / "out.csv").abort()

    _, total = with_ctrl_c_at_call(open_and_drop, 0)
    for n in range(1, total + 1):
        with contextlib.suppress(KeyboardInterrupt):
            with_ctrl_c_at_call(open_and_drop, n)
        assert not _leftovers(tmp_path), n
    assert total > 5  # the sweep did reach into the creation


def test_ctrl_c_at_any_call_of_spooling_a_stream_leaves_no_copy(tmp_path, monkeypatch):
    """The copy of a stream is named before it exists: no call of making or removing it leaves it behind."""
    from hmcpgm._atomic import spooled

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def spool():
        with spooled(os.devnull) as copy:
            assert os.path.exists(copy)

    _, total = with_ctrl_c_at_call(spool, 0)
    for n in range(1, total + 1):
        with contextlib.suppress(KeyboardInterrupt):
            with_ctrl_c_at_call(spool, n)
        assert not list(tmp_path.iterdir()), n
    assert total > 5


def test_ctrl_c_at_any_call_of_the_recording_never_hangs():
    """Ctrl-C at every call of entering, using and leaving ``ctrl_c_recorded`` (a lock held there hung the handler)."""
    script = f"""
import signal, sys
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}]
from ctrl_c import with_ctrl_c_at_call
from hmcpgm._interrupt import check_interrupt, ctrl_c_recorded
def block():
    with ctrl_c_recorded():
        check_interrupt()
_, total = with_ctrl_c_at_call(block, 0)
for n in range(1, total + 1):
    try:
        with_ctrl_c_at_call(block, n)
    except KeyboardInterrupt:
        pass
    signal.signal(signal.SIGINT, signal.default_int_handler)
with ctrl_c_recorded():
    pass
print("done", total)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("done"), done.stderr
    assert int(done.stdout.split()[1]) > 5  # the sweep did reach into entering and leaving


@pytest.mark.slow
@pytest.mark.parametrize("command", ["predict", "rank", "fit"])
def test_ctrl_c_at_any_call_of_a_run_interrupts_it(files, tmp_path, capsys, command):
    """Ctrl-C at 150 points spread over a whole run, from reading the arguments to the last message.

    Not timed, so not a race: each run makes the same calls (imports and compilations done by a first run).
    Every one exits 130 with one line, and leaves the old output or a complete new one, nothing beside.
    (It found a hang, a leftover file and, in ``fit``, a Ctrl-C that pandas' ``to_json`` turned into a
    ValueError and whose next call crashed the process.)
    """
    old = b"the old output\n"
    if command == "fit":
        out = tmp_path / "m.npz"
        args = ["fit", files["small_scores"], files["small_labels"], files["hierarchy"], "--tempering", "none",
                "--score-model", "lpr"]
    else:
        out = tmp_path / "out.csv"
        args = (["predict", files["model"], files["small"]] if command == "predict"
                else ["rank", files["small"], files["model"], "--fdr", "0.1"])
        args += ["--id-column", "gene", "--chunk-size", "100"]
    argv = [*map(str, args), "-o", str(out), "--quiet"]
    assert main(argv) == 0
    status, total = with_ctrl_c_at_call(functools.partial(main, argv), 0)
    assert status == 0
    complete = out.read_bytes()
    capsys.readouterr()
    short = 0
    for n in np.unique(np.linspace(2, total, 150).astype(int)):  # 1: the call of main itself
        out.write_bytes(old)
        status, calls = with_ctrl_c_at_call(functools.partial(main, argv), n)
        err = capsys.readouterr().err.strip()
        if calls < n:  # this run ended before its n-th call (the counted run made a few more, seen on CI)
            short += 1
            assert (status, err) == (0, "") and n > 0.99 * total, n
            if command == "fit":
                load_model(out)  # sealed: complete (its cv_results_ seconds differ from the first run's)
            else:
                assert out.read_bytes() == complete, n
            continue
        assert (status, err) == (130, "hmcpgm: interrupted"), n
        if command == "fit" and out.read_bytes() != old:
            load_model(out)  # sealed: complete (its cv_results_ seconds may differ from the first run's)
        else:
            assert out.read_bytes() in (old, complete), n
        assert not _leftovers(tmp_path), n
    assert short <= 2


@pytest.mark.parametrize("turned_into", [InputError, OSError, ValueError])
def test_a_ctrl_c_turned_into_another_error_still_interrupts(files, tmp_path, capsys, monkeypatch, turned_into):
    """C code may turn a Ctrl-C raised inside it into an error of its own (pandas 3.1.1's JSON encoder: ValueError)."""
    import hmcpgm.persist

    def load_model(path):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            raise turned_into("Error calling a callback") from None

    monkeypatch.setattr(hmcpgm.persist, "load_model", load_model)
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    assert main(["predict", str(files["model"]), str(files["small"]), "-o", str(out), "--quiet"]) == 130
    assert capsys.readouterr().err.strip() == "hmcpgm: interrupted"
    assert out.read_text() == "the old output\n"


def test_atomic_write_does_not_commit_after_a_swallowed_ctrl_c(tmp_path):
    import gc

    from hmcpgm._atomic import atomic_write
    from hmcpgm._interrupt import ctrl_c_recorded

    out = tmp_path / "out.txt"
    out.write_text("old")
    with ctrl_c_recorded():
        with pytest.raises(KeyboardInterrupt):
            with atomic_write(out) as fh:
                fh.write("new")
                fired, disarm = _ctrl_c_at_the_next_collection()
                try:
                    gc.collect()  # returns normally: the interrupt was swallowed
                finally:
                    disarm()
                assert fired
    assert out.read_text() == "old"
    with atomic_write(out) as fh:  # outside the block nothing is remembered
        fh.write("new")
    assert out.read_text() == "new"


@pytest.mark.slow
@pytest.mark.parametrize("command", ["predict", "rank"])
def test_ctrl_c_on_a_dask_run_is_one_line(files, tmp_path, command):
    """Ctrl-C at a terminal reaches the whole process group: the workers must stay quiet too."""
    pytest.importorskip("distributed")
    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    values = files["new"]
    if command == "rank":  # 100,000 objects: ranking 20,000 in chunks could end within the wait below
        frame = pd.read_csv(values)
        big = pd.concat([frame] * 5, ignore_index=True)
        big["gene"] = [f"g{i}" for i in range(len(big))]
        values = tmp_path / "values.csv"
        big.to_csv(values, index=False)
    args = (["predict", files["model"], values] if command == "predict"
            else ["rank", values, files["model"], "--fdr", "0.1"])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hmcpgm", *map(str, args), "-o", str(out), "--id-column", "gene",
                             "--chunk-size", "200", "--scheduler", "local", "--quiet"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    psutil = pytest.importorskip("psutil")
    end = time.monotonic() + 120
    while time.monotonic() < end and proc.poll() is None and len(psutil.Process(proc.pid).children()) < 2:
        time.sleep(0.05)  # Ctrl-C while the cluster starts is ignored: wait for its workers
    time.sleep(3)  # chunks are running
    finished = proc.poll() is not None
    if not finished:
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if finished:
        pytest.skip("the run ended before it could be interrupted")
    assert proc.returncode == 130, err
    assert err.strip() == "hmcpgm: interrupted"
    assert out.read_text() == "the old output\n"
    assert not _leftovers(tmp_path)


# ---------------------------------------------------------------------- the estimator's inputs
@pytest.fixture(scope="module")
def small_data():
    return make_paper_synthetic(n_train=1500, n_test=200, seed=6)


def _frames(data, n=None):
    names = [str(c) for c in data.hierarchy.classes]
    index = [f"g{i}" for i in range(len(data.train_scores))]
    return (pd.DataFrame(data.train_scores, columns=names, index=index),
            pd.DataFrame(data.train_labels, columns=names, index=index))


def test_fit_pairs_dataframe_rows_by_index(small_data):
    from hmcpgm import MLPR

    X, Y = _frames(small_data)
    shuffled = Y.sample(frac=1.0, random_state=0)
    params = dict(hierarchy=small_data.hierarchy, score_model="lpr", tempering=None, recalibrate=False)
    new = pd.DataFrame(small_data.test_scores, columns=X.columns)
    a = MLPR(**params).fit(X, Y).predict_proba(new)
    b = MLPR(**params).fit(X, shuffled).predict_proba(new)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(InputError, match="row indexes hold different labels") as exc:
        MLPR(**params).fit(X, Y.rename(index={"g5": "other"}))
    assert len(str(exc.value).splitlines()) == 1
    with pytest.raises(InputError, match="repeats a label"):
        MLPR(**params).fit(X, Y.set_axis(["g0"] * len(Y)))


def test_fit_takes_a_sparse_y(small_data):
    from scipy import sparse

    from hmcpgm import MLPR

    params = dict(hierarchy=small_data.hierarchy, score_model="lpr", tempering=None, recalibrate=False)
    dense = MLPR(**params).fit(small_data.train_scores, small_data.train_labels)
    for kind in (sparse.csr_matrix, sparse.csc_array):
        model = MLPR(**params).fit(small_data.train_scores, kind(small_data.train_labels))
        np.testing.assert_array_equal(model.predict_proba(small_data.test_scores),
                                      dense.predict_proba(small_data.test_scores))


@pytest.mark.parametrize("score_model", ["lpr", "auto"])
def test_huge_training_scores_fit_the_clipped_model_without_warnings(small_data, score_model):
    import warnings

    from hmcpgm import MLPR

    s = small_data.train_scores.copy()
    s[0, 3], s[1, 3], s[5, 7] = 1e308, -1e308, np.finfo(float).max
    params = dict(hierarchy=small_data.hierarchy, score_model=score_model, tempering=None, recalibrate=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        model = MLPR(**params).fit(s, small_data.train_labels)
        got = model.predict_proba(small_data.test_scores)
    clipped = MLPR(**params).fit(np.clip(s, -1e100, 1e100), small_data.train_labels)
    np.testing.assert_array_equal(got, clipped.predict_proba(small_data.test_scores))


def test_save_model_of_a_pipeline_says_what_to_do(small_data, tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from hmcpgm import MLPR

    pipe = make_pipeline(FunctionTransformer(), MLPR(hierarchy=small_data.hierarchy, score_model="lpr",
                                                     tempering=None, recalibrate=False))
    pipe.fit(small_data.train_scores, small_data.train_labels)
    with pytest.raises(InputError, match=r"saves a fitted MLPR only, got a Pipeline.*joblib.*save_model\(pipe\[-1\]"):
        save_model(pipe, tmp_path / "p.npz")
    assert not (tmp_path / "p.npz").exists()
    save_model(pipe[-1], tmp_path / "m.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "m.npz").predict_proba(small_data.test_scores),
                                  pipe.predict_proba(small_data.test_scores))


def test_score_is_the_average_precision_of_the_hierrank_ranking(small_data):
    from sklearn.metrics import average_precision_score
    from sklearn.model_selection import GridSearchCV

    from hmcpgm import MLPR, hier_rank

    model = MLPR(hierarchy=small_data.hierarchy, score_model="lpr", tempering=None, recalibrate=False)
    model.fit(small_data.train_scores, small_data.train_labels)
    ranking = hier_rank(model.predict_proba(small_data.test_scores), small_data.hierarchy)
    # the reference: scikit-learn's AP of the events scored by their (distinct) position in the ranking
    position = np.empty(small_data.test_labels.size)
    position[np.asarray(ranking.order)] = -np.arange(small_data.test_labels.size)
    expected = average_precision_score(small_data.test_labels.ravel(), position)
    assert model.score(small_data.test_scores, small_data.test_labels) == pytest.approx(expected, rel=1e-12)
    search = GridSearchCV(model, {"pseudo_count": [0.5, 5.0]}, cv=2).fit(small_data.train_scores,
                                                                          small_data.train_labels)
    assert 0 < search.best_score_ <= 1


# ---------------------------------------------------------------------- bounded memory: the same rows
def test_a_large_parquet_row_group_read_in_chunks_gives_the_file(tmp_path):
    """One row group much larger than a chunk is read a few columns at a time: same rows, same checks."""
    pytest.importorskip("pyarrow")
    from hmcpgm import Hierarchy
    from hmcpgm.scale import read_matrix_chunks

    h = Hierarchy.from_parents([None, 0, 0, 1, 1, 2])
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(5000, 6)), columns=[str(c) for c in h.classes])
    frame["3"] = rng.integers(0, 5, size=5000)  # an integer column
    frame = frame[["4", "0", "5", "1", "2", "3"]]  # columns not in the hierarchy's order
    frame.insert(2, "gene", [f"g{i}" for i in range(5000)])
    path = tmp_path / "one_group.parquet"
    frame.to_parquet(path, index=False)
    import pyarrow.parquet as pq

    assert pq.ParquetFile(path).num_row_groups == 1
    parts = list(read_matrix_chunks(path, h, "scores", chunk_size=700, id_column="gene"))
    assert [len(v) for _, v in parts] == [700] * 7 + [100]
    np.testing.assert_array_equal(np.concatenate([v for _, v in parts]),
                                  frame[[str(c) for c in h.classes]].to_numpy(dtype=float))
    assert list(np.concatenate([i for i, _ in parts])) == list(frame["gene"])
    frame.loc[4321, "5"] = np.nan
    frame.to_parquet(path, index=False)
    with pytest.raises(InputError, match="row 4322"):
        list(read_matrix_chunks(path, h, "scores", chunk_size=700, id_column="gene"))


def test_a_full_disk_names_the_output(tmp_path, monkeypatch):
    # a write that fails for want of room carries no file name: the command line printed
    # "[Errno 28] No space left on device" (or "[Errno 27] File too large" under ulimit -f), naming nothing
    import errno

    import pandas as pd

    from hmcpgm._atomic import atomic_write
    from hmcpgm.scale._files import TableWriter

    out = tmp_path / "out.csv"
    out.write_text("the old output\n")
    with pytest.raises(OSError) as info:
        with atomic_write(out) as fh:
            fh.write("part")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert info.value.filename == str(out)
    with pytest.raises(OSError) as info:  # another error keeps its own words
        with atomic_write(out) as fh:
            raise OSError(errno.ECONNRESET, "Connection reset")
    assert info.value.filename is None

    def full(self, *args, **kwargs):
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    with pytest.raises(OSError) as info:
        with TableWriter(out) as writer:
            writer.write(pd.DataFrame({"a": [1.0]}))
    assert info.value.filename == str(out)
    assert out.read_text() == "the old output\n" and not _leftovers(tmp_path)


def test_outputs_checked_before_the_work_follow_links_and_let_devices_through(tmp_path, monkeypatch):
    from hmcpgm import InputError
    from hmcpgm.io import check_output

    link = tmp_path / "out.csv"
    link.symlink_to(tmp_path / "missing" / "f.csv")
    with pytest.raises(InputError, match="is a link to .*whose folder .*missing' does not exist"):
        check_output(link, "-o")  # was found only once the work was done, naming a hidden temporary file
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == "/dev" else real(p, mode))
    assert check_output(os.devnull, "-o") == Path(os.devnull)  # a user may not write in /dev: written through


def test_a_full_temporary_folder_is_named_when_the_ranking_spills(tmp_path, monkeypatch):
    # numpy's "50000 requested and 15350 written" named neither the folder nor what to do
    from hmcpgm import InputError
    from hmcpgm.scale._runs import RunStore

    store = RunStore(tmp_path)

    def full(*args, **kwargs):
        raise OSError("50000 requested and 15350 written")

    monkeypatch.setattr(np, "save", full)
    run = np.zeros(5, dtype=[("value", "<f8"), ("event", "<i8")])
    with pytest.raises(InputError, match=r"temporary files in '.*hmcpgm-runs-.*' cannot be written .*TMPDIR"):
        store.put(0, run)
    store.close()
