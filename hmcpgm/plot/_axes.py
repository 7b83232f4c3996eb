"""matplotlib, imported on first use, and a fresh Axes when none is given."""

__all__ = ["pyplot", "new_axes"]

_INSTALL = 'pip install "hmcpgm[plot]"'


def pyplot():
    """matplotlib.pyplot, or an ImportError naming the extra to install."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "hmcpgm's plotting functions need matplotlib, an optional dependency. Install it with:\n"
            + _INSTALL
        ) from None
    return plt


def new_axes(ax, figsize):
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax
