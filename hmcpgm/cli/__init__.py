"""The ``hmcpgm`` command line: a thin layer over the public API.

Every failure a user can cause prints one line ``hmcpgm: error: ...`` and exits
with status 2; outputs and option values are checked before any work starts.
Warnings print as ``hmcpgm: warning: ...`` lines after the progress bars. Run
``hmcpgm COMMAND --help`` for the options of each command.
"""

import contextlib
import os
import signal
import sys
import warnings

from .._interrupt import check_interrupt, ctrl_c_recorded, interrupted_by
from ._wording import command_line_wording

__all__ = ["main", "run", "build_parser"]


def build_parser():
    """The ``argparse`` parser of the ``hmcpgm`` command (its subcommands and options)."""
    from ._parser import build_parser as build  # imported when needed: ``main`` answers Ctrl-C sooner

    return build()


def main(argv=None):
    """Entry point of the ``hmcpgm`` command; returns the exit status."""
    try:
        with ctrl_c_recorded():
            try:
                return _main(argv)
            except BaseException:
                check_interrupt()  # a Ctrl-C that a library turned into another error (pandas: ValueError)
                raise
    except KeyboardInterrupt:  # wherever it landed: reading the arguments, the run, the warnings
        signum = interrupted_by()
        if signum == signal.SIGINT:
            print("hmcpgm: interrupted", file=sys.stderr)
        else:  # kill, timeout, a cancelled job, a closed terminal: the shell's status of a run the signal ended
            print(f"hmcpgm: stopped by {signum.name}", file=sys.stderr)
        return 128 + signum


def run():
    """The ``hmcpgm`` program: :func:`main` on the command's arguments, then exit with its status.

    A Ctrl-C pressed once :func:`main` has returned (its outputs whole and reported)
    is ignored while Python shuts down: it used to end the process by SIGINT, status
    130 without a word, after a run that had finished.
    """
    with _buffered_stdout():
        status = main()
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(status)


@contextlib.contextmanager
def _buffered_stdout():
    """Standard output through a buffer when Python writes it unbuffered (``PYTHONUNBUFFERED``, ``python -u``).

    Then the text layer writes straight to the file, and a write that a pipe takes only
    in part (its reader slow, or gone: ``| head``) returns the bytes it took; the text
    layer drops the rest without an error, and the run ended with status 0 and a
    message that the whole output was written. A buffer writes on until every byte is
    taken, or raises BrokenPipeError. Lines still go out as they are written; the
    file descriptor is shared, not owned, and ``sys.stdout`` is put back afterwards.
    """
    import io

    raw, previous = getattr(sys.stdout, "buffer", None), sys.stdout
    try:
        fd = raw.fileno() if isinstance(raw, io.RawIOBase) else None
    except (OSError, ValueError):
        fd = None
    if fd is None:
        yield
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)), encoding=previous.encoding,
                                  errors=previous.errors, line_buffering=True)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: main has said so
            sys.stdout.flush()
        sys.stdout = previous


def _main(argv):
    from ..exceptions import HmcpgmError
    from ._commands import UserError

    args = build_parser().parse_args(argv)
    status = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # record each warning once, print them after the progress bars
        try:
            _run(args)
            check_interrupt()  # one swallowed after the last output was committed
        except (HmcpgmError, UserError, OSError) as exc:  # OSError: missing files, unwritable outputs
            check_interrupt()  # the error may be a Ctrl-C that C code turned into an error of its own
            if isinstance(exc, BrokenPipeError):
                return _closed_pipe()
            system = isinstance(exc, OSError) and exc.strerror and exc.filename  # raised by the OS, not by hmcpgm
            message = f"{exc.strerror}: {exc.filename!r}" if system else str(exc)
            print(f"hmcpgm: error: {command_line_wording(message, args.command)}", file=sys.stderr)
            status = 2
    try:
        # once each: the registry of "default" is reset whenever a library changes the filters (pandas does)
        for message in dict.fromkeys(str(w.message) for w in caught):
            print(f"hmcpgm: warning: {command_line_wording(message, args.command)}", file=sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:
        return _closed_pipe()
    return status


def _run(args):
    """Run the command: outputs checked against inputs, inputs read from ``-`` or a pipe via a copy."""
    import contextlib

    from .._atomic import check_distinct, data_on_stdout, descriptor_of, spooled
    from ._commands import FILES, UserError

    inputs, outputs = FILES.get(args.command, ({}, {}))
    for name, what in {**inputs, **outputs}.items():  # an empty name (--json "") was taken for no file at all
        value = getattr(args, name, None)
        if value is not None and any(str(v).strip() == "" for v in (value if isinstance(value, list) else [value])):
            raise UserError(f"{what} is given an empty name; give a file name")
    for name in outputs:  # standard output by any name of its descriptor is standard output ("-"): written
        if getattr(args, name, None) is not None and descriptor_of(getattr(args, name)) == 1:  # through, never
            setattr(args, name, "-")  # replaced (a '>> log' file lost its lines)
    given = {what: getattr(args, name, None) for name, what in inputs.items()}
    written = {what: getattr(args, name, None) for name, what in outputs.items()}
    check_distinct(given, written)
    copies = {}  # temporary copy of a stream -> how messages name it

    def spool(value):
        path = stack.enter_context(spooled(value))
        if path is not None and str(path) != str(value):
            copies[str(path)] = "standard input (-)" if str(value) == "-" else repr(str(value))
        return path

    with contextlib.ExitStack() as stack:
        for name in inputs:
            value = getattr(args, name, None)
            setattr(args, name, [spool(v) for v in value] if isinstance(value, list) else spool(value))
        if "-" in written.values():
            stack.enter_context(data_on_stdout())  # data to standard output, messages to standard error
        try:
            args.run(args)
        except Exception as exc:  # a message naming a temporary copy names the stream the user gave instead
            _name_streams(exc, copies)
            raise


def _name_streams(exc, copies):
    """Replace, in ``exc``'s message, each temporary copy's path by the input the user gave."""
    for copy, given in copies.items():
        exc.args = tuple(a.replace(repr(copy), given).replace(copy, given) if isinstance(a, str) else a
                         for a in exc.args)
        if isinstance(exc, OSError) and exc.filename == copy:
            exc.filename = given


def _closed_pipe():
    """The reader of our output went away (``hmcpgm demo | head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1
