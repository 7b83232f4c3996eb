"""Names, constants and option checks shared by the score models (see :mod:`hmcpgm.likelihood`)."""

import numpy as np

from ..exceptions import InputError
from ..options import SCORE_MODELS, check_choice

POSTERIOR_MODELS = ("lpr", "precision", "isotonic", "platt", "logistic", "pooled", "auto")
AUTO_CANDIDATES = ("lpr", "isotonic", "platt", "pooled", "logistic")
AUTO_BASELINE = AUTO_CANDIDATES.index("logistic")  # kept unless another candidate is clearly better
TRANSFORMS = ("asinh", "none")
_BANDWIDTH_RULES = ("silverman", "scott", "normal_reference")
MIN_RATIO = 1e-12  # density models: smaller likelihood of a pair >= this times the larger


def check_options(kind, bandwidth, gridsize, eps, prior_count, min_count, transform, cv):
    check_choice(kind, "kind", SCORE_MODELS)
    if isinstance(bandwidth, str):
        if bandwidth not in _BANDWIDTH_RULES:
            raise InputError(
                f"bandwidth must be one of {_BANDWIDTH_RULES} or a positive number, got {bandwidth!r}"
            )
    elif isinstance(bandwidth, bool) or not (np.isscalar(bandwidth) and np.isfinite(bandwidth) and bandwidth > 0):
        raise InputError(f"bandwidth must be one of {_BANDWIDTH_RULES} or a positive number, got {bandwidth!r}")
    if isinstance(gridsize, bool) or not isinstance(gridsize, (int, np.integer)) or gridsize < 16:
        raise InputError(f"gridsize must be an int >= 16, got {gridsize!r}")
    if not (np.isscalar(eps) and 0 < eps < 0.5):
        raise InputError(f"eps must be a number in (0, 0.5), got {eps!r}")
    for name, value in (("prior_count", prior_count), ("min_count", min_count)):
        if isinstance(value, bool) or not (np.isscalar(value) and np.isfinite(value) and value >= 0):
            raise InputError(f"{name} must be a finite number >= 0, got {value!r}")
    if transform not in TRANSFORMS:
        raise InputError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if isinstance(cv, bool) or not isinstance(cv, (int, np.integer)) or cv < 2:
        raise InputError(f"cv must be an int of at least 2, got {cv!r}")
    return {"bandwidth": bandwidth, "gridsize": int(gridsize), "eps": float(eps), "prior_count": float(prior_count),
            "min_count": float(min_count), "transform": transform}
