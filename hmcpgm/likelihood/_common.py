"""Constants shared by the score models (see :mod:`hmcpgm.likelihood`; the models themselves are in ``_registry``)."""

TRANSFORMS = ("asinh", "none")
MIN_RATIO = 1e-12  # density models: smaller likelihood of a pair >= this times the larger
