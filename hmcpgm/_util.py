"""Small helpers shared across hmcpgm's modules: message previews, repeats, warnings, JSON records."""

import math
import os
import sys
import warnings
from collections.abc import Iterable

import numpy as np

__all__ = ["as_names", "json_ready", "json_records", "plain_name", "preview", "repeated", "warn"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def plain_name(name):
    """A numpy scalar as the Python scalar it equals (``np.str_("a")`` -> ``"a"``), anything else unchanged.

    Both hash and compare alike, so lookups by either still work; the plain one
    prints as users wrote it (numpy 2 prints ``np.str_('a')`` in messages and reprs).

    Examples
    --------
    >>> plain_name(np.str_("a")), plain_name(np.int64(2)), plain_name(("t", 1))
    ('a', 2, ('t', 1))
    """
    return name.item() if isinstance(name, np.generic) else name


def json_records(frame):
    """A DataFrame as JSON-ready records: numpy scalars as Python ones, NaN, infinities and missing values as None.

    Plain Python rather than ``DataFrame.to_json``: floats keep all their digits,
    and a Ctrl-C landing inside cannot leave pandas' JSON encoder broken (with
    pandas 3.1 the next ``to_json`` of the process then crashes it).

    Examples
    --------
    >>> import pandas as pd
    >>> json_records(pd.DataFrame({"a": [0.1 + 0.2, np.nan], "b": [[np.float64(1.0)], None], "c": ["x", "y"]}))
    [{'a': 0.30000000000000004, 'b': [1.0], 'c': 'x'}, {'a': None, 'b': None, 'c': 'y'}]
    """
    return [{str(k): json_ready(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def json_ready(value):
    """``value`` for ``json.dumps``: numpy scalars as Python ones, NaN, infinities and missing values as None.

    Lists, tuples, arrays and dicts (keys as strings) are converted throughout.

    Examples
    --------
    >>> json_ready({"fmax": np.float64(0.5), "auprc": float("nan"), "n": [np.int64(2)]})
    {'fmax': 0.5, 'auprc': None, 'n': [2]}
    """
    import pandas as pd

    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    value = plain_name(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return None if value is None or value is pd.NA or value is pd.NaT else value


def as_names(names, is_name):
    """``names`` as a collection of names: a string, a known name or anything not iterable is one name.

    ``is_name(names)`` says whether ``names`` itself names something (a tuple can);
    an unhashable value that it cannot look up is a collection.

    Examples
    --------
    >>> as_names("ab", {"a", "b"}.__contains__), as_names(5, {"a"}.__contains__), as_names(["a"], lambda n: False)
    (['ab'], [5], ['a'])
    """
    try:
        single = isinstance(names, str) or is_name(names)
    except TypeError:  # unhashable: a collection of names
        single = False
    return [names] if single or not isinstance(names, Iterable) else names


def preview(items, limit=5):
    """``[a, b, c, ... (N in all)]``: the first ``limit`` items, for error messages.

    Numpy scalars show as the Python scalars they equal (:func:`plain_name`).

    Examples
    --------
    >>> preview(range(8), 3)
    '[0, 1, 2, ... (8 in all)]'
    """
    items = list(items)
    shown = ", ".join(repr(plain_name(i)) for i in items[:limit])
    more = f", ... ({len(items)} in all)" if len(items) > limit else ""
    return f"[{shown}{more}]"


def repeated(items):
    """The items that occur more than once, each repeat listed, in order of appearance.

    Examples
    --------
    >>> repeated(["a", "b", "a", "a"])
    ['a', 'a']
    """
    seen, dup = set(), []
    for item in items:
        if item in seen:
            dup.append(item)
        seen.add(item)
    return dup


def _user_stacklevel():
    """The stacklevel of the first frame outside hmcpgm (the user's call site)."""
    frame = sys._getframe(2)  # the caller of warn()
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn(message, category):
    """``warnings.warn`` attributed to the user's code, whatever depth hmcpgm called from."""
    warnings.warn(message, category, stacklevel=_user_stacklevel())


def check_seed(seed, name, *, none=True):
    """``seed`` as numpy and scikit-learn take it: an int in [0, 2**32 - 1], or None (when ``none``), or a
    ``numpy.random.RandomState``; else an InputError naming ``name``."""
    from .exceptions import InputError

    if seed is None and none or isinstance(seed, np.random.RandomState):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise InputError(f"{name} must be an integer in [0, 2**32 - 1] (a seed){' or None' if none else ''}, "
                         f"got {seed!r}")
    return int(seed)
