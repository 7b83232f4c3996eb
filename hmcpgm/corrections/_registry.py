"""The registry of corrections: one table, name -> function, options, properties.

:class:`HierarchicalCorrection`, the benchmark and the command line read
:data:`CORRECTIONS`; nothing else compares correction names.
"""

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..exceptions import InputError
from ._inputs import matrix_in, matrix_out
from ._isotonic import gpav
from ._rules import BOTTOM_UP, OBOZINSKI, POSITIVE, TOP_DOWN, htd, mcm, obozinski, tpr_dag

__all__ = ["CORRECTIONS", "Correction", "flat", "resolve_options"]

UNIT = "a number in [0, 1]"


def flat(values, hierarchy):
    """No correction: the values as they are (the baseline beside the corrections).

    Parameters
    ----------
    values : array-like or DataFrame of shape (M, K)
        One column per class (an array in ``hierarchy.classes`` order, or a
        DataFrame with columns named by class).
    hierarchy : Hierarchy
        Any tree, forest or DAG; its ``classes`` name the columns.

    Returns
    -------
    ndarray or DataFrame of shape (M, K)
        A copy of ``values`` (a child may exceed its parent).

    Examples
    --------
    >>> from hmcpgm import Hierarchy
    >>> flat([[0.2, 0.9]], Hierarchy.from_parents([None, 0])).tolist()
    [[0.2, 0.9]]
    """
    x = matrix_in(values, hierarchy)
    return matrix_out(x, values, hierarchy)


@dataclass(frozen=True)
class Correction:
    """One entry of :data:`CORRECTIONS`.

    Attributes
    ----------
    name : str
        The registry key.
    function : callable
        ``function(values, hierarchy, **options)``: a public function of
        :mod:`hmcpgm.corrections`.
    preset : mapping
        Options fixed by this entry (``"iso_tpr"`` is ``tpr_dag`` with ``topdown="gpav"``).
    options : mapping
        Options a user may set, each with its allowed values (a tuple of names,
        or ``"a number in [0, 1]"``) and default.
    consistent : bool
        Whether the output always respects the hierarchy (child <= parent).
    probabilities : bool
        Whether the input must lie in [0, 1].
    summary : str
        One line for tables and help texts.
    """

    name: str
    function: object
    preset: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    consistent: bool = True
    probabilities: bool = False
    summary: str = ""

    def __call__(self, values, hierarchy, **options):
        """Apply the correction (``preset`` and ``options`` merged, options checked)."""
        return self.function(values, hierarchy, **resolve_options(self.name, options))


_TPR_OPTIONS = {
    "positive": (POSITIVE, "children"),
    "bottomup": (tuple(BOTTOM_UP), "threshold_free"),
    "topdown": (TOP_DOWN, "htd"),
    "t": (UNIT, 0.5),
    "w": (UNIT, 0.5),
}


def _tpr(preset, summary, name):
    options = {k: v for k, v in _TPR_OPTIONS.items() if k not in preset}
    return Correction(name, tpr_dag, preset, options, summary=summary)


CORRECTIONS = MappingProxyType({
    "flat": Correction("flat", flat, consistent=False, summary="no correction (the calibrated scores)"),
    "htd": Correction("htd", htd, summary="HTD-DAG: top-down, each class capped by its parents"),
    "gpav": Correction("gpav", gpav, summary="the exact least-squares isotonic regression on the DAG"),
    "tpr_dag": _tpr({}, "TPR-DAG: bottom-up pooling with positive children, then HTD", "tpr_dag"),
    "iso_tpr": _tpr({"topdown": "gpav"}, "ISO-TPR: TPR-DAG's bottom-up pooling, then the isotonic regression",
                    "iso_tpr"),
    "descens": _tpr({"positive": "descendants"}, "DESCENS: TPR-DAG pooling over all descendants", "descens"),
    "obozinski": Correction("obozinski", obozinski, options={"method": (OBOZINSKI, "max")}, probabilities=True,
                            summary="Obozinski et al.'s max / and / or over descendants or ancestors"),
    "mcm": Correction("mcm", mcm, summary="C-HMCNN's max constraint: the maximum over the class's descendants"),
})
"""Every correction by name (read-only): see :class:`Correction`."""


def resolve_options(name, options=None):
    """The full keyword options of correction ``name``: its preset, the defaults, then ``options``.

    Parameters
    ----------
    name : str
        A key of :data:`CORRECTIONS`.
    options : dict, optional
        Options to set; unknown names (or options the entry fixes) are an error.

    Returns
    -------
    dict
        The keyword arguments of the entry's function.

    Examples
    --------
    >>> resolve_options("iso_tpr", {"t": 0.3})
    {'topdown': 'gpav', 'positive': 'children', 'bottomup': 'threshold_free', 't': 0.3, 'w': 0.5}
    """
    if not isinstance(name, str) or name not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(map(repr, CORRECTIONS))}; got {name!r}")
    entry = CORRECTIONS[name]
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise InputError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = [k for k in options if k not in entry.options]
    if unknown:
        allowed = ", ".join(map(repr, entry.options)) or "none"
        raise InputError(f"correction {name!r} takes the options {allowed}; got {unknown[0]!r}")
    out = dict(entry.preset)
    out.update({k: default for k, (_, default) in entry.options.items()})
    out.update(options)
    for k, value in options.items():
        allowed = entry.options[k][0]
        if allowed == UNIT:
            ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            if not ok or not 0.0 <= float(value) <= 1.0:
                raise InputError(f"option {k!r} of correction {name!r} must be {UNIT}; got {value!r}")
        elif not isinstance(value, str) or value not in allowed:  # an array would compare element-wise
            raise InputError(
                f"option {k!r} of correction {name!r} must be one of {', '.join(map(repr, allowed))}; got {value!r}"
            )
    if out.get("bottomup") == "tau" and out.get("positive") != "descendants":  # tpr_dag's own check, before a fit
        raise InputError(f"bottomup='tau' is a DESCENS rule: correction {name!r} needs positive='descendants' with it")
    return out
