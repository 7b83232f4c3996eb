"""The classic second-stage corrections of hierarchical multi-label classification.

Per-class calibrated scores plus a class hierarchy become hierarchy-consistent
values (a child never above a parent) by the rules the field uses: HEMDAG's
HTD-DAG, TPR-DAG and its variants (DESCENS, ISO-TPR), GPAV (here the exact
isotonic regression on any DAG), Obozinski et al.'s max / and / or, and
C-HMCNN's max constraint (MCM); with HEMDAG's normalisations (``maxnorm``,
``qnorm``) and per-class isotonic or Platt calibration. Every function takes an
(objects x classes) array in ``hierarchy.classes`` order or a DataFrame with
columns named by class, and returns the same kind.

:data:`CORRECTIONS` is the registry (name -> function, options, properties)
that :class:`HierarchicalCorrection`, a scikit-learn estimator that can take
:class:`hmcpgm.MLPR`'s place in a pipeline, and the benchmark read.
"""

from ._calibration import CALIBRATIONS, Calibration, calibrate, fit_calibration
from ._isotonic import gpav
from ._registry import CORRECTIONS, Correction, flat, resolve_options
from ._rules import add_root, htd, maxnorm, mcm, obozinski, qnorm, tpr_dag
from ._structure import DagPasses, dag_passes

__all__ = [
    "CALIBRATIONS", "CORRECTIONS", "Calibration", "Correction", "DagPasses", "HierarchicalCorrection", "add_root",
    "calibrate", "dag_passes", "fit_calibration", "flat", "gpav", "htd", "maxnorm", "mcm", "obozinski", "qnorm",
    "resolve_options", "tpr_dag",
]


def __getattr__(name):
    # the estimator imports scikit-learn (over a second): loaded on first use, so that what only needs the
    # rules (the second stage, the command line's --help) starts without it
    if name == "HierarchicalCorrection":
        from ._estimator import HierarchicalCorrection

        globals()[name] = HierarchicalCorrection
        return HierarchicalCorrection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
