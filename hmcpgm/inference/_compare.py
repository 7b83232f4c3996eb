"""Engines side by side on one network and one set of objects: how far each is from an exact reference.

:func:`compare_engines` runs each engine on the same likelihoods, times it, and
measures its absolute error against a reference: by default the best exact engine
that fits the memory budget according to :func:`inference_plan`. When no exact
engine fits, the errors are NaN and the report says why (the plan's notes). The
numbers are never clipped or rounded: an engine that disagrees shows it.
"""

import sys
import time
import tracemalloc
import warnings

import numpy as np

from .._validation import likelihood_array
from ..exceptions import ApproximationWarning, ConvergenceWarning, InferenceError, InputError, TooLargeError
from ..network import check_network
from ._mlpr import check_engine_options, mlpr_from_likelihoods
from ._plan import inference_plan
from ._registry import MAX_CLIQUE, engine_names, get_engine, is_exact, is_positive_int
from ._sparse_junction import DEFAULT_BUDGET

__all__ = ["compare_engines", "COMPARE_COLUMNS", "MEMORY_METHOD", "EVIDENCE_REGIMES", "synthetic_evidence",
           "errors_by_class_structure"]

COMPARE_COLUMNS = (
    "engine", "exact", "reference", "max_abs_error", "mean_abs_error", "worst_class", "worst_object",
    "seconds", "setup_seconds", "peak_memory", "loopy_iterations_mean", "loopy_iterations_max",
    "loopy_converged", "note",
)
MEMORY_METHOD = (
    "peak_memory: the peak of memory allocated through Python and numpy while the engine ran "
    "(tracemalloc, bytes); memory allocated inside compiled kernels or by pyAgrum's C++ is not counted"
)


def _spec(item, what="engines"):
    """(label, engine, options) of one entry of ``engines`` (or of ``what``: ``reference``), checked."""
    if isinstance(item, str):
        name, opts = item, {}
    elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], dict):
        name, opts = item[0], dict(item[1])
    else:
        each = "each entry is " if what == "engines" else ""
        raise InputError(f"{what}: {each}an engine name or a pair (name, options dict), got {item!r}")
    runnable = engine_names(references=True)
    if name not in runnable:
        raise InputError(f"{what}: unknown engine {name!r}; choose among {list(runnable)}")
    label = name if not opts else f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in sorted(opts.items())) + ")"
    if get_engine(name).reference_only:
        if opts:
            raise InputError(f"{what}: {name!r} takes no options, got {sorted(opts)}")
    elif "return_report" in opts:
        raise InputError(f"{what}: {label}: return_report is compare_engines' own (loopy's report fills the "
                         "loopy_* columns); leave it out")
    else:
        try:  # before any engine runs: a bad option of the last engine is not found after the others' work
            check_engine_options(name, opts)
        except InputError as exc:
            raise InputError(f"{what}: {label}: {exc}") from None
    return label, name, opts


def _run(network, likelihoods, name, opts, memory, budget_bytes, max_clique):
    """(mlpr (M, K), seconds, setup_seconds, peak bytes or NaN, loopy report or None).

    The engine runs within the caller's ``budget_bytes`` and ``max_clique`` where it takes them (an
    option named in ``opts`` wins), the limits the plan judged it by.
    """
    spec = get_engine(name)
    limits = {"budget_bytes": budget_bytes, "max_clique": max_clique}
    opts = {**{n: v for n, v in limits.items() if n in spec.options}, **opts}
    if spec.reference_only:
        if spec.fits is not None:
            fits, note = spec.fits(network.hierarchy, budget_bytes)
            if not fits:  # e.g. pyAgrum's dense tables would not fit in memory: refuse before building them
                raise TooLargeError(f"engine {name!r} does not fit: {note}")

        def call(lik):
            return spec.direct(network.hierarchy, network.theta, lik, "full", {}), None
    elif "return_report" in spec.options:
        def call(lik):
            with warnings.catch_warnings():  # the comparison measures the approximation: its error column
                warnings.simplefilter("ignore", ApproximationWarning)
                return mlpr_from_likelihoods(network, lik, engine=name, return_report=True, **opts)
    else:
        def call(lik):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximationWarning)
                return mlpr_from_likelihoods(network, lik, engine=name, **opts), None

    t = time.perf_counter()
    with warnings.catch_warnings():  # the warm-up's convergence is not the one reported
        warnings.simplefilter("ignore", ConvergenceWarning)
        call(likelihoods[:1])  # compiles kernels and structures, loads caches
    setup = time.perf_counter() - t
    peak = np.nan
    if memory:
        started = not tracemalloc.is_tracing()
        if started:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    try:
        t = time.perf_counter()
        out, report = call(likelihoods)
        seconds = time.perf_counter() - t
        if memory:
            peak = float(tracemalloc.get_traced_memory()[1] - base)
    finally:
        if memory and started:
            tracemalloc.stop()
    return np.asarray(out, dtype=float), seconds, setup, peak, report


def _pick_reference(network, reference, budget_bytes, max_clique):
    """(engine or None, options, why)."""
    hierarchy = network.hierarchy
    if reference is None:
        return None, {}, "no reference asked for (reference=None)"
    if reference != "auto":
        _, name, opts = _spec(reference, "reference")
        if not is_exact(name, hierarchy):
            raise InputError(f"reference={name!r} is not exact on this hierarchy; choose an exact engine")
        spec = get_engine(name)
        if spec.fits is not None:
            fits, note = spec.fits(hierarchy, budget_bytes)
            if not fits:
                return None, {}, f"reference={name!r} does not fit: {note}"
            return name, opts, f"asked for (reference={name!r}); {note}"
        return name, opts, f"asked for (reference={name!r})"
    plan = inference_plan(hierarchy, budget_bytes=budget_bytes, max_clique=max_clique)
    exact = [e for e in plan.estimates if e.applies and e.exact]
    # the fallback (loopy BP, exact on polytrees) is the reference only when nothing else fits: it is what gets
    # checked
    exact = [e for e in exact if get_engine(e.engine).auto != "fallback"] or exact
    if not exact:
        why = "; ".join(f"{e.engine}: {e.note}" for e in plan.estimates if e.note)
        return None, {}, f"no exact engine fits budget_bytes={budget_bytes:,} (inference_plan: {why})"
    best = min(exact, key=lambda e: e.seconds_per_object)
    limits = {"budget_bytes": budget_bytes, "max_clique": max_clique}  # the plan's limits, where the engine takes them
    opts = {n: v for n, v in limits.items() if n in get_engine(best.engine).options}
    return best.engine, opts, (f"the fastest exact engine that fits budget_bytes={budget_bytes:,} by "
                               f"inference_plan (~{best.seconds_per_object:.2g} s/object estimated)")


def compare_engines(network, likelihoods, *, engines=None, reference="auto", budget_bytes=DEFAULT_BUDGET,
                    max_clique=MAX_CLIQUE, memory=True, return_mlpr=False, progress=False):
    """Run several mLPR engines (full version) on the same objects and report their errors against a reference.

    Parameters
    ----------
    network : LabelNetwork
        The hierarchy and its CPD parameters ``theta``.
    likelihoods : array-like of shape (M, K, 2)
        The evidence pairs ``[L_k(0), L_k(1)]``, as in :func:`mlpr_from_likelihoods`.
    engines : list, optional
        Names of registered engines (every engine of ``ENGINES`` but ``"auto"``, and the
        references such as ``"pyagrum"``), or pairs ``(name, options)`` passed on to
        :func:`mlpr_from_likelihoods`, e.g. ``("loopy", {"damping": 0.5})``. Default:
        every engine that :func:`inference_plan` says applies. An engine that refuses
        (too large, a DAG for the tree engine, pyAgrum's dense junction tree beyond
        ``budget_bytes``) gets a row with the refusal in ``note``.
    reference : str, pair, or None, default "auto"
        ``"auto"``: the fastest exact engine that fits ``budget_bytes`` by
        :func:`inference_plan`; none fitting, errors are NaN and ``note`` says why.
        An exact engine's name (``"pyagrum"`` for the independent reference, used if
        its junction tree fits ``budget_bytes``), or None for no errors at all.
    budget_bytes : int, default 4 GiB
        Memory the exact engines may use: the plan, ``"auto"``, and every engine that
        runs and takes ``budget_bytes`` (the reference too) runs within it, unless its
        options in ``engines`` say otherwise.
    max_clique : int, default 20
        The dense junction tree's largest clique: the plan, and the engines that take
        ``max_clique``, as ``budget_bytes``.
    memory : bool, default True
        Measure each engine's peak memory with tracemalloc (see ``MEMORY_METHOD``);
        False leaves ``peak_memory`` NaN and avoids tracemalloc's overhead.
    return_mlpr : bool, default False
        Also return a dict of every engine's (M, K) mLPRs, the reference's under
        ``"reference"`` (absent when there is none).
    progress : bool, default False
        A progress bar over the engines (tqdm, on standard error; shown only on a
        terminal).

    Returns
    -------
    DataFrame
        One row per engine (the reference first, ``reference`` True) with the
        columns ``COMPARE_COLUMNS``: ``exact`` (from the one table, ``EXACTNESS``; None
        for an engine that refused; False for loopy BP on a polytree when an object
        did not converge),
        ``max_abs_error`` and ``mean_abs_error`` over all (object, class) events, the
        event of the largest error (``worst_class`` a class name, ``worst_object`` a
        row of ``likelihoods``), ``seconds`` for all objects after a one-object
        warm-up that compiles and caches (``setup_seconds``), ``peak_memory`` (bytes),
        loopy's mean and largest iteration count and its converged fraction, and a
        ``note``. ``attrs`` holds ``reference`` (its label or None),
        ``reference_reason`` and ``memory_method``. With ``return_mlpr``: a tuple
        (report, dict).

    Raises
    ------
    InputError
        An unknown engine, an option it does not take, or a reference that is not exact.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy, LabelNetwork
    >>> net = LabelNetwork(Hierarchy.from_parents([None, 0, 0, [1, 2]]), [0.6, 0.5, 0.5, 0.5])
    >>> L = np.random.default_rng(0).uniform(0.2, 3.0, size=(5, 4, 2))
    >>> report = compare_engines(net, L, engines=["enumerate", "loopy"], memory=False)
    >>> report.attrs["reference"], list(report["engine"])
    ('sparse', ['sparse', 'enumerate', 'loopy'])
    >>> bool(report.set_index("engine").loc["enumerate", "max_abs_error"] < 1e-12)
    True
    """
    import pandas as pd

    network = check_network(network)
    hierarchy = network.hierarchy
    likelihoods = likelihood_array(likelihoods, hierarchy)
    if engines is None:
        plan = inference_plan(hierarchy, budget_bytes=budget_bytes, max_clique=max_clique)
        engines = [e.engine for e in plan.estimates if e.applies]
    if isinstance(engines, str):
        engines = [engines]
    specs = [_spec(e) for e in engines]
    ref_name, ref_opts, why = _pick_reference(network, reference, budget_bytes, max_clique)
    ref_label = None
    if ref_name is not None:
        ref_label = _spec((ref_name, ref_opts))[0] if ref_opts and reference != "auto" else ref_name
        specs = [s for s in specs if s[1:] != (ref_name, ref_opts) and s[0] != ref_label]
        specs.insert(0, (ref_label, ref_name, ref_opts))
    rows, mlprs = [], {}
    ref_out = None
    from tqdm.auto import tqdm

    bar = tqdm(specs, desc="engines", unit="engine", disable=None if progress else True, leave=False,
               file=sys.stderr)  # counts each engine as it ends, closed when the loop ends
    for i, (label, name, opts) in enumerate(bar):
        bar.set_postfix_str(label)
        is_ref = ref_name is not None and i == 0
        row = dict.fromkeys(COMPARE_COLUMNS, np.nan)
        row.update(engine=label, exact=is_exact(name, hierarchy), reference=is_ref, worst_class=None,
                   worst_object=None, note="")
        try:
            out, seconds, setup, peak, report = _run(network, likelihoods, name, opts, memory, budget_bytes, max_clique)
        except (TooLargeError, InferenceError) as exc:
            if is_ref:
                why = f"the reference {label!r} failed: {exc}"
                ref_label = None
            row.update(exact=None, note=f"refused: {exc}")  # no answer, exact or not
            rows.append(row)
            continue
        row.update(seconds=seconds, setup_seconds=setup, peak_memory=peak)
        mlprs[label] = out
        if report is not None:
            row.update(loopy_iterations_mean=float(report.n_iter.mean()) if len(report.n_iter) else np.nan,
                       loopy_iterations_max=int(report.n_iter.max()) if len(report.n_iter) else np.nan,
                       loopy_converged=float(report.converged.mean()) if len(report.converged) else np.nan)
            if row["exact"] and not np.all(report.converged):  # exact on a polytree only once converged
                row.update(exact=False, note=f"not converged on {int(np.sum(~np.asarray(report.converged)))} of "
                                             f"{len(report.converged)} objects: not exact")
        if is_ref:
            ref_out = out
            mlprs["reference"] = out
            row.update(max_abs_error=0.0, mean_abs_error=0.0, note=f"the reference: {why}")
        elif ref_out is not None and out.size:
            err = np.abs(out - ref_out)
            missing = np.isnan(err)  # an engine's NaN is the worst event: max_abs_error is NaN, and this is where
            flat = int(np.argmax(missing)) if missing.any() else int(np.argmax(err))
            obj, cls = divmod(flat, err.shape[1])
            row.update(max_abs_error=float(np.max(err)), mean_abs_error=float(np.mean(err)),
                       worst_class=hierarchy.classes[cls], worst_object=obj)
        elif ref_out is None:
            row["note"] = "; ".join(filter(None, (row["note"], f"no reference: {why}")))
        rows.append(row)
    result = pd.DataFrame(rows, columns=list(COMPARE_COLUMNS))
    result["exact"] = result["exact"].astype("boolean")  # <NA>: refused
    result["reference"] = result["reference"].astype(bool)
    result["worst_object"] = result["worst_object"].astype("Int64")
    result["worst_class"] = pd.Series([r["worst_class"] for r in rows], dtype=object)
    result.attrs.update(reference=ref_label, reference_reason=why, memory_method=MEMORY_METHOD if memory else None)
    return (result, mlprs) if return_mlpr else result


# evidence regimes of synthetic_evidence: (mean log likelihood ratio of a positive, its sd); a negative has
# the opposite mean; "random" ignores the labels
EVIDENCE_REGIMES = {
    "weak": (0.5, 1.0),
    "strong": (3.0, 1.0),
    "random": (0.0, 2.0),
}


def synthetic_evidence(network, n_objects, regime="weak", seed=0):
    """Labels drawn from the network and likelihoods of a synthetic classifier, for testing engines.

    Each object's labels are drawn from the network (a root is positive with
    probability ``theta_k``; a class whose parents are all positive with probability
    ``theta_k``; otherwise negative). Each class's evidence is
    ``[1, exp(r)]`` with ``r`` a log likelihood ratio drawn as follows:

    ``"weak"``
        ``r ~ N(+0.5, 1)`` for a positive label, ``N(-0.5, 1)`` for a negative one:
        a classifier barely better than chance, the posterior stays near the prior.
    ``"strong"``
        ``r ~ N(+3, 1)`` or ``N(-3, 1)``: a confident classifier that rarely errs.
    ``"random"``
        ``r ~ N(0, 2)`` whatever the label: evidence unrelated to the labels, which
        often contradicts the hierarchy (a child more likely than its parent), where
        loops matter most.

    Parameters
    ----------
    network : LabelNetwork
        The hierarchy and ``theta`` the labels are drawn from.
    n_objects : int
        How many objects.
    regime : {"weak", "strong", "random"}
        The evidence regime (above; the numbers are in ``EVIDENCE_REGIMES``).
    seed : int
        Seed of the random generator.

    Returns
    -------
    labels : ndarray of bool, shape (n_objects, K)
        The drawn labels (they respect the hierarchy).
    likelihoods : ndarray, shape (n_objects, K, 2)
        The evidence pairs ``[1, exp(r)]``, classes in ``network.classes`` order.

    Examples
    --------
    >>> from hmcpgm import Hierarchy, LabelNetwork
    >>> net = LabelNetwork(Hierarchy.from_parents([None, 0, 0, [1, 2]]), [0.6, 0.5, 0.5, 0.5])
    >>> y, lik = synthetic_evidence(net, 3, "strong", seed=1)
    >>> y.shape, lik.shape
    ((3, 4), (3, 4, 2))
    >>> bool((y[:, 3] <= y[:, 1]).all())  # labels respect the hierarchy
    True
    """
    network = check_network(network)
    if regime not in EVIDENCE_REGIMES:
        raise InputError(f"regime must be one of {sorted(EVIDENCE_REGIMES)}, got {regime!r}")
    if isinstance(n_objects, bool) or not isinstance(n_objects, (int, np.integer)) or n_objects < 0:
        raise InputError(f"n_objects must be a non-negative int, got {n_objects!r}")
    h = network.hierarchy
    rng = np.random.default_rng(seed)
    y = np.zeros((n_objects, h.n_classes), dtype=bool)
    draws = rng.uniform(size=(n_objects, h.n_classes)) < network.theta
    for k in h.topological_order:
        on = np.ones(n_objects, dtype=bool)
        for p in h.parent_indices[k]:
            on &= y[:, p]
        y[:, k] = on & draws[:, k]
    mean, sd = EVIDENCE_REGIMES[regime]
    r = rng.normal(mean * (2 * y - 1.0), sd)
    lik = np.stack([np.ones_like(r), np.exp(r)], axis=2)
    return y, lik


def errors_by_class_structure(hierarchy, mlpr, reference, *, max_parents=None, depth_bin=1):
    """Absolute errors grouped by the number of parents and the depth of the class.

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy the mLPRs were computed on.
    mlpr, reference : ndarray of shape (M, K)
        An engine's answer and the reference's, classes in ``hierarchy.classes`` order.
    max_parents : int, optional
        Classes with at least this many parents form one group (``n_parents`` then
        reads ``"3+"`` for 3, and the column holds strings).
    depth_bin : int, default 1
        Depths grouped into bins of this width (``depth`` then reads ``"3-5"`` for
        width 3, and the column holds strings).

    Returns
    -------
    DataFrame
        One row per (``n_parents``, ``depth``) group present, in increasing order,
        with ``n_classes``, ``mean_abs_error`` and ``max_abs_error`` over its
        (object, class) events, and the ``worst_class``.

    Examples
    --------
    >>> import numpy as np
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 0, [1, 2]])
    >>> table = errors_by_class_structure(h, np.array([[0.5, 0.5, 0.5, 0.3]]), np.array([[0.5, 0.5, 0.5, 0.2]]))
    >>> table[["n_parents", "depth", "n_classes"]].values.tolist()
    [[0, 0, 1], [1, 1, 2], [2, 2, 1]]
    >>> round(float(table["max_abs_error"].iloc[2]), 6)
    0.1
    >>> coarse = errors_by_class_structure(h, np.zeros((1, 4)), np.zeros((1, 4)), max_parents=1, depth_bin=2)
    >>> coarse[["n_parents", "depth", "n_classes"]].values.tolist()
    [['0', '0-1', 1], ['1+', '0-1', 2], ['1+', '2-3', 1]]
    """
    import pandas as pd

    mlpr, reference = np.asarray(mlpr, dtype=float), np.asarray(reference, dtype=float)
    k = hierarchy.n_classes
    if mlpr.shape != reference.shape or mlpr.ndim != 2 or mlpr.shape[1] != k:
        raise InputError(f"mlpr and reference must both have shape (M, {k}); got {mlpr.shape} and {reference.shape}")
    if max_parents is not None and not is_positive_int(max_parents):
        raise InputError(f"max_parents must be a positive int or None, got {max_parents!r}")
    if not is_positive_int(depth_bin):
        raise InputError(f"depth_bin must be a positive int, got {depth_bin!r}")
    err = np.abs(mlpr - reference)
    n_par = np.array([len(p) for p in hierarchy.parent_indices])
    depth = np.asarray(hierarchy.depth)
    par_key = n_par if max_parents is None else np.minimum(n_par, int(max_parents))
    depth_key = depth // int(depth_bin)
    per_class = pd.DataFrame({
        "class": list(hierarchy.classes), "p": par_key, "d": depth_key,
        "max": err.max(axis=0) if len(err) else np.full(k, np.nan), "sum": err.sum(axis=0),
    })
    rows = []
    for (p, d), g in per_class.groupby(["p", "d"], sort=True):
        worst = g["max"].idxmax() if g["max"].notna().any() else g.index[0]
        p_label = int(p) if max_parents is None else (f"{p}+" if p == int(max_parents) else str(p))
        lo = int(d) * int(depth_bin)
        d_label = lo if depth_bin == 1 else f"{lo}-{lo + int(depth_bin) - 1}"
        rows.append({"n_parents": p_label, "depth": d_label, "n_classes": len(g),
                     "mean_abs_error": g["sum"].sum() / max(1, len(g) * len(err)), "max_abs_error": g["max"].max(),
                     "worst_class": per_class.loc[worst, "class"]})
    return pd.DataFrame(rows, columns=["n_parents", "depth", "n_classes", "mean_abs_error", "max_abs_error",
                                       "worst_class"])
