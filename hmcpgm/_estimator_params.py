"""The parameter checks of :class:`hmcpgm.MLPR`, run at the start of ``fit`` and when a model is loaded."""

import numpy as np

from ._fit_params import check_threshold
from ._validation import check_hierarchy
from .exceptions import InputError
from .inference import ENGINES, check_engine_options
from .likelihood import SCORE_MODELS
from .network import check_pseudo_count
from .options import PRIORS, VERSIONS, check_choice, check_pool, check_stack

__all__ = ["check_params"]

def check_params(estimator):
    """Check the parameters of an :class:`MLPR` (at the start of ``fit``, and on loading a model).

    Parameters
    ----------
    estimator : MLPR
        The estimator whose parameters (``get_params``) are checked.

    Raises
    ------
    InputError
        A parameter has a wrong type or value; the message names it.
    """
    from .likelihood import POSTERIOR_MODELS
    from .tempering import GROUPINGS

    check_choice(estimator.version, "version", ("auto", *VERSIONS))
    check_choice(estimator.score_model, "score_model", SCORE_MODELS)
    if estimator.tempering is not None and estimator.tempering not in GROUPINGS:
        raise InputError(f"tempering must be one of {', '.join(map(repr, GROUPINGS))} or None (exponent 1, the "
                         f"paper's model); got {estimator.tempering!r}")
    from .second_stage import CONSISTENCY

    check_choice(estimator.consistency, "consistency", ("auto", *CONSISTENCY))
    check_pool(estimator.pool)
    check_stack(estimator.stack)
    check_choice(estimator.prior, "prior", ("auto", *PRIORS))
    if not isinstance(estimator.recalibrate, bool):
        raise InputError(f"recalibrate must be True or False, got {estimator.recalibrate!r}")
    if estimator._cross_fits() and estimator.score_model not in POSTERIOR_MODELS:
        raise InputError(
            f"score_model={estimator.score_model!r} is a density model, which the cross-fitting of "
            "version='auto', tempering and recalibrate does not support; use one of "
            f"{POSTERIOR_MODELS}, or a fixed version with tempering=None and recalibrate=False"
        )
    if isinstance(estimator.cv, bool) or not isinstance(estimator.cv, (int, np.integer)) or estimator.cv < 2:
        raise InputError(f"cv must be an integer >= 2, got {estimator.cv!r}")
    if (isinstance(estimator.random_state, bool) or not isinstance(estimator.random_state, (int, np.integer))
            or not 0 <= estimator.random_state < 2**32):
        raise InputError(f"random_state must be an integer in [0, 2**32 - 1] (a seed), got {estimator.random_state!r}")
    check_choice(estimator.engine, "engine", ENGINES)
    if estimator.hierarchy is not None:
        check_hierarchy(estimator.hierarchy)
    opts = estimator.inference_options
    if opts is not None and not isinstance(opts, dict):
        raise InputError(f"inference_options must be a dict or None, got {type(opts).__name__}")
    if opts and "return_report" in opts:
        raise InputError(
            "inference_options cannot contain 'return_report'; call "
            "hmcpgm.loopy_belief_propagation for a convergence report"
        )
    check_engine_options(estimator.engine, opts or {})  # here, not at the first prediction
    for name in ("close_labels", "allow_empty", "verbose"):
        if not isinstance(getattr(estimator, name), bool):
            raise InputError(f"{name} must be True or False, got {getattr(estimator, name)!r}")
    check_threshold(estimator.threshold)
    check_pseudo_count(estimator.pseudo_count)
