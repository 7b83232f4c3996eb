"""What each engine would cost on a hierarchy, and which one ``engine="auto"`` runs.

The plan is computed before any large allocation, from the triangulations and
counts of feasible configurations only (no table is built). Each engine's row
comes from its cost model in the engine registry (``inference/_registry.py``,
which documents the models and their measured constants); the policy of
``engine="auto"`` is written once, in :func:`inference_plan`, over the registry's
``auto`` roles.
"""

from dataclasses import dataclass
from functools import lru_cache

from .._validation import check_hierarchy
from ._registry import (
    MAX_CLIQUE,
    EngineEstimate,
    check_size_options,
    depends_on_registry,
    get_engine,
    is_exact,
    size_text,
)
from ._registry import engine_names as registered_engines
from ._sparse_junction import DEFAULT_BUDGET

__all__ = [
    "EngineEstimate", "InferencePlan", "inference_plan", "choose_engine", "engine_in_use", "approximation_message",
]


@dataclass(frozen=True)
class InferencePlan:
    """Every engine's estimated cost on a hierarchy and the one ``engine="auto"`` picks.

    Attributes
    ----------
    n_classes : int
    kind : str
        ``"tree"``, ``"forest"`` or ``"dag"``.
    budget_bytes : int
    estimates : tuple of EngineEstimate
    engine : str
        What ``engine="auto"`` runs (for the full version).
    exact : bool
        Whether that answer is exact.
    """

    n_classes: int
    kind: str
    budget_bytes: int
    estimates: tuple
    engine: str
    exact: bool

    def __getitem__(self, engine):
        for e in self.estimates:
            if e.engine == engine:
                return e
        raise KeyError(engine)

    def __str__(self):
        rows = [f"inference plan: {self.n_classes} classes ({self.kind}), budget {size_text(self.budget_bytes)}; "
                f"auto runs {self.engine!r} ({'exact' if self.exact else 'approximate'})"]
        for e in self.estimates:
            status = "applies" if e.applies else ("skipped" if e.note.startswith("not needed") else "refused")
            parts = [f"  {e.engine:<9}", status, "exact" if e.exact else "approximate"]
            if e.max_clique_size is not None:
                parts.append(f"largest clique {e.max_clique_size}")
            if e.states is not None:
                parts.append(f"{e.states:.3g} states")
            if e.bytes_per_object is not None:
                parts.append(f"{size_text(e.bytes_per_object)}/object")
            if e.structure_bytes:
                parts.append(f"structure {size_text(e.structure_bytes)}")
            if e.seconds_per_object is not None:
                parts.append(f"~{e.seconds_per_object:.2g} s/object")
            if e.note:
                parts.append(e.note)
            rows.append(", ".join(parts))
        return "\n".join(rows)


def inference_plan(hierarchy, *, budget_bytes=DEFAULT_BUDGET, max_clique=MAX_CLIQUE):
    """Each engine's cost on ``hierarchy`` and the engine ``engine="auto"`` will use.

    Nothing large is allocated: the junction trees are sized from their
    triangulations and from counts of feasible configurations (configurations in
    which every positive class has its ancestors positive). The policy: the tree
    engine on forests; on DAGs the cheaper of the dense and the sparse junction tree
    among those that fit ``budget_bytes``; otherwise loopy belief propagation, which
    is approximate (``mlpr_from_likelihoods`` then warns with
    :class:`~hmcpgm.exceptions.ApproximationWarning`).

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy the engines would run on.
    budget_bytes : int, default 4 GiB
        Memory the engine may use (structure plus the working memory of one object).
    max_clique : int, default 20
        The dense junction tree's largest clique.

    Returns
    -------
    InferencePlan
        One :class:`EngineEstimate` per engine, and the engine ``"auto"`` chooses.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> plan = inference_plan(Hierarchy.from_parents([None, None, [0, 1], [0, 1]]))
    >>> plan.engine, plan.exact
    ('sparse', True)
    >>> plan["sparse"].states < plan["junction"].states  # only feasible configurations
    True
    """
    hierarchy = check_hierarchy(hierarchy)
    check_size_options({"budget_bytes": budget_bytes, "max_clique": max_clique})
    return _plan(hierarchy, int(budget_bytes), int(max_clique))


@depends_on_registry
@lru_cache(maxsize=64)
def _plan(hierarchy, budget, max_clique):
    engines = [get_engine(n) for n in registered_engines()]
    estimates = tuple(e.cost(hierarchy, budget, max_clique) for e in engines if e.cost is not None)
    roles = {e.name: e.auto for e in engines}
    exact = [e for e in estimates if roles[e.engine] == "exact" and e.applies and e.exact]
    if exact:
        best = min(exact, key=lambda e: e.seconds_per_object)
        return InferencePlan(hierarchy.n_classes, hierarchy.kind, budget, estimates, best.engine, True)
    fallback = [e for e in estimates if roles[e.engine] == "fallback" and e.applies]
    if not fallback:  # pragma: no cover - the built-in loopy engine always applies
        raise RuntimeError("no engine of the registry can answer on this hierarchy")
    return InferencePlan(hierarchy.n_classes, hierarchy.kind, budget, estimates, fallback[0].engine, fallback[0].exact)


def choose_engine(hierarchy, version="full", *, budget_bytes=DEFAULT_BUDGET, max_clique=MAX_CLIQUE):
    """The engine ``engine="auto"`` runs for ``version``, and whether the answer is exact.

    The one policy shared by :func:`hmcpgm.mlpr_from_likelihoods`, the estimator, the
    benchmark and the command line: see :func:`inference_plan`. The nbh version
    solves small per-class networks (the dense junction tree, exact); indpt needs no
    network inference.

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy the engine would run on.
    version : {"full", "nbh", "indpt"}
        The mLPR version.
    budget_bytes : int, default 4 GiB
        Memory the engine may use (structure plus the working memory of one object).
    max_clique : int, default 20
        The dense junction tree's largest clique.

    Returns
    -------
    (str, bool)
        The engine's name and whether its answer is exact.
    """
    hierarchy = check_hierarchy(hierarchy)
    check_size_options({"budget_bytes": budget_bytes, "max_clique": max_clique})
    if version != "full":
        return ("tree" if hierarchy.is_forest else "junction"), True
    plan = _plan(hierarchy, int(budget_bytes), int(max_clique))
    return plan.engine, plan.exact


def engine_in_use(hierarchy, version="full", engine="auto", *, budget_bytes=DEFAULT_BUDGET, max_clique=MAX_CLIQUE):
    """The engine that ``mlpr_from_likelihoods(..., version=version, engine=engine)`` runs.

    And whether its answer is exact: what every output reports.

    Parameters
    ----------
    hierarchy : Hierarchy
        The hierarchy the engine would run on.
    version : {"full", "nbh", "indpt"}
        The mLPR version.
    engine : str
        The engine asked for; ``"auto"`` follows :func:`choose_engine`.
    budget_bytes : int, default 4 GiB
        Memory the engine may use (``engine="auto"`` only).
    max_clique : int, default 20
        The dense junction tree's largest clique (``engine="auto"`` only).

    Returns
    -------
    (str, bool)
        ``("indpt", True)`` for the indpt version, which needs no network inference.
    """
    hierarchy = check_hierarchy(hierarchy)
    if version == "indpt":
        return "indpt", True
    if engine == "auto":
        return choose_engine(hierarchy, version, budget_bytes=budget_bytes, max_clique=max_clique)
    return engine, is_exact(engine, hierarchy)


def approximation_message(plan):
    """The warning text when ``engine="auto"`` falls back to an approximate engine."""
    # the exact engines auto may run that take DAGs, and why each does not fit
    candidates = [get_engine(e.engine) for e in plan.estimates]
    why = "; ".join(f"{e.engine}: {e.note}" for e, c in zip(plan.estimates, candidates)
                    if c.auto == "exact" and not c.forests_only and not e.applies)
    return (
        f"engine='auto': no exact engine fits budget_bytes={plan.budget_bytes:,} on this "
        f"{plan.n_classes}-class DAG ({why}); the mLPRs come from the approximate "
        f"engine {plan.engine!r}. hmcpgm.inference_plan(hierarchy) shows each engine's cost; "
        "raise budget_bytes for an exact answer"
    )
