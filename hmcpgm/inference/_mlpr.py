"""The one entry point of the engines: :func:`mlpr_from_likelihoods` dispatches through the engine registry."""

import numpy as np

from .._util import warn
from .._validation import likelihood_array
from ..exceptions import ApproximationWarning, InferenceError, InputError
from ..network import check_network
from ..options import VERSIONS, check_choice
from ._common import impossible_evidence, log_likelihood_pairs, posterior_from_logs
from ._loopy import DEFAULTS as LOOPY_DEFAULTS
from ._loopy import STARTS as LOOPY_STARTS
from ._loopy import LoopyReport, check_loopy_options
from ._nbh import nbh_posterior
from ._plan import approximation_message, choose_engine, inference_plan
from ._registry import ENGINES, check_size_options, engine_names, get_engine
from ._sparse_junction import DEFAULT_BUDGET

__all__ = ["mlpr_from_likelihoods", "loopy_belief_propagation", "engine_table", "check_engine_options"]


def _engine_options(engine):
    """The options ``engine`` takes (``"auto"``: those it passes on to the engine it picks)."""
    if engine == "auto":
        return frozenset().union(*(get_engine(n).auto_accepts for n in engine_names() if get_engine(n).auto))
    return get_engine(engine).options


def check_engine_options(engine, options):
    """Refuse an unknown ``engine``, an option it does not take, a size option or a loopy option out of range.

    What :func:`mlpr_from_likelihoods` checks of its ``engine`` and ``**options``
    before any inference, so that an estimator can refuse them when it is fitted.

    Parameters
    ----------
    engine : str
        ``"auto"`` or a registered engine.
    options : dict
        Keyword options of :func:`mlpr_from_likelihoods`.

    Raises
    ------
    InputError
        One line naming the engine's options, or the option out of range.

    Examples
    --------
    >>> check_engine_options("loopy", {"damping": 0.5})
    >>> check_engine_options("junction", {"tol": 1e-3})
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: engine='junction' takes the options ['max_clique']; got unknown option(s) ['tol']
    """
    check_choice(engine, "engine", ENGINES)
    accepted = _engine_options(engine)
    unknown = set(options) - accepted
    if unknown:
        raise InputError(
            f"engine={engine!r} takes the options {sorted(accepted) or 'none'}; "
            f"got unknown option(s) {sorted(unknown)}"
        )
    check_size_options(options)
    loopy = {n: options[n] for n in ("damping", "tol", "max_iter") if n in options}
    if loopy:
        check_loopy_options(**{**{n: LOOPY_DEFAULTS[n] for n in ("damping", "tol", "max_iter")}, **loopy})
    if "start" in options and options["start"] not in LOOPY_STARTS:
        raise InputError(f"start must be one of {LOOPY_STARTS}, got {options['start']!r}")


def engine_table():
    """The engine registry as a table: one row per registered engine, what :func:`mlpr_from_likelihoods` accepts
    and the references only :func:`~hmcpgm.inference.compare_engines` runs (``reference_only``, e.g. pyagrum).

    Returns
    -------
    DataFrame
        Indexed by ``engine``, with ``exact`` (on which hierarchies its answer is
        exact), ``options``, ``versions``, ``auto`` (its role in ``engine="auto"``:
        ``"exact"``, ``"fallback"`` or empty), ``cost_model`` (whether it has a row in
        :func:`inference_plan`), ``reference_only`` and ``summary``.

    Examples
    --------
    >>> table = engine_table()
    >>> table.loc["loopy", "exact"]
    'polytrees only (DAGs whose undirected skeleton has no loop)'
    >>> "sparse" in table.index
    True
    """
    import pandas as pd

    rows = [{"engine": n, "exact": e.exactness, "options": ", ".join(sorted(e.options)),
             "versions": ", ".join(e.versions), "auto": e.auto or "", "cost_model": e.cost is not None,
             "reference_only": e.reference_only, "summary": e.summary}
            for n, e in ((n, get_engine(n)) for n in engine_names(references=True))]
    return pd.DataFrame(rows).set_index("engine")


def mlpr_from_likelihoods(network, likelihoods, *, version="full", engine="auto", **options):
    """mLPRs: posterior probabilities P(Y_k = 1 | evidence) for every object and class.

    The network has one binary label node per class: roots are positive with
    probability ``theta_k``; a non-root is positive with probability ``theta_k``
    when all its parents are positive and never otherwise. Object ``m`` brings
    soft (virtual) evidence ``likelihoods[m, k] = [L_k(0), L_k(1)]`` on each class,
    with ``L_k(y)`` proportional to p(score_k | Y_k = y).

    Parameters
    ----------
    network : LabelNetwork
        The hierarchy and its CPD parameters ``theta``.
    likelihoods : array-like of shape (M, K, 2)
        Non-negative, finite; only the ratio within a pair matters. A zero is hard
        evidence; a pair [0, 0] is an error. Classes in ``network.classes`` order.
    version : {"full", "nbh", "indpt"}
        ``"full"``: evidence from every class. ``"nbh"``: for class ``k``, evidence
        only from ``k``, its parents and its children. ``"indpt"``: evidence only
        from ``k`` itself, combined with its prior marginal P(Y_k = 1).
    engine : str, default "auto"
        ``"auto"`` or a registered engine (``ENGINES``; the module docstring and
        :func:`engine_table` describe each). ``"auto"`` picks an exact engine
        whenever one fits ``budget_bytes`` (see :func:`inference_plan`) and
        otherwise runs loopy BP with an :class:`~hmcpgm.exceptions.ApproximationWarning`.
    **options
        The options the engine takes (the ``options`` column of :func:`engine_table`):
        ``max_clique`` (junction, default 20), ``budget_bytes`` (sparse, default 4
        GiB), ``progress`` (sparse: a progress bar), ``damping``, ``tol``,
        ``max_iter``, ``start``, ``return_report`` (loopy), ``max_classes``
        (enumerate, default 20). ``"auto"`` takes the options of the engines it may
        run, except loopy's ``start`` and ``return_report``, and passes them on.

    Returns
    -------
    ndarray of shape (M, K)
        With ``engine="loopy", return_report=True``: a tuple (mlpr, report). The
        report (a ``LoopyReport``) describes the full version's one run over all
        classes; with ``version="nbh"`` loopy runs once per kind of neighbourhood
        and the report is None: a ``ConvergenceWarning`` says when any of those
        runs did not converge.

    Raises
    ------
    InputError
        Wrong shapes or values of ``likelihoods``, an unknown ``version``,
        ``engine`` or option, or a version the engine does not serve.
    InferenceError
        A forest-only engine on a DAG, or evidence with probability zero under the
        network.
    TooLargeError
        A junction tree clique wider than ``max_clique``, or too many classes to
        enumerate.

    Warns
    -----
    ApproximationWarning
        When the answer is approximate: ``"auto"`` fell back to loopy BP, or an
        engine named here is not exact on this hierarchy (``"loopy"`` on a DAG
        whose undirected skeleton has a loop) for the full or nbh version.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, LabelNetwork
    >>> net = LabelNetwork(Hierarchy.from_parents([None, 0]), [0.5, 0.5])  # 1 is a child of 0
    >>> L = np.array([[[1.0, 1.0], [1.0, 3.0]]])       # evidence only on the child
    >>> mlpr_from_likelihoods(net, L).round(4)          # joint weights .5, .25, .75
    array([[0.6667, 0.5   ]])
    >>> mlpr_from_likelihoods(net, L, version="indpt").round(4)
    array([[0.5, 0.5]])
    """
    network = check_network(network)
    hierarchy, theta = network.hierarchy, network.theta
    likelihoods = likelihood_array(likelihoods, hierarchy)
    check_choice(version, "version", VERSIONS)
    check_engine_options(engine, options)
    auto = engine == "auto"  # which warns of its own approximation (_auto)
    if auto:
        engine = _auto(hierarchy, version, options)
        spec = get_engine(engine)
        options = {n: v for n, v in options.items() if n in spec.options}
        options.update(spec.auto_options)
    spec = get_engine(engine)
    if version not in spec.versions:
        raise InputError(f"engine={engine!r} serves the versions {list(spec.versions)}; got version={version!r}")
    if spec.forests_only and not hierarchy.is_forest:
        raise InferenceError(
            f"engine={engine!r} needs a tree or forest, but the hierarchy is a DAG (some class "
            "has several parents); use engine='junction' (exact) or 'loopy'"
        )
    if not auto and version != "indpt" and not spec.exact_on(hierarchy):
        warn(f"engine={engine!r} is approximate on this hierarchy (exact on {spec.exactness}): its mLPRs may be "
             "far from the exact posterior even where it converged; engine='auto' runs an exact engine wherever "
             "one fits (hmcpgm.inference_plan)", ApproximationWarning)
    m = likelihoods.shape[0]
    k = hierarchy.n_classes
    if m == 0:
        empty = np.zeros((0, k))
        report = _empty_report(options) if version == "full" else None  # as with objects: see Returns
        return (empty, report) if options.get("return_report") else empty
    if spec.direct is not None:
        out = spec.direct(hierarchy, theta, likelihoods, version, options)
        if out is not None:
            return out
    if spec.run is None:
        raise InferenceError(f"engine={engine!r} gives no answer for version={version!r} (its direct function "
                             "returned None and it has no run function)")
    l0, l1 = log_likelihood_pairs(likelihoods)
    report = None
    if version == "indpt":
        out = _indpt(network, l0, l1, spec, options)
    elif version == "full":
        out, report = spec.run(hierarchy, theta, l0, l1, options)
    else:
        out = nbh_posterior(hierarchy, theta, l0, l1, engine, options)
    out = np.ascontiguousarray(out.T)
    if options.get("return_report"):
        return out, report
    return out


def _auto(hierarchy, version, options):
    """The engine of ``engine="auto"``; warns when its answer is approximate."""
    budget = options.get("budget_bytes", DEFAULT_BUDGET)
    engine, exact = choose_engine(hierarchy, version, budget_bytes=budget, max_clique=options.get("max_clique", 20))
    if not exact:
        plan = inference_plan(hierarchy, budget_bytes=budget, max_clique=options.get("max_clique", 20))
        warn(approximation_message(plan), ApproximationWarning)
    return engine


def _indpt(network, l0, l1, spec, options):
    """(K, M) posterior of each class from its own evidence and its prior marginal."""
    if spec.prior is not None:  # the engine's own prior marginals (enumeration: by brute force)
        prior = spec.prior(network.hierarchy, network.theta, options)
        if isinstance(prior, tuple):  # (log P(Y_k = 0), log P(Y_k = 1))
            log_1mpi, log_pi = (np.asarray(a, dtype=float) for a in prior)
        else:  # P(Y_k = 1)
            prior = np.clip(prior, 0.0, 1.0)
            with np.errstate(divide="ignore"):
                log_pi, log_1mpi = np.log(prior), np.log1p(-prior)
    else:
        log_pi = network.log_prior_marginals
        with np.errstate(divide="ignore"):
            log_1mpi = np.log(-np.expm1(log_pi))
    out = posterior_from_logs(log_1mpi[:, None] + l0, log_pi[:, None] + l1)
    bad = np.isnan(out)
    if bad.any():
        raise impossible_evidence(network.hierarchy, np.flatnonzero(bad.any(axis=0)))
    return out


def _empty_report(options):
    return LoopyReport.empty(**{n: options[n] for n in ("damping", "tol", "max_iter") if n in options})


def loopy_belief_propagation(network, likelihoods, *, damping=LOOPY_DEFAULTS["damping"],
                             tol=LOOPY_DEFAULTS["tol"], max_iter=LOOPY_DEFAULTS["max_iter"],
                             start=LOOPY_DEFAULTS["start"]):
    """Full-evidence mLPRs by batched loopy belief propagation, with a convergence report.

    Exact on forests and on polytrees (DAGs whose undirected skeleton has no
    loop); an approximation on other DAGs. One iteration is an upward sweep
    (children before parents) then a downward sweep; each object stops when it
    has converged. Emits :class:`~hmcpgm.exceptions.ConvergenceWarning` when some
    objects do not converge within ``max_iter``.

    Parameters
    ----------
    network : LabelNetwork
        The hierarchy and its CPD parameters ``theta``.
    likelihoods : array-like of shape (M, K, 2)
        The evidence pairs ``[L_k(0), L_k(1)]``, as in :func:`mlpr_from_likelihoods`.
    damping : float in [0, 1), default 0
        Weight of the previous factor message (log-odds) in each update. The
        sequential schedule rarely needs it; it slows convergence.
    tol : float, default 1e-6
        An object has converged when no message changed by more than ``tol``
        (in log-odds) in one iteration.
    max_iter : int, default 200
        At most this many iterations per object.
    start : {"uniform", "forest"}, default "uniform"
        Starting messages. ``"forest"`` starts from the exact solution on the
        spanning forest that keeps each class's first parent; on DAGs with loops,
        where loopy BP has several fixed points, it reached a closer one in
        ``bench/loopy_accuracy.py`` (smaller mean and 99.9% quantile of the error,
        the same worst case). ``engine="auto"`` uses it when it falls back to loopy BP.

    Returns
    -------
    mlpr : ndarray of shape (M, K)
        The (approximate, on DAGs with loops) posterior probabilities.
    report : LoopyReport
        Per object: ``converged``, ``n_iter``, ``residual``.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, LabelNetwork
    >>> net = LabelNetwork(Hierarchy.from_parents([None, None, [0, 1]]), [0.5, 0.5, 0.5])
    >>> L = np.array([[[1.0, 2.0], [1.0, 1.0], [1.0, 4.0]]])
    >>> mlpr, report = loopy_belief_propagation(net, L)
    >>> np.allclose(mlpr, mlpr_from_likelihoods(net, L, engine="enumerate"))
    True
    >>> bool(report.converged[0])
    True
    """
    return mlpr_from_likelihoods(
        network, likelihoods, engine="loopy", damping=damping, tol=tol,
        max_iter=max_iter, start=start, return_report=True,
    )
