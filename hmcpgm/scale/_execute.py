"""Running one function over the chunks: in this process, or on ``dask.distributed``.

dask does the scheduling; this module only opens the client and keeps a bounded
number of chunks in flight, so that a file is read, and results come back, at the
pace the workers take them.
"""

import contextlib
import importlib
import re
from collections import deque

from .._interrupt import check_interrupt, stops_deferred
from ..exceptions import InputError, MissingDependencyError

__all__ = [
    "INSTALL", "import_optional", "check_scheduler", "scheduler_option", "open_client", "ordered_map",
    "is_dask_collection",
]

#: The pip line that installs what :mod:`hmcpgm.scale` needs beyond the core.
INSTALL = 'pip install "hmcpgm[scale]"'

_ADDRESS = re.compile(r"^(?:(?:tcp|tls|inproc|ucx|ws|wss)://)?[^\s:/]+:\d+/?$")  # distributed needs the port


def import_optional(module, what="this"):
    """Import ``module`` (a part of dask or pyarrow), or say how to install it.

    Raises
    ------
    MissingDependencyError
        With the exact ``pip install`` line.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = (exc.name or module).split(".")[0]
        raise MissingDependencyError(f"{what} needs {missing}, which is not installed: {INSTALL}") from None


def is_dask_collection(obj):
    """True for a dask array, dataframe or delayed value."""
    return hasattr(obj, "__dask_graph__") and callable(obj.__dask_graph__) and obj.__dask_graph__() is not None


def check_scheduler(scheduler):
    """``scheduler`` if it is ``"local"`` or looks like a dask scheduler address, else an InputError.

    Parameters
    ----------
    scheduler : str
        ``"local"`` or an address such as ``tcp://host:8786``.

    Returns
    -------
    str
        ``scheduler``.

    Examples
    --------
    >>> check_scheduler("tcp://10.0.0.5:8786")
    'tcp://10.0.0.5:8786'
    """
    if not isinstance(scheduler, str) or not (scheduler == "local" or _ADDRESS.match(scheduler)):
        raise InputError(
            "scheduler must be 'local' (a new local dask cluster) or the address of a running dask "
            f"scheduler with its port, such as 'tcp://127.0.0.1:8786', got {scheduler!r}"
        )
    return scheduler


def scheduler_option(text):
    """The argparse type of ``--scheduler``: :func:`check_scheduler` with argparse's error.

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    str
        ``text``, when it is ``"local"`` or a scheduler address.
    """
    import argparse

    try:
        return check_scheduler(text)
    except InputError:
        raise argparse.ArgumentTypeError(f"expected 'local' or a dask scheduler address with its port, such as "
                                         f"tcp://127.0.0.1:8786, got {text!r}") from None


def open_client(scheduler, *, processes=True, n_workers=None):
    """A dask ``Client`` for ``scheduler``, and how to close what was opened.

    Parameters
    ----------
    scheduler : None, "local", str or distributed.Client
        None: no client (chunks run in this process, one after the other).
        ``"local"``: a new ``LocalCluster`` on this machine (one single-threaded
        worker per core, or ``n_workers``). Another string: the address of a
        running dask scheduler (``tcp://host:8786``). A ``Client``: used as it is.
    processes : bool
        Whether a local cluster's workers are processes (else threads of this one).
    n_workers : int, optional
        Workers of a local cluster (default: the number of cores).

    Returns
    -------
    client : distributed.Client or None
        None when ``scheduler`` is None.
    close : callable
        Closes what this call opened (nothing for a client that was given).
    """
    if scheduler is None:
        return None, _nothing
    if isinstance(scheduler, str):
        check_scheduler(scheduler)  # a bad value is refused as such, with or without dask installed
    distributed = import_optional("distributed", "running chunks on dask")
    if isinstance(scheduler, distributed.Client):
        return scheduler, _nothing
    check_scheduler(scheduler)
    if scheduler == "local":
        import logging
        import os

        # a SIGTERM during the start is raised once the cluster is up: cut halfway, dask's exit-time close of
        # the cluster failed with a traceback
        with _workers_ignore_ctrl_c(), stops_deferred():
            cluster = distributed.LocalCluster(
                n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=processes,
                dashboard_address=":0", silence_logs=logging.CRITICAL,  # any free port; failures reach us as errors
            )
        client = None

        def close():
            import sys

            if sys.exc_info()[0] is not None:  # interrupted or failed: the cluster goes down without a word
                for name in ("distributed", "tornado", "asyncio"):
                    logging.getLogger(name).setLevel(logging.CRITICAL + 1)
            if client is not None:
                client.close()
            cluster.close()

        try:
            check_interrupt()
            client = distributed.Client(cluster)
        except BaseException:
            close()
            raise
        return client, close
    try:
        client = distributed.Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:  # ValueError: an address distributed cannot parse
        raise InputError(f"cannot connect to the dask scheduler at {scheduler!r}: {exc}") from None
    return client, client.close


def _nothing():
    pass


@contextlib.contextmanager
def _workers_ignore_ctrl_c():
    """Start worker processes with Ctrl-C ignored (inherited): this process alone handles it, closing them.

    Ctrl-C at a terminal reaches every process of the group; without this each
    worker prints its own ``KeyboardInterrupt`` traceback. (A blocked signal mask
    would not lose a Ctrl-C pressed while the cluster starts, but the workers do not
    keep it; nor does it keep the Ctrl-C for this process beside ``SIG_IGN``: a
    BLAS thread, which does not block it, takes it and drops it.) A Ctrl-C pressed
    during the start itself is ignored, as docs/cli.md says.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the worker processes
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ordered_map(func, items, *, client=None, shared=(), window=None, size=None):
    """``func(key, payload, *shared)`` for every item ``(key, payload)``, yielded in order.

    Parameters
    ----------
    func : callable
        A module-level function (workers unpickle it by name).
    items : iterable of (key, payload)
        Read lazily: at most ``window`` items are taken ahead of the results. A
        payload that is a dask collection (a block of a dask array) is computed first.
    client : distributed.Client, optional
        Without one, the items run here, one after the other.
    shared : tuple
        Further arguments, the same for every item (e.g. the fitted model); sent to
        every worker once.
    window : int, optional
        Items in flight on a client (default: twice its threads).
    size : callable, optional
        The number of objects of a result. Loopy BP's warnings of non-convergence are
        then given once, counting the objects of every chunk (the converged ones too);
        without it, of the chunks that warned. The warning is given when the results
        end or are left (a ``break``, an error).
    """
    tally = _Unconverged(size)  # loopy BP's warnings of every chunk: one, for all the objects
    try:
        if client is None:
            yield from _local(func, items, shared, tally)
        else:
            yield from _on_client(func, items, client, shared, window, tally)
    finally:
        tally.warn()


def _local(func, items, shared, tally):
    for key, payload in items:
        check_interrupt()
        if is_dask_collection(payload):
            payload = payload.compute()
        result, caught = _warnings_kept(func, key, payload, *shared)
        yield tally.raise_again(result, caught)


def _on_client(func, items, client, shared, window, tally):
    if shared:
        shared = tuple(client.scatter(list(shared), broadcast=True, hash=False))
    window = window or max(2, 2 * sum(client.nthreads().values()))
    pending = deque()
    for key, payload in items:
        if is_dask_collection(payload):
            payload = client.compute(payload)
        pending.append(client.submit(_warnings_kept, func, key, payload, *shared, pure=False))
        if len(pending) >= window:
            yield _result(pending.popleft(), tally)
    while pending:
        yield _result(pending.popleft(), tally)


def _warnings_kept(func, key, payload, *shared):
    """``func(key, payload, *shared)``, with the warnings it raised (the warning objects).

    A worker's warnings went to its own standard error (on a remote cluster, to its
    log), so an approximate answer (loopy BP that did not converge) went unreported
    where the chunks ran; they are raised again in the process that asked.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(key, payload, *shared)
    return result, [w.message for w in caught]


def _result(future, tally):
    result, caught = future.result()
    check_interrupt()  # a Ctrl-C swallowed by a callback of distributed's (its garbage-collector watch)
    return tally.raise_again(result, caught)


class _Unconverged:
    """The objects of all chunks that loopy BP left unconverged: one warning for the run, not one a chunk.

    ``size(result)``: a chunk's number of objects, counted for every chunk (else the objects of the chunks that
    warned are the total).
    """

    def __init__(self, size=None):
        self.size, self.first, self.unconverged, self.residual = size, None, 0, 0.0
        self.objects = self.warned_objects = 0

    def raise_again(self, result, caught):
        """``result``, once ``caught`` is raised again here, loopy BP's warnings of non-convergence counted."""
        from .._util import warn

        for message in caught:
            if hasattr(message, "unconverged"):
                self.first = self.first or message
                self.unconverged += message.unconverged
                self.warned_objects += message.objects
                self.residual = max(self.residual, message.residual)
            else:
                warn(message, type(message))
        if self.size is not None:
            self.objects += self.size(result)
        return result

    def warn(self):
        from .._util import warn
        from ..inference._loopy import unconverged_warning

        if self.first is not None:
            objects = self.objects if self.size is not None else self.warned_objects
            first, self.first = self.first, None  # once
            warn(unconverged_warning(self.unconverged, objects, first.max_iter, self.residual, first.tol),
                 type(first))
