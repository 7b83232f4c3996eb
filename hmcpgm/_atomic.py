"""Writing output files so that nothing is lost: all of the new file, or the old one untouched.

An output is written into a unique temporary file beside the target (same folder,
so the final rename stays on one file system), flushed and synced to disk, and
renamed over the target (:func:`os.replace`, atomic on POSIX) only once all of it
is written. Any failure before that (an exception, a full disk, Ctrl-C, and on the
command line SIGTERM or SIGHUP, which it handles as Ctrl-C) removes the temporary
file and leaves the target as it was; a ``kill -9`` leaves the target as it was
too (and a hidden ``.NAME.*.hmcpgm-part`` file behind). Two runs
writing one target each write their own temporary file: the last to finish wins,
whole.

Targets that are not regular files are written through, not replaced: ``-``
(standard output), a pipe (FIFO, also behind a symlink) or a character device
(``/dev/null``), and a name of one of the process's open descriptors
(``/dev/stderr``, ``/dev/fd/3``, ``/proc/self/fd/1``: :func:`descriptor_of`),
whatever it is open on (a log file the shell appends to keeps its lines). A
symlink to a regular file keeps the link: its target file is replaced.

:func:`check_distinct` refuses, before any work, an output that is one of the
inputs (under any spelling: ``sub/../s.csv``, a symlink, a hard link) or another
output of the same command.
"""

import contextlib
import errno
import os
import re
import secrets
import stat
import sys
import tempfile
from pathlib import Path

from ._interrupt import check_interrupt, stops_deferred
from .exceptions import InputError

__all__ = ["AtomicFile", "atomic_write", "atomic_writes", "commit_all", "check_distinct", "descriptor_of", "is_stream",
           "same_file", "stdout_stream", "data_on_stdout", "spooled"]

STDOUT = "-"
# as tempfile.mkstemp opens its files: new only, no symlink followed, not inherited, no newline translation
_NEW_FILE = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0))
_reserved_stdout = []


_DESCRIPTOR_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_PATH = re.compile(r"/(?:dev/fd|proc/self/fd|proc/(\d+)/fd)/(\d+)")


def descriptor_of(path):
    """The open file descriptor of this process that ``path`` names, or None.

    ``/dev/stdin``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
    ``/proc/self/fd/N`` and ``/proc/<this process>/fd/N``, in any spelling
    (``/dev//stdout``). Opening such a name anew would truncate a file the
    descriptor is open on (a log the shell appends to): it is written through the
    descriptor instead.

    Examples
    --------
    >>> descriptor_of("/dev//stdout"), descriptor_of("/proc/self/fd/2"), descriptor_of("out.csv")
    (1, 2, None)
    """
    text = str(path)
    if text == STDOUT or not text.startswith("/"):
        return None
    text = "/" + os.path.normpath(text).lstrip("/")  # POSIX keeps a leading "//"
    number = _DESCRIPTOR_NAMES.get(text)
    if number is None:
        match = _DESCRIPTOR_PATH.fullmatch(text)
        if match is None or (match.group(1) is not None and int(match.group(1)) != os.getpid()):
            return None
        number = int(match.group(2))
    try:
        os.fstat(number)
    except OSError:  # not open here: a name like any other
        return None
    return number


def is_stream(path):
    """True when ``path`` is written through rather than replaced: ``-``, a pipe, a character device, or a
    name of an open descriptor (:func:`descriptor_of`).

    Parameters
    ----------
    path : str or Path
        An output path (symlinks are followed).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_stream("-"), is_stream(os.devnull), is_stream("no/such/file.csv")
    (True, True, False)
    """
    if str(path) == STDOUT or descriptor_of(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def stdout_stream():
    """The stream that ``-`` writes to: the process's standard output.

    Inside :func:`data_on_stdout`, this is the standard output as it was on entry
    (while ``sys.stdout`` goes to standard error for messages).
    """
    return _reserved_stdout[-1] if _reserved_stdout else sys.stdout


@contextlib.contextmanager
def data_on_stdout():
    """Keep standard output for data: inside the block, ``print`` goes to standard error."""
    _reserved_stdout.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _reserved_stdout.pop()


def _creation_mode(target):
    """The permission bits a plain ``open(target, "w")`` would leave: the old file's, or 0o666 minus umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _temporary_name(folder, name):
    """A new hidden name beside ``name``: ``.NAME.<12 hex>.hmcpgm-part``, NAME cut to fit the file system's limit.

    A legal output name near the limit (255 bytes on most file systems) must not fail
    when the run ends: the temporary name keeps as much of NAME as fits.

    Examples
    --------
    >>> import os
    >>> len(os.path.basename(_temporary_name(".", "a" * 250 + ".csv"))) <= 255
    True
    """
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or no answer: the common limit
        limit = 255
    suffix = f".{secrets.token_hex(6)}.hmcpgm-part"
    stem = os.fsencode(name)[:max(limit - 1 - len(suffix), 1)].decode("utf-8", errors="ignore")  # whole characters
    return os.path.join(folder, f".{stem}{suffix}")


def name_output(exc, path, temp):
    """An OS error of writing an output names the output the user gave, not our hidden temporary file
    (or nothing: a full disk's ``write``)."""
    if not isinstance(exc, OSError) or not exc.strerror:
        return
    if (exc.filename is not None and exc.filename == temp) or (exc.filename is None and exc.errno in _WRITE_ERRORS):
        exc.filename = str(path)


# a write that failed for want of room: a full disk, a quota, the size limit of ulimit -f
_WRITE_ERRORS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, n))


class AtomicFile:
    """An open output: a temporary file beside ``path`` that :meth:`commit` renames over it.

    Parameters
    ----------
    path : str or Path
        The target. ``-``, a pipe or a character device is written through
        (:func:`is_stream`); a symlink to a file has its target file replaced.
    binary : bool
        Open in binary mode (else text, UTF-8, no newline translation).

    Attributes
    ----------
    file : file object
        Write here.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = os.path.join(d, "out.txt")
    ...     out = AtomicFile(target)
    ...     _ = out.file.write("new")
    ...     before = os.path.exists(target)
    ...     out.commit()
    ...     before, open(target).read(), os.listdir(d)
    (False, 'new', ['out.txt'])
    """

    def __init__(self, path, *, binary=False):
        self.path = path
        self._temp = self._fd = None
        self._finished = False
        mode = "wb" if binary else "w"
        text = {} if binary else {"encoding": "utf-8", "newline": ""}
        if str(path) == STDOUT:
            stream = stdout_stream()
            self.file = stream.buffer if binary else stream
            self._close = False
            return
        if is_stream(path):
            number = descriptor_of(path)
            if number in (1, 2):  # what was printed so far comes first
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    (sys.stdout if number == 1 else sys.stderr).flush()
            # a descriptor written through a copy of it: opening its name anew would truncate the file behind it
            self.file = open(path, mode, **text) if number is None else os.fdopen(os.dup(number), mode, **text)
            self._close = True
            return
        self._target = os.path.realpath(path)
        folder, name = os.path.split(self._target)
        self._close = True
        try:  # the name is kept before the file exists, so a Ctrl-C landing anywhere here still removes it
            while self._fd is None:
                self._temp = _temporary_name(folder, name)
                try:
                    self._fd = os.open(self._temp, _NEW_FILE, 0o600)
                except FileExistsError:  # another run's (or a killed run's) file: never ours to remove
                    self._temp = None
            os.fchmod(self._fd, _creation_mode(self._target))
            self.file = os.fdopen(self._fd, mode, **text)
        except BaseException as exc:
            name_output(exc, path, self._temp)
            self.abort()
            raise

    def __del__(self):
        """An AtomicFile dropped before :meth:`commit` (e.g. by a Ctrl-C before its owner kept it) is aborted."""
        if getattr(self, "_temp", None) is not None:
            self.abort()

    def finish(self):
        """Flush, sync and close the file without putting it in place (what can fail for want of room).

        :meth:`commit` calls it first; :func:`commit_all` calls it on every file of a
        run before any is put in place. A recorded Ctrl-C
        (:func:`~hmcpgm._interrupt.check_interrupt`) or a failure aborts instead.
        """
        if self._finished:
            return
        try:
            check_interrupt()
            self.file.flush()
            if self._temp is not None:
                os.fsync(self.file.fileno())
            if self._close:
                self.file.close()
        except BaseException as exc:
            name_output(exc, self.path, self._temp)
            self.abort()
            raise
        self._finished = True

    def commit(self):
        """Flush, sync and put the file in place (or finish writing through).

        A recorded Ctrl-C (:func:`~hmcpgm._interrupt.check_interrupt`) before the
        file is finished aborts instead.
        """
        self.finish()
        if self._temp is not None:
            try:
                os.replace(self._temp, self._target)
            except BaseException as exc:
                name_output(exc, self.path, self._temp)
                self.abort()
                raise
            self._temp = None
            _sync_folder(os.path.dirname(self._target))

    def abort(self):
        """Drop what was written: the target is left as it was (a later :meth:`commit` raises)."""
        self._finished = False  # a commit after an abort fails on the closed file instead of returning
        if self._close:
            with contextlib.suppress(OSError):
                if hasattr(self, "file"):
                    self.file.close()
                elif self._fd is not None:  # opened, not yet a file object
                    os.close(self._fd)
        if self._temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temp)
            self._temp = None


def _sync_folder(folder):
    """Make the rename itself durable (best effort: not every file system lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit_all(files):
    """Put several outputs of one run in place together: each is finished before any replaces its target.

    A full disk or a Ctrl-C while the files are flushed and synced, or a target that
    is a folder, aborts them all, so no target is replaced. Only then are they renamed, one after the other, with
    Ctrl-C, SIGTERM and SIGHUP held (:func:`~hmcpgm._interrupt.stops_deferred`):
    the renames take no room and are not cut between two outputs. A signal held
    there stays recorded for the next :func:`~hmcpgm._interrupt.check_interrupt`
    on the command line; called from Python, a Ctrl-C held there is raised once
    every file is in place.

    Parameters
    ----------
    files : sequence of AtomicFile
        Open, not yet committed.
    """
    try:
        for f in files:
            f.finish()
        for f in files:  # a rename that would fail is found before any is made: a folder where a file goes
            if f._temp is not None and os.path.isdir(f._target):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(f.path))
    except BaseException:
        for f in files:
            f.abort()
        raise
    with stops_deferred(ctrl_c=True):
        for f in files:
            f.commit()


@contextlib.contextmanager
def atomic_writes(paths, *, binary=False):
    """Write several outputs of one run together: a context manager giving one file object per path.

    Every target is replaced when the block ends normally (:func:`commit_all`: each
    file is finished before any replaces its target) and every one is left as it
    was when the block, or finishing any of the files, ends by an exception (Ctrl-C
    included).

    Parameters
    ----------
    paths : sequence of str or Path
        The targets (see :class:`AtomicFile`), in the order of the file objects.
    binary : bool
        Binary mode (else UTF-8 text without newline translation).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     a, b = os.path.join(d, "a.txt"), os.path.join(d, "b.txt")
    ...     with atomic_writes([a, b]) as (fa, fb):
    ...         _ = fa.write("old a"), fb.write("old b")
    ...     try:
    ...         with atomic_writes([a, b]) as (fa, fb):
    ...             _ = fa.write("new a")
    ...             raise KeyboardInterrupt  # before b is written
    ...     except KeyboardInterrupt:
    ...         pass
    ...     open(a).read(), open(b).read(), sorted(os.listdir(d))
    ('old a', 'old b', ['a.txt', 'b.txt'])
    """
    paths = list(paths)
    _refuse_one_file_twice([("the output", p) for p in paths if not is_stream(p)])  # a link: one would be lost
    files = []
    try:
        for path in paths:
            files.append(AtomicFile(path, binary=binary))
        yield [f.file for f in files]
    except BaseException as exc:
        if len(files) == 1:  # a failed write names its output
            name_output(exc, files[0].path, files[0]._temp)
        elif files:  # of several, which one failed is not known: their folder, when they share one
            folders = {os.path.dirname(str(f.path)) or "." for f in files if str(f.path) != STDOUT}
            if len(folders) == 1:
                name_output(exc, folders.pop(), None)
        for f in files:
            f.abort()
        raise
    commit_all(files)


@contextlib.contextmanager
def atomic_write(path, *, binary=False):
    """Write ``path`` all at once: a context manager giving the file object of an :class:`AtomicFile`.

    The target is replaced when the block ends normally and left untouched when it
    ends by an exception (Ctrl-C included): :func:`atomic_writes` of one path.

    Parameters
    ----------
    path : str or Path
        The target (see :class:`AtomicFile`).
    binary : bool
        Binary mode (else UTF-8 text without newline translation).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     target = os.path.join(d, "out.txt")
    ...     with atomic_write(target) as fh:
    ...         _ = fh.write("old")
    ...     try:
    ...         with atomic_write(target) as fh:
    ...             _ = fh.write("half of the new")
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     open(target).read(), sorted(os.listdir(d))
    ('old', ['out.txt'])
    """
    with atomic_writes([path], binary=binary) as (fh,):
        yield fh


def same_file(a, b):
    """Whether the paths ``a`` and ``b`` name one file (one real path, or one inode: a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_standard_input(path):
    """Whether ``path`` is the file standard input reads (``-`` redirected from it)."""
    try:
        return os.path.samestat(os.fstat(0), os.stat(path))
    except (OSError, ValueError):
        return False


def _within(path, folder):
    """Whether ``path`` lies in the folder ``folder`` (at any depth; False when ``folder`` is no folder)."""
    if not os.path.isdir(folder):
        return False
    inner, outer = os.path.realpath(path), os.path.realpath(folder)
    return inner != outer and os.path.commonpath([inner, outer]) == outer


def check_distinct(inputs, outputs):
    """Refuse an output that is an input or lies in an input folder, or that another output names too
    (under any spelling).

    Parameters
    ----------
    inputs, outputs : dict of str to str or Path or None
        What messages call each file (``"-o"``, ``"the scores file"``) -> its path
        (None: not given). Streams (:func:`is_stream`) are never refused, except two
        outputs on standard output (``-``) or on one descriptor, whose files would
        interleave. An input ``-`` is standard input: an output that is the file it
        is redirected from is refused.

    Raises
    ------
    InputError
        One line naming the two.

    Examples
    --------
    >>> check_distinct({"the scores file": "s.csv"}, {"-o": "out.csv"})
    >>> check_distinct({"the scores file": "s.csv"}, {"-o": "sub/../s.csv"})
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: -o 'sub/../s.csv' is the scores file 's.csv'; write the output to another file
    """
    by_descriptor = {}
    for what, path in outputs.items():
        number = None if path is None else 1 if str(path) == STDOUT else descriptor_of(path)
        if number is not None:
            by_descriptor.setdefault(number, []).append(what)
    for number, names in by_descriptor.items():
        if len(names) > 1:  # two files interleaved chunk by chunk
            where = "standard output" if number == 1 else f"file descriptor {number}"
            raise InputError(f"{' and '.join(names)} are {'both' if len(names) == 2 else 'all'} {where}; give each "
                             "output its own file")
    files = [(what, path) for what, path in outputs.items() if path is not None and not is_stream(path)]
    for what, path in files:
        for source, given in inputs.items():
            for one in [given] if isinstance(given, (str, Path)) else (given or []):
                if str(one) == STDOUT and _is_standard_input(path):  # rank - h.csv -o m.csv < m.csv
                    raise InputError(f"{what} {str(path)!r} is {source}, read from standard input (-); write the "
                                     "output to another file")
                if str(one) != STDOUT and same_file(path, one):
                    raise InputError(f"{what} {str(path)!r} is {source} {str(one)!r}; write the output to another file")
                if str(one) != STDOUT and _within(path, one):  # a folder of inputs (evaluate's predictions)
                    raise InputError(f"{what} {str(path)!r} lies in {source} {str(one)!r}, whose files are read; "
                                     "write the output outside it")
    _refuse_one_file_twice(files)


def _refuse_one_file_twice(files):
    """Refuse two of the outputs ``files`` (``(what, path)`` pairs, no streams) that are one file."""
    for i, (what, path) in enumerate(files):
        for other, other_path in files[:i]:
            if same_file(path, other_path):
                raise InputError(f"{what} {str(path)!r} and {other} {str(other_path)!r} are the same file; "
                                 "give each output its own file")


@contextlib.contextmanager
def spooled(path):
    """A path that can be read more than once: ``path`` itself, or a temporary copy of a stream.

    ``-`` (standard input), a pipe or a character device is copied, 1 MiB at a
    time, into a temporary file (keeping the suffix, so ``.parquet`` stays
    Parquet) that is removed when the block ends; a regular file is used as is.

    Parameters
    ----------
    path : str or Path or None
        An input path (None passes through).

    Yields
    ------
    str or Path or None
    """
    if path is None or not is_stream(path):
        yield path
        return
    copy = fd = source = None
    from_stdin = str(path) == STDOUT
    try:  # the copy is named before it exists, so a Ctrl-C landing anywhere here still removes it
        source = sys.stdin.buffer if from_stdin else open(path, "rb")
        while fd is None:
            copy = os.path.join(tempfile.gettempdir(), f"hmcpgm-stdin-{secrets.token_hex(6)}{Path(str(path)).suffix}")
            try:
                fd = os.open(copy, _NEW_FILE, 0o600)
            except FileExistsError:  # not ours to remove
                copy = None
        with os.fdopen(fd, "wb") as out:
            while block := source.read(1 << 20):
                out.write(block)
        yield copy
    finally:
        if copy is not None:  # first, and with no Python call before it: a Ctrl-C can't skip the unlink
            try:
                os.unlink(copy)
            except OSError:
                pass
        if source is not None and not from_stdin:
            source.close()
