"""The engine registry: one table of every mLPR engine, read by everything that names an engine.

Each :class:`Engine` says, once: how to run it (``run``, on per-class log
likelihoods, and optionally ``direct``, on the raw likelihood array), the options
it takes, on which hierarchies its answer is exact, what it costs (the cost model
of :func:`~hmcpgm.inference.inference_plan`), which mLPR versions it serves, how
the nbh and indpt versions use it and how ``engine="auto"`` treats it.
:func:`~hmcpgm.mlpr_from_likelihoods`, :func:`~hmcpgm.inference.inference_plan`,
:func:`~hmcpgm.inference.engine_in_use`, :func:`~hmcpgm.inference.compare_engines`,
cross-fitting, the estimator's parameter check, the command line and the module
docstring of :mod:`hmcpgm.inference` all read this table; adding an engine is one
entry in ``_BUILT_IN`` below (its code in a module of its own) plus its tests
(docs/concepts.md, "Adding an engine"). :func:`register_engine` adds one at run time.

Cost model (seconds per object, one core): work units times a constant per engine,
measured on the development machine (2 cores, shared) by ``python
bench/inference.py``, which prints estimated against measured times; meant for
choosing an engine, not as promises:

* tree: ``K`` (one message per class);
* dense junction tree: the dense table entries ``sum(2 ** |clique|)``, plus a
  per-clique overhead (numpy calls, amortised over a chunk of objects);
* sparse junction tree: ``2 * feasible states`` (an upward and a downward pass),
  plus a per-clique overhead (group tables, messages);
* loopy BP: ``(K + E) * iterations`` (``E`` edges; ``LOOPY_ITERATIONS`` assumed).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InputError
from ..options import VERSIONS

__all__ = [
    "Engine", "EngineEstimate", "EXACTNESS", "ENGINES", "register_engine", "unregister_engine", "get_engine",
    "engine_names", "is_exact", "is_polytree", "always_exact", "size_text", "MAX_CLIQUE", "LOOPY_ITERATIONS",
    "check_size_options",
]

MAX_CLIQUE = 20  # the dense junction tree's default largest clique
LOOPY_ITERATIONS = 10  # the loopy cost model's assumed iterations per object
NBH_MODES = ("grouped", "own_on_dags", "subgraphs")
AUTO_ROLES = (None, "exact", "fallback")


def always_exact(hierarchy):
    """True: an engine whose answer is the exact posterior on every hierarchy it accepts.

    Parameters
    ----------
    hierarchy : Hierarchy
        Any hierarchy (not read).

    Returns
    -------
    bool
        Always True.
    """
    return True


def is_polytree(hierarchy):
    """Whether the undirected skeleton has no cycle (a forest: E = K - number of components).

    Parameters
    ----------
    hierarchy : Hierarchy
        Any hierarchy.

    Returns
    -------
    bool
        True for forests and polytrees.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> is_polytree(Hierarchy.from_parents([None, None, [0, 1]]))  # two roots, one child
    True
    >>> is_polytree(Hierarchy.from_parents([None, 0, 0, [1, 2]]))  # a diamond
    False
    """
    import networkx as nx

    g = hierarchy.graph
    return g.number_of_edges() == g.number_of_nodes() - nx.number_weakly_connected_components(g)


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
class Engine:
    """One mLPR engine: everything the package needs to know about it, in one place.

    Attributes
    ----------
    name : str
        What ``engine=`` is set to.
    summary : str
        One paragraph for the documentation (the module docstring of :mod:`hmcpgm.inference`).
    run : callable
        ``run(hierarchy, theta, l0, l1, options)`` -> ``((K, M) posterior, report or None)``: the full
        version on ``(K, M)`` log likelihoods normalised per pair (see ``inference/_common.py``);
        ``options`` holds only the options the engine takes. None for a reference that only runs
        ``direct``.
    options : frozenset of str
        The options it takes (anything else is refused in one line).
    manual_options : frozenset of str
        Those of ``options`` that ``engine="auto"`` does not take (only asked for by name).
    auto_options : dict
        Options ``engine="auto"`` sets when it runs this engine.
    exact_on : callable
        ``exact_on(hierarchy)`` -> whether its answer is the exact posterior there.
    exactness : str
        The same in words (the ``EXACTNESS`` table).
    versions : tuple of str
        The mLPR versions it serves.
    forests_only : bool
        It refuses DAGs (one-line :class:`~hmcpgm.exceptions.InferenceError`).
    direct : callable or None
        ``direct(hierarchy, theta, likelihoods, version, options)`` -> ``(M, K)`` mLPRs, or None when
        it leaves that version to ``run``: for engines that read the raw ``(M, K, 2)`` likelihoods.
    nbh : {"grouped", "own_on_dags", "subgraphs"}
        How the nbh version uses it: ``"grouped"`` solves the neighbourhoods exactly, grouped by
        shape (the answer of any exact engine); ``"own_on_dags"`` runs the engine itself on each
        reduced neighbourhood that is not a forest (approximate engines); ``"subgraphs"`` runs it on
        each class's neighbourhood sub-hierarchy, by definition.
    prior : callable or None
        indpt version: ``prior(hierarchy, theta, options)`` -> ``(K,)`` prior marginals P(Y_k = 1), or
        a tuple of two ``(K,)`` arrays, log P(Y_k = 0) and log P(Y_k = 1) (exact near 0 and 1 and below
        the float range); None uses the network's closed form.
    cost : callable or None
        ``cost(hierarchy, budget_bytes, max_clique)`` -> :class:`EngineEstimate`, the engine's row of
        :func:`~hmcpgm.inference.inference_plan`; None: not in the plan.
    auto : {None, "exact", "fallback"}
        ``"exact"``: ``engine="auto"`` may run it when its estimate applies (the cheapest such wins);
        ``"fallback"``: it runs when none of those applies; None: only by name.
    cross_fit_engine : str or None
        The engine cross-fitting runs in its place when ``engine="auto"`` picks it (a slow exact
        engine may stand aside for a fast one there); None: itself.
    reference_only : bool
        Not an engine of :func:`~hmcpgm.mlpr_from_likelihoods`: only a reference of
        :func:`~hmcpgm.inference.compare_engines`.
    fits : callable or None
        ``fits(hierarchy, budget_bytes)`` -> ``(bool, note)``: whether it fits the budget, asked
        before it runs in :func:`~hmcpgm.inference.compare_engines`.
    """

    name: str
    summary: str
    run: object = None
    options: frozenset = frozenset()
    manual_options: frozenset = frozenset()
    auto_options: dict = field(default_factory=dict)
    exact_on: object = always_exact
    exactness: str = "always"
    versions: tuple = VERSIONS
    forests_only: bool = False
    direct: object = None
    nbh: str = "grouped"
    prior: object = None
    cost: object = None
    auto: str = None
    cross_fit_engine: str = None
    reference_only: bool = False
    fits: object = None

    def __post_init__(self):
        object.__setattr__(self, "options", frozenset(self.options))
        object.__setattr__(self, "manual_options", frozenset(self.manual_options))
        if not isinstance(self.name, str) or not self.name or self.name == "auto":
            raise InputError(f"an engine's name must be a non-empty string other than 'auto', got {self.name!r}")
        if self.run is None and self.direct is None:
            raise InputError(f"engine {self.name!r} needs a run or a direct function")
        if not self.manual_options <= self.options:
            raise InputError(f"engine {self.name!r}: manual_options must be among its options")
        if self.nbh not in NBH_MODES:
            raise InputError(f"engine {self.name!r}: nbh must be one of {NBH_MODES}, got {self.nbh!r}")
        if self.auto not in AUTO_ROLES:
            raise InputError(f"engine {self.name!r}: auto must be one of {AUTO_ROLES}, got {self.auto!r}")
        if self.auto is not None and self.cost is None:
            raise InputError(f"engine {self.name!r}: engine='auto' can only run an engine with a cost model")
        bad = [v for v in self.versions if v not in VERSIONS]
        if bad or not self.versions:
            raise InputError(f"engine {self.name!r}: versions must be among {VERSIONS}, got {self.versions!r}")

    @property
    def exact_everywhere(self):
        """bool: its answer is exact on every hierarchy it accepts (it can be a reference)."""
        return self.exact_on is always_exact

    @property
    def auto_accepts(self):
        """frozenset: the options ``engine="auto"`` takes on behalf of this engine."""
        return self.options - self.manual_options


_ENGINES = {}


def register_engine(engine, *, replace=False):
    """Add an engine to the registry (it joins ``ENGINES``, the plan if it has a cost, and the docs).

    Parameters
    ----------
    engine : Engine
        The engine.
    replace : bool, default False
        Replace an engine of the same name instead of refusing it.

    Returns
    -------
    Engine
        The engine registered.

    Raises
    ------
    InputError
        Not an :class:`Engine`, or a name already taken (without ``replace``).
    """
    if not isinstance(engine, Engine):
        raise InputError(f"engine must be an hmcpgm.inference.Engine, got {type(engine).__name__}")
    if engine.name in _ENGINES and not replace:
        raise InputError(f"an engine named {engine.name!r} is already registered (pass replace=True)")
    _ENGINES[engine.name] = engine
    _clear_caches()
    return engine


def unregister_engine(name):
    """Remove an engine added by :func:`register_engine`.

    Parameters
    ----------
    name : str
        Its name.

    Returns
    -------
    Engine
        The engine removed.

    Raises
    ------
    InputError
        No engine of that name, or a built-in engine.
    """
    if name in _BUILT_IN_NAMES:
        raise InputError(f"{name!r} is a built-in engine and cannot be unregistered")
    if name not in _ENGINES:
        raise InputError(f"no engine named {name!r} is registered")
    engine = _ENGINES.pop(name)
    _clear_caches()
    return engine


_CACHES = []  # functions whose lru_cache depends on the registry (the plan)


def depends_on_registry(func):
    """Mark an ``lru_cache``-wrapped function to be cleared whenever the registry changes.

    Parameters
    ----------
    func : callable
        A function wrapped by :func:`functools.lru_cache`.

    Returns
    -------
    callable
        ``func`` itself.
    """
    _CACHES.append(func)
    return func


def _clear_caches():
    for func in _CACHES:
        func.cache_clear()


def get_engine(name):
    """The registered :class:`Engine` called ``name`` (not ``"auto"``, which picks one).

    Parameters
    ----------
    name : str
        An engine name.

    Returns
    -------
    Engine
        Its entry in the registry.

    Raises
    ------
    InputError
        No engine of that name.

    Examples
    --------
    >>> get_engine("loopy").exactness
    'polytrees only (DAGs whose undirected skeleton has no loop)'
    """
    try:
        return _ENGINES[name]
    except (KeyError, TypeError):
        listed = ", ".join(repr(n) for n in _ENGINES)
        raise InputError(f"engine must be one of {listed}; got {name!r}") from None


def engine_names(*, references=False):
    """The registered engines' names, in registry order (``"auto"`` not included).

    Parameters
    ----------
    references : bool, default False
        Include the engines that are only references of :func:`~hmcpgm.inference.compare_engines`.

    Returns
    -------
    tuple of str
        The names.
    """
    return tuple(n for n, e in _ENGINES.items() if references or not e.reference_only)


class _Names(Sequence):
    """The live tuple of names ``engine=`` takes: ``"auto"`` and every registered engine."""

    def _names(self):
        return ("auto", *engine_names())

    def __getitem__(self, i):
        return self._names()[i]

    def __len__(self):
        return len(self._names())

    def __contains__(self, value):
        return value in self._names()

    def __eq__(self, other):
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self):
        return hash(self._names())

    def __repr__(self):
        return repr(self._names())


class _Exactness(Mapping):
    """The live mapping engine -> on which hierarchies its answer is exact (words)."""

    def __getitem__(self, name):
        return _ENGINES[name].exactness

    def __iter__(self):
        return iter(_ENGINES)

    def __len__(self):
        return len(_ENGINES)

    def __repr__(self):
        return repr(dict(self))


ENGINES = _Names()
"""The values of ``engine=``: ``"auto"`` then every registered engine (a live view of the registry)."""

EXACTNESS = _Exactness()
"""engine -> the hierarchies on which its answer is the exact posterior (a live view of the registry)."""


def is_exact(engine, hierarchy):
    """Whether ``engine``'s answer is the exact posterior on ``hierarchy`` (the registry's ``exact_on``).

    Parameters
    ----------
    engine : str
        A registered engine (not ``"auto"``), e.g. ``"pyagrum"``.
    hierarchy : Hierarchy
        The hierarchy it would run on.

    Returns
    -------
    bool
        True when the engine's answer is the exact posterior there.

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> h = Hierarchy.from_parents([None, 0, 0, [1, 2]])  # a diamond: one undirected loop
    >>> is_exact("sparse", h), is_exact("loopy", h)
    (True, False)
    """
    if engine not in _ENGINES:
        raise KeyError(engine)
    return bool(_ENGINES[engine].exact_on(hierarchy))


def is_positive_int(v):
    """Whether ``v`` is an int (Python's or numpy's, not a bool) of at least 1."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and v >= 1


def _positive_number(v):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) \
        and bool(np.isfinite(v)) and v > 0


_SIZE_OPTIONS = {  # option -> (test, what it must be)
    "max_clique": (is_positive_int, "a positive int"),
    "max_classes": (is_positive_int, "a positive int"),
    "budget_bytes": (_positive_number, "a positive finite number of bytes"),
    "progress": (lambda v: isinstance(v, (bool, np.bool_)), "True or False"),
}


def check_size_options(options):
    """Refuse, in one line naming it, a size option of the built-in engines that is not one.

    Parameters
    ----------
    options : dict
        Engine options; ``max_clique`` and ``max_classes`` must be positive ints,
        ``budget_bytes`` a positive finite number, ``progress`` a bool (the others
        are not looked at).

    Raises
    ------
    InputError
        The first option that fails.

    Examples
    --------
    >>> check_size_options({"max_clique": 12, "budget_bytes": 2**30})
    >>> check_size_options({"max_clique": None})
    Traceback (most recent call last):
    ...
    hmcpgm.exceptions.InputError: max_clique must be a positive int, got None
    """
    for name, (ok, what) in _SIZE_OPTIONS.items():
        if name in options and not ok(options[name]):
            raise InputError(f"{name} must be {what}, got {options[name]!r}")


def size_text(n):
    """A byte count for people: ``1.5 KiB``, ``4 GiB``.

    Parameters
    ----------
    n : float
        Bytes.

    Returns
    -------
    str
        The size with a binary unit.
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


# ---------------------------------------------------------------------------------------------------------------
# The built-in engines. Runners import their modules when first called, so importing the registry stays cheap.

# seconds per work unit (see the module docstring); measured by bench/inference.py. sparse: per state and
# pass, from bench/sparse_junction.py (0.12-0.16 s of CPU per cellcycle_GO object, 2 passes over 1.2e7 states,
# in batches of 50 objects per core: 5e-9 to 7e-9), rounded up for the smaller batches of short calls
_COST = {"tree": 2e-8, "junction": 1.5e-7, "sparse": 1e-8, "loopy": 3e-8}
_PER_CLIQUE = {"junction": 8e-6, "sparse": 2e-6}
_NOT_NEEDED = "not needed: the tree engine is exact on forests (it still runs when named)"


def _tree_run(hierarchy, theta, l0, l1, options):
    from ._tree import tree_full

    return tree_full(hierarchy, theta, l0, l1), None


def _tree_direct(hierarchy, theta, likelihoods, version, options):
    if version != "full":
        return None
    from ._tree import tree_full_from_likelihoods

    return tree_full_from_likelihoods(hierarchy, theta, likelihoods)  # logs taken in the parallel kernel


def _tree_cost(hierarchy, budget, max_clique):
    if not hierarchy.is_forest:
        return EngineEstimate("tree", False, is_exact("tree", hierarchy),
                              note="needs a tree or forest (some class has several parents)")
    k = hierarchy.n_classes
    return EngineEstimate("tree", True, is_exact("tree", hierarchy), bytes_per_object=8 * 4 * k,
                          seconds_per_object=_COST["tree"] * k)


def _junction_run(hierarchy, theta, l0, l1, options):
    from ._junction import junction_full

    return junction_full(hierarchy, theta, l0, l1, options.get("max_clique", MAX_CLIQUE)), None


def _junction_cost(hierarchy, budget, max_clique):
    if hierarchy.is_forest:
        return EngineEstimate("junction", False, is_exact("junction", hierarchy), note=_NOT_NEEDED)
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
        note = f"needs {size_text(structure + per_object)} > budget"
    return EngineEstimate("junction", applies, is_exact("junction", hierarchy), width, entries, per_object, structure,
                          _COST["junction"] * entries + _PER_CLIQUE["junction"] * len(sets), note)


def _sparse_run(hierarchy, theta, l0, l1, options):
    from ._sparse_junction import DEFAULT_BUDGET, sparse_junction_full

    return sparse_junction_full(hierarchy, theta, l0, l1, budget_bytes=options.get("budget_bytes", DEFAULT_BUDGET),
                                progress=options.get("progress", False)), None


def _sparse_cost(hierarchy, budget, max_clique):
    if hierarchy.is_forest:
        return EngineEstimate("sparse", False, is_exact("sparse", hierarchy), note=_NOT_NEEDED)
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
        note = f"needs {size_text(need)} > budget; " + note
    return EngineEstimate("sparse", applies, is_exact("sparse", hierarchy), size["max_clique_size"],
                          size["total_states"], size["object_bytes"], size["structure_bytes"],
                          _COST["sparse"] * 2 * size["total_states"] + _PER_CLIQUE["sparse"] * len(size["counts"]),
                          note)


def _loopy_run(hierarchy, theta, l0, l1, options):
    from ._loopy import loopy_full

    opts = {n: options[n] for n in ("damping", "tol", "max_iter", "start") if n in options}
    return loopy_full(hierarchy, theta, l0, l1, **opts)


def _loopy_cost(hierarchy, budget, max_clique):
    k = hierarchy.n_classes
    n_edges = len(hierarchy.edge_indices)
    exact = is_exact("loopy", hierarchy)
    return EngineEstimate(
        "loopy", True, exact, bytes_per_object=8 * (3 * k + 2 * n_edges),
        seconds_per_object=_COST["loopy"] * (k + n_edges) * LOOPY_ITERATIONS,
        note=("exact (the hierarchy is a polytree)" if exact else "approximate on this DAG")
        + f"; assumes {LOOPY_ITERATIONS} iterations",
    )


def _pgmpy_direct(hierarchy, theta, likelihoods, version, options):
    from ._reference import pgmpy_mlpr

    return pgmpy_mlpr(hierarchy, theta, likelihoods, version)


def _enumerate_run(hierarchy, theta, l0, l1, options):
    from ._enumerate import MAX_ENUMERATE, enumerate_full

    return enumerate_full(hierarchy, theta, l0, l1, options.get("max_classes", MAX_ENUMERATE)), None


def _enumerate_prior(hierarchy, theta, options):
    from ._enumerate import MAX_ENUMERATE, enumerate_prior

    return enumerate_prior(hierarchy, theta, options.get("max_classes", MAX_ENUMERATE))


def _pyagrum_direct(hierarchy, theta, likelihoods, version, options):
    from ._pyagrum import pyagrum_mlpr

    return pyagrum_mlpr(hierarchy, theta, likelihoods)


def _pyagrum_fits(hierarchy, budget_bytes):
    from ._pyagrum import pyagrum_fit

    return pyagrum_fit(hierarchy, budget_bytes)


_BUILT_IN = (
    Engine(
        "tree", "batched exact sum-product on trees and forests (a compiled kernel, objects in parallel).",
        run=_tree_run, direct=_tree_direct, forests_only=True, exactness="always (it refuses DAGs)",
        cost=_tree_cost, auto="exact",
    ),
    Engine(
        "junction", "batched exact junction tree for DAGs, compiled once per hierarchy (dense clique tables: "
        "2^width entries per clique).",
        run=_junction_run, options={"max_clique"}, cost=_junction_cost, auto="exact",
    ),
    Engine(
        "sparse", "exact junction tree that stores only the configurations the hierarchy allows (a positive "
        "class has positive ancestors); the one exact engine for the Gene Ontology hierarchies. Objects are "
        "streamed in batches within ``budget_bytes``.",
        run=_sparse_run, options={"budget_bytes", "progress"}, cost=_sparse_cost, auto="exact",
        cross_fit_engine="loopy",  # ~0.1 s per GO object, for every row, fold and exponent: cross-fitting uses loopy
    ),
    Engine(
        "loopy", "batched loopy belief propagation (approximate on DAGs, exact on forests); "
        ":func:`loopy_belief_propagation` also returns a per-object convergence report.",
        run=_loopy_run, options={"damping", "tol", "max_iter", "start", "return_report"},
        manual_options={"start", "return_report"},
        auto_options={"start": "forest"},  # measured closer to the exact answer (bench/loopy_accuracy.py)
        exact_on=is_polytree, exactness="polytrees only (DAGs whose undirected skeleton has no loop)",
        nbh="own_on_dags", cost=_loopy_cost, auto="fallback",
    ),
    Engine(
        "pgmpy", "pgmpy exact inference, one object and one class at a time (slow reference).",
        direct=_pgmpy_direct,
    ),
    Engine(
        "enumerate", "brute force over all 2^K configurations (tiny hierarchies, tests).",
        run=_enumerate_run, options={"max_classes"}, nbh="subgraphs", prior=_enumerate_prior,
    ),
    Engine(
        "pyagrum", "pyAgrum's exact inference (LazyPropagation), an independent reference of "
        ":func:`compare_engines` (an optional extra; full version only).",
        direct=_pyagrum_direct, versions=("full",), reference_only=True, fits=_pyagrum_fits,
    ),
)
_BUILT_IN_NAMES = frozenset(e.name for e in _BUILT_IN)
for _engine in _BUILT_IN:
    register_engine(_engine)
del _engine
