"""mLPR engines: posterior marginals P(Y_k = 1 | scores) of the hierarchy's network.

One public entry point, :func:`mlpr_from_likelihoods`, takes a
:class:`~hmcpgm.LabelNetwork` and per-object evidence, with interchangeable
engines that all answer the same question (see ``docs/concepts.md``). The engines
are the rows of one table, the engine registry (:class:`Engine`,
:func:`engine_table`): each row holds the engine's runner, its options, where it
is exact, its cost model and the versions it serves, and every other place reads
it. The engines registered when this module is imported:

{engines}
``"auto"``
    never refuses for size: ``"tree"`` on forests; on DAGs the cheaper of
    ``"junction"`` and ``"sparse"`` that fits the memory budget, else ``"loopy"``
    with an :class:`~hmcpgm.exceptions.ApproximationWarning`.
    :func:`inference_plan` shows each engine's cost and the choice.

:data:`EXACTNESS` says, once, on which hierarchies each engine is exact.
:func:`compare_engines` runs engines side by side on the same objects and reports
their errors against an exact reference (pyAgrum, an optional extra, can be that
reference on hierarchies whose dense junction tree fits).
"""

import textwrap

from ._compare import EVIDENCE_REGIMES, compare_engines, errors_by_class_structure, synthetic_evidence
from ._loopy import LoopyReport
from ._mlpr import check_engine_options, engine_table, loopy_belief_propagation, mlpr_from_likelihoods
from ._plan import InferencePlan, choose_engine, engine_in_use, inference_plan
from ._registry import (
    ENGINES,
    EXACTNESS,
    Engine,
    EngineEstimate,
    always_exact,
    engine_names,
    get_engine,
    is_polytree,
    register_engine,
    unregister_engine,
)
from ._split import split_full_posterior

__all__ = ["mlpr_from_likelihoods", "check_engine_options", "loopy_belief_propagation", "LoopyReport", "inference_plan",
           "InferencePlan", "EngineEstimate", "choose_engine", "engine_in_use",
           "compare_engines", "EXACTNESS", "synthetic_evidence", "errors_by_class_structure", "EVIDENCE_REGIMES",
           "ENGINES", "Engine", "register_engine", "unregister_engine", "get_engine", "engine_names", "engine_table",
           "always_exact", "is_polytree", "split_full_posterior"]

__doc__ = __doc__.format(engines="".join(  # noqa: A001 - the engine list is read from the registry
    f'``"{name}"``\n' + textwrap.fill(get_engine(name).summary, 88, initial_indent="    ", subsequent_indent="    ")
    + "\n" for name in engine_names()))
