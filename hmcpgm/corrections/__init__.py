"""The classic second-stage corrections of hierarchical multi-label classification."""

from ._calibration import Calibration, calibrate, fit_calibration
from ._isotonic import gpav
from ._rules import htd, maxnorm, mcm, obozinski, qnorm, tpr_dag

__all__ = [
    "Calibration", "calibrate", "fit_calibration", "gpav", "htd", "maxnorm", "mcm", "obozinski", "qnorm", "tpr_dag",
]
