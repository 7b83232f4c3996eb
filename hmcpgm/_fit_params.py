"""The parameters ``fit`` used: kept by ``fit``, and a prediction after one of them was changed refused.

scikit-learn's rule is that a parameter set with ``set_params`` takes effect at the
next ``fit``. Before, some of :class:`hmcpgm.MLPR`'s and
:class:`hmcpgm.corrections.HierarchicalCorrection`'s did at once, others (a
calibration changed from isotonic to maxnorm, ``recalibrate=False``) were ignored
without a word, and a threshold of 2 was accepted (a review, audit42).
"""

import numpy as np

from .exceptions import InputError

__all__ = ["PREDICT_TIME", "check_threshold", "fit_time_params", "check_fit_time_params"]

#: MLPR's parameters that predictions read as they are now: the rest shaped what ``fit`` learned.
#: ``version`` has a rule of its own (:meth:`hmcpgm.MLPR.version_in_use`).
PREDICT_TIME = ("version", "engine", "inference_options", "threshold", "verbose")


def check_threshold(threshold):
    """Refuse a ``threshold`` that is not a number in (0, 1), in one line."""
    if isinstance(threshold, bool) or not (isinstance(threshold, (int, float, np.number)) and 0 < threshold < 1):
        raise InputError(f"threshold must be a number in (0, 1), got {threshold!r}")


def _state(value):
    """What a parameter's value is, for comparing it later: a copy that a change made in place cannot reach.

    An estimator (``OutOfFoldScores``' classifier) is its type and parameters, so an
    equal new object is the same value and ``estimator__C=100`` a change; dicts and
    sequences are copied (``options["t"] = 0.9`` after fit is a change); a bool is
    told from the number it equals. Anything else (a ``Hierarchy``, a number) is
    kept as it is and compared with ``==``.
    """
    if hasattr(value, "get_params") and not isinstance(value, type):
        return ("estimator", type(value), _state(value.get_params(deep=False)))
    if isinstance(value, dict):
        return ("dict", tuple((k, _state(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("sequence", tuple(_state(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    return value


def _same(a, b):
    if a is b:  # the hierarchy given to fit: compared in no time
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # compared elementwise, or not comparable: other values
        return False


def fit_time_params(estimator, predict_time=PREDICT_TIME):
    """The parameters ``fit`` used, but those predictions read as they are now: kept by ``fit`` once it succeeds.

    Parameters
    ----------
    estimator : BaseEstimator
    predict_time : tuple of str
        The parameters read at prediction.

    Returns
    -------
    dict
        Name -> (its state, its ``repr`` for messages).
    """
    return {k: (_state(v), repr(v)) for k, v in estimator.get_params(deep=False).items() if k not in predict_time}


def check_fit_time_params(estimator, fitted):
    """Refuse a prediction after a parameter that ``fit`` used was changed (``set_params``), in one line.

    scikit-learn's rule is that a parameter takes effect at the next ``fit``; here
    some did at once and others were ignored without a word (a review, audit42).
    A prediction now says which one changed.

    Parameters
    ----------
    estimator : BaseEstimator
    fitted : dict or None
        :func:`fit_time_params` as ``fit`` kept them (None: not kept, nothing checked).

    Raises
    ------
    InputError
        Naming the parameter, its value now and the one fitted with.
    """
    if not fitted:
        return
    now = estimator.get_params(deep=False)
    for name, (old, shown) in fitted.items():
        if name in now and not _same(_state(now[name]), old):
            raise InputError(f"{name} was set to {now[name]!r} after fitting with {shown}; it shapes what fit "
                             f"learned, so it takes effect at the next fit: call fit again, or set it back")
