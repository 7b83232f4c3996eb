"""What each engine would cost on a hierarchy, and which one ``engine="auto"`` runs.

The plan is computed before any large allocation, from the triangulations and
counts of feasible configurations only (no table is built). Seconds per object come
from a cost model, work units times a constant per engine:

* tree: ``K`` (one message per class);
* dense junction tree: the dense table entries ``sum(2 ** |clique|)``, plus a
  per-clique overhead (numpy calls, amortised over a chunk of objects);
* sparse junction tree: ``2 * feasible states`` (an upward and a downward pass),
  plus a per-clique overhead (group tables, messages);
* loopy BP: ``(K + E) * iterations`` (``E`` edges; ``_LOOPY_ITERATIONS`` assumed).

The constants are seconds per work unit measured on the development machine (2
cores, shared) by ``python bench/inference.py``, which prints estimated against
measured times; they are meant for choosing an engine, not as promises.
"""

from dataclasses import dataclass
from functools import lru_cache

from .._validation import check_hierarchy
from ._engines import is_exact
from ._sparse_junction import DEFAULT_BUDGET

__all__ = [
    "EngineEstimate", "InferencePlan", "inference_plan", "choose_engine", "engine_in_use", "approximation_message",
]

MAX_CLIQUE = 20  # the dense junction tree's default largest clique

# seconds per work unit (see the module docstring); measured by bench/inference.py
_COST = {"tree": 2e-8, "junction": 1.5e-7, "sparse": 3.5e-8, "loopy": 3e-8}
_PER_CLIQUE = {"junction": 8e-6, "sparse": 2e-6}
_LOOPY_ITERATIONS = 10


@dataclass(frozen=True)
class EngineEstimate:
    """Cost of one engine on one hierarchy.

    Attributes
    ----------
    engine : str
    applies : bool
        The engine can answer within the memory budget.
    exact : bool
        Its answer is the exact posterior on this hierarchy.
    max_clique_size : int or None
        Largest clique of its triangulation (junction trees).
    states : int or None
        Table entries per object: dense entries, or feasible configurations.
    bytes_per_object : int or None
        Working memory per object (the sparse engine adds ``structure_bytes`` once).
    structure_bytes : int or None
    seconds_per_object : float or None
        From the cost model (one core).
    note : str
        Why it does not apply, or what it assumes.
    """

    engine: str
    applies: bool
    exact: bool
    max_clique_size: int = None
    states: int = None
    bytes_per_object: int = None
    structure_bytes: int = None
    seconds_per_object: float = None
    note: str = ""


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
        rows = [f"inference plan: {self.n_classes} classes ({self.kind}), budget {_size(self.budget_bytes)}; "
                f"auto runs {self.engine!r} ({'exact' if self.exact else 'approximate'})"]
        for e in self.estimates:
            parts = [f"  {e.engine:<9}", "applies" if e.applies else "refused", "exact" if e.exact else "approximate"]
            if e.max_clique_size is not None:
                parts.append(f"largest clique {e.max_clique_size}")
            if e.states is not None:
                parts.append(f"{e.states:.3g} states")
            if e.bytes_per_object is not None:
                parts.append(f"{_size(e.bytes_per_object)}/object")
            if e.structure_bytes:
                parts.append(f"structure {_size(e.structure_bytes)}")
            if e.seconds_per_object is not None:
                parts.append(f"~{e.seconds_per_object:.2g} s/object")
            if e.note:
                parts.append(e.note)
            rows.append(", ".join(parts))
        return "\n".join(rows)


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


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
    return _plan(hierarchy, int(budget_bytes), int(max_clique))


@lru_cache(maxsize=64)
def _plan(hierarchy, budget, max_clique):
    k = hierarchy.n_classes
    n_edges = len(hierarchy.edge_indices)
    loopy_exact = is_exact("loopy", hierarchy)
    loopy = EngineEstimate(
        "loopy", True, loopy_exact, bytes_per_object=8 * (3 * k + 2 * n_edges),
        seconds_per_object=_COST["loopy"] * (k + n_edges) * _LOOPY_ITERATIONS,
        note=("exact (the hierarchy is a polytree)" if loopy_exact else "approximate on this DAG")
        + f"; assumes {_LOOPY_ITERATIONS} iterations",
    )
    if hierarchy.is_forest:
        tree = EngineEstimate("tree", True, is_exact("tree", hierarchy), bytes_per_object=8 * 4 * k,
                              seconds_per_object=_COST["tree"] * k)
        skip = "not needed: the tree engine is exact on forests"
        estimates = (tree, EngineEstimate("junction", False, is_exact("junction", hierarchy), note=skip),
                     EngineEstimate("sparse", False, is_exact("sparse", hierarchy), note=skip), loopy)
        return InferencePlan(k, hierarchy.kind, budget, estimates, "tree", True)
    tree = EngineEstimate("tree", False, is_exact("tree", hierarchy),
                          note="needs a tree or forest (some class has several parents)")
    estimates = [tree, _dense(hierarchy, budget, max_clique), _sparse(hierarchy, budget), loopy]
    exact = [e for e in estimates[1:3] if e.applies]
    if exact:
        best = min(exact, key=lambda e: e.seconds_per_object)
        return InferencePlan(k, hierarchy.kind, budget, tuple(estimates), best.engine, True)
    return InferencePlan(k, hierarchy.kind, budget, tuple(estimates), "loopy", loopy_exact)


def _dense(hierarchy, budget, max_clique):
    from ._triangulation import triangulation

    sets, _ = triangulation(hierarchy, "min-fill")
    width = max(len(c) for c in sets)
    entries = sum(2 ** len(c) for c in sets)
    # log potentials, beliefs and messages (float64), and a bool grid per clique
    per_object = 8 * 3 * entries
    structure = sum(2 ** len(c) * len(c) for c in sets)
    note = ""
    applies = True
    if width > max_clique:
        applies = False
        note = f"largest clique {width} > max_clique={max_clique}"
    elif structure + per_object > budget:
        applies = False
        note = f"needs {_size(structure + per_object)} > budget"
    return EngineEstimate("junction", applies, is_exact("junction", hierarchy), width, entries, per_object, structure,
                          _COST["junction"] * entries + _PER_CLIQUE["junction"] * len(sets), note)


def _sparse(hierarchy, budget):
    from ._sparse_junction import sparse_size

    size = sparse_size(hierarchy)
    if size["criterion"] is None:
        width = size["candidates"]["min-fill"]["max_clique_size"]
        return EngineEstimate("sparse", False, is_exact("sparse", hierarchy), width,
                              note="a clique wider than 62 classes")
    need = size["structure_bytes"] + size["object_bytes"]
    applies = need <= budget
    note = f"{size['criterion']} triangulation, dense would be {size['dense_states']:.3g} states"
    if not applies:
        note = f"needs {_size(need)} > budget; " + note
    return EngineEstimate("sparse", applies, is_exact("sparse", hierarchy), size["max_clique_size"],
                          size["total_states"], size["object_bytes"], size["structure_bytes"],
                          _COST["sparse"] * 2 * size["total_states"] + _PER_CLIQUE["sparse"] * len(size["counts"]),
                          note)


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
    why = "; ".join(f"{e.engine}: {e.note}" for e in plan.estimates[1:3] if not e.applies)
    return (
        f"engine='auto': no exact engine fits budget_bytes={plan.budget_bytes:,} on this "
        f"{plan.n_classes}-class DAG ({why}); the mLPRs come from loopy belief propagation "
        "and are approximate. hmcpgm.inference_plan(hierarchy) shows each engine's cost; "
        "raise budget_bytes for an exact answer"
    )
