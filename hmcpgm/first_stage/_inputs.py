"""Checks of the first stage's inputs: features and 0/1 label matrices."""

import numpy as np

from .._columns import is_frame
from ..exceptions import InputError, LabelError


def check_features(X):
    from scipy import sparse

    if sparse.issparse(X):
        raise InputError("X is a sparse matrix; pass X.toarray() (the default first stages impute and centre "
                         "dense features)")
    if is_frame(X):  # pandas' missing value (pd.NA) is a missing value here too
        X = X.astype(object).where(X.notna(), np.nan)
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"X must be a numeric (n_objects, n_features) array: {exc}") from None
    if X.ndim != 2:
        raise InputError(f"X must be 2-D (n_objects, n_features), got shape {X.shape}")
    if X.shape[1] == 0:
        raise InputError(f"X has no feature column (shape {X.shape}): a first stage needs at least one feature")
    if np.isinf(X).any():
        raise InputError("X must not hold infinite values (NaN marks a missing value)")
    return X


def dense_labels(labels):
    """``labels`` as an array (a scipy sparse matrix read densely, as everywhere in hmcpgm)."""
    from scipy import sparse

    return labels.toarray() if sparse.issparse(labels) else np.asarray(labels)


def label_matrix(labels, name="Y"):
    y = dense_labels(labels)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2:
        raise LabelError(f"{name} must be 2-D (n_objects, n_classes) or 1-D, got shape {y.shape}")
    if y.shape[1] == 0:
        raise LabelError(f"{name} has no class column (shape {y.shape}): the first stage scores at least one class")
    bad = ~np.isin(y, (0, 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise LabelError(f"{name} must hold only 0 and 1; row {r}, column {c} holds {y[r, c]!r}")
    return y.astype(np.int8)
