"""The label-matrix methods of :class:`Hierarchy`: closing labels upward and checking them."""

import numpy as np

from .._arrays import binary_matrix
from ..exceptions import LabelError

__all__ = ["LabelMethods", "as_binary"]


def as_binary(labels, hierarchy, name):
    """An (M, K) 0/1 matrix in the hierarchy's column order; a DataFrame is aligned by name."""
    if hasattr(labels, "columns") and hasattr(labels, "iloc"):
        from .._validation import class_matrix  # it imports this package: import here, not at the top

        labels = class_matrix(labels, hierarchy, name, allow_nan=True)
    y = labels if isinstance(labels, np.ndarray) and labels.dtype == bool else binary_matrix(labels, name)
    if y.shape[1] != hierarchy.n_classes:
        raise LabelError(f"{name} must have shape (n_objects, {hierarchy.n_classes}), got shape {y.shape}")
    return y


class LabelMethods:
    """The label-matrix methods of :class:`Hierarchy` (a base class: ``self`` is the hierarchy)."""

    def close_labels(self, labels):
        """Close a 0/1 label matrix upward: a positive class makes its ancestors positive.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            Columns in class order, or a DataFrame with columns named by class.

        Returns
        -------
        ndarray of shape (M, K), dtype int8
            The labels with every ancestor of a positive class positive.

        Examples
        --------
        >>> from hmcpgm import Hierarchy
        >>> h = Hierarchy.from_parents([None, 0, 1])
        >>> h.close_labels([[0, 0, 1]])
        array([[1, 1, 1]], dtype=int8)
        """
        y = as_binary(labels, self, "labels").astype(bool)
        # positive if the class or any descendant is: one sparse matrix product
        from scipy import sparse

        reach = sparse.csr_matrix(y, dtype=np.int32) @ sparse.csr_matrix(self.ancestor_matrix, dtype=np.int32)
        return (y | (reach.toarray() > 0)).astype(np.int8)

    def violations(self, labels):
        """Number of (object, edge) pairs where a child is positive and its parent is not.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            0/1 labels: columns in class order, or a DataFrame with columns named by class.

        Returns
        -------
        int
            0 when the labels respect the hierarchy.
        """
        y = as_binary(labels, self, "labels").astype(bool)
        e = self.edge_indices
        if len(e) == 0:
            return 0
        return int(np.count_nonzero(y[:, e[:, 1]] & ~y[:, e[:, 0]]))

    def check_labels(self, labels, name="labels", *, where=None):
        """Raise :class:`LabelError` if a positive class has a negative parent.

        Parameters
        ----------
        labels : array-like or DataFrame of shape (M, K)
            0/1 labels: columns in class order, or a DataFrame with columns named by class.
        name : str
            What the labels are called in the message.
        where : callable, optional
            Row index -> description of the row (e.g. its line in a file); default
            ``"row i"`` (from 0).

        Raises
        ------
        LabelError
            The labels break the hierarchy; the message names the first offending
            row, child and parent.
        """
        y = as_binary(labels, self, name).astype(bool)
        e = self.edge_indices
        if len(e) == 0:
            return
        bad = y[:, e[:, 1]] & ~y[:, e[:, 0]]
        if bad.any():
            rows, edges = np.nonzero(bad)
            p, c = e[edges[0]]
            row = f"row {rows[0]}" if where is None else where(rows[0])
            raise LabelError(
                f"{name} break the hierarchy in {len(rows)} places ({len(np.unique(rows))} "
                f"rows); first: {row} has class {self.classes[c]!r} positive but "
                f"its parent {self.classes[p]!r} negative. Close the labels upward with "
                "Hierarchy.close_labels if that is what you mean."
            )
