"""The :class:`Ranking` value object: an order of all events together with its shape."""

from dataclasses import dataclass

import numpy as np

from .._arrays import count, event_order, refuse_complex
from .._util import as_names, repeated
from .._validation import as_pandas, as_table, class_matrix, is_frame, rows_aligned, series_row
from ..exceptions import InputError

__all__ = ["Ranking", "as_ranking", "frame_names", "labelled_matrix", "matrix_for", "computed_ranking",
           "paired_rows"]


@dataclass(frozen=True, eq=False)
class Ranking:
    """A ranking of all (object, class) events, best first, that knows its shape.

    Returned by :func:`hmcpgm.hier_rank` and :func:`hmcpgm.naive_sort`; decision and
    metric functions take it as it is. ``numpy.asarray(ranking)`` is the flat order,
    so code written for plain index arrays keeps working.

    Parameters
    ----------
    order : array of int, shape (M*K,)
        A permutation of the flat event indices ``m * K + k`` (object ``m``, class
        column ``k``), best first. Checked once here.
    n_objects : int
        ``M``.
    classes : sequence
        The class names of the columns (``K`` of them).
    block_means : array of float, shape (M, K), optional
        The mean value of each event's block; never increasing along ``order``.
        HierRank's blocks are the maximum-mean prefix blocks of each object's
        order; NaiveSort's are single events (the values themselves).
    blocks : array of int, shape (M, K), optional
        The rank of each event's block (0 = first).
    method : str
        What made the ranking (e.g. ``"horn"``, ``"naive"``).
    index : sequence, optional
        Labels of the objects (the row index of a DataFrame the values came in).
    certificate : Certificate, optional
        From ``hier_rank(..., certify=True)``: the ranking's CATCH, an upper bound
        on the best consistent CATCH and their ratio (see
        :func:`hmcpgm.ranking.certify`).

    Examples
    --------
    >>> r = Ranking([3, 0, 1, 2], n_objects=2, classes=("a", "b"))
    >>> r.shape, np.asarray(r).tolist()
    ((2, 2), [3, 0, 1, 2])
    >>> r.ranks
    array([[2, 3],
           [4, 1]])
    >>> r.top(2)
    array([[1, 0],
           [0, 1]], dtype=int8)
    """

    order: np.ndarray
    n_objects: int
    classes: tuple
    block_means: np.ndarray = None
    blocks: np.ndarray = None
    method: str = ""
    index: object = None
    certificate: object = None

    def __post_init__(self):
        classes = tuple(self.classes)
        twice = repeated(classes)
        if twice:  # restrict and the frames look classes up by name
            raise InputError(f"classes must be distinct names; {twice[:5]} appear more than once")
        m = count(self.n_objects, "n_objects")
        order = event_order(self.order, m * len(classes)).copy()
        order.flags.writeable = False
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "n_objects", m)
        object.__setattr__(self, "order", order)
        for name in ("block_means", "blocks"):
            value = getattr(self, name)
            if value is not None:
                arr = np.array(value, dtype=float if name == "block_means" else np.intp)
                if arr.shape != self.shape:
                    raise InputError(f"{name} must have shape {self.shape}, got {arr.shape}")
                arr.flags.writeable = False
                object.__setattr__(self, name, arr)
        if self.index is not None and len(self.index) != m:
            raise InputError(f"index must name the {m} objects, got {len(self.index)} labels")

    # -- shape ------------------------------------------------------------
    @property
    def n_classes(self):
        """int: ``K``."""
        return len(self.classes)

    @property
    def shape(self):
        """(int, int): ``(M, K)``, the shape of the value matrix that was ranked."""
        return (self.n_objects, len(self.classes))

    @property
    def n_events(self):
        """int: ``M * K``."""
        return self.order.size

    def __len__(self):
        return self.order.size

    def __array__(self, dtype=None, copy=None):
        return self.order if dtype is None else self.order.astype(dtype)

    def __iter__(self):
        return iter(self.order)

    def __getitem__(self, item):
        return self.order[item]

    def __repr__(self):
        m, k = self.shape
        how = f", method={self.method!r}" if self.method else ""
        return f"Ranking({m} objects x {k} classes{how})"

    # -- views ------------------------------------------------------------
    @property
    def ranks(self):
        """ndarray of int, shape (M, K): the rank of every event, 1 for the first."""
        out = np.empty(self.n_events, dtype=np.intp)
        out[self.order] = np.arange(1, self.n_events + 1)
        return out.reshape(self.shape)

    @property
    def objects(self):
        """ndarray of int, shape (M*K,): the object (row) of each ranked event, best first."""
        return self.order // max(self.n_classes, 1)

    @property
    def class_indices(self):
        """ndarray of int, shape (M*K,): the class column of each ranked event, best first."""
        return self.order % max(self.n_classes, 1)

    def ranked(self, values, name="values", *, finite=False):
        """The entries of an (M, K) matrix in ranked order, shape (M*K,).

        Parameters
        ----------
        values : array-like or DataFrame of shape (M, K), or shape (M*K,)
            A value per event. A DataFrame is aligned by class name, and its rows
            are paired with the ranking's objects by ``index`` when the ranking
            has one; a flat vector is taken in event order.
        name : str
            What ``values`` is called in messages.
        finite : bool
            Refuse NaN and infinite entries, naming the first one's object and class.

        Returns
        -------
        ndarray of shape (M*K,)
            Entry ``i`` belongs to the event ranked ``i + 1``.
        """
        values = _numeric(paired_rows(values, self, name), name)
        if not is_frame(values) and np.ndim(values) == 1 and np.size(values) == self.n_events:
            values = np.reshape(values, self.shape)  # a flat vector in event order
        v = class_matrix(values, self, name, allow_nan=not finite)
        if v.shape != self.shape:
            raise InputError(f"{name} has shape {v.shape} but the ranking is of shape {self.shape}")
        return v.reshape(-1)[self.order]

    def top(self, r):
        """The (M, K) 0/1 decisions that label the first ``r`` events positive.

        Parameters
        ----------
        r : int
            How many events are positive, from 0 to ``n_events``.

        Returns
        -------
        ndarray or DataFrame of int8, shape (M, K)
            Hierarchically consistent whenever the ranking is. A DataFrame (columns
            named by class, the ranked DataFrame's row index) when the ranking has
            an ``index``, i.e. when it ranked a DataFrame (see :meth:`labelled`).

        Examples
        --------
        >>> import pandas as pd
        >>> Ranking([3, 0, 1, 2], n_objects=2, classes=("a", "b"), index=pd.Index(["x", "y"])).top(2)
           a  b
        x  1  0
        y  0  1
        """
        r = count(r, "r")
        if r > self.n_events:
            raise InputError(f"r must be at most the number of events {self.n_events}, got {r}")
        out = np.zeros(self.n_events, dtype=np.int8)
        out[self.order[:r]] = 1
        return self.labelled(out.reshape(self.shape))

    def labelled(self, matrix):
        """An (M, K) matrix of this ranking's events, as a DataFrame when the ranking has an ``index``.

        A ranking of a DataFrame keeps its row index; what is computed on it then
        comes back as a DataFrame with that index and one column per class, named
        by class in the ranking's order (as :meth:`hmcpgm.MLPR.predict` does). A
        ranking without an index (of an array) gives the matrix back as it is.

        Parameters
        ----------
        matrix : ndarray of shape (M, K)
            One entry per event, columns in the ranking's class order.

        Returns
        -------
        ndarray or DataFrame of shape (M, K)
            ``matrix`` itself, or a DataFrame of it labelled by ``index`` and ``classes``.

        Examples
        --------
        >>> import pandas as pd
        >>> r = Ranking([0, 1], n_objects=1, classes=("a", "b"), index=pd.Index(["x"]))
        >>> r.labelled(np.array([[1, 0]]))
           a  b
        x  1  0
        >>> Ranking([0, 1], n_objects=1, classes=("a", "b")).labelled(np.array([[1, 0]]))
        array([[1, 0]])
        """
        return labelled_matrix(matrix, self.shape, self.index, self.classes)

    def restrict(self, classes):
        """The ranking of some classes only: the other events are dropped, the order kept.

        Block means are carried over (they are no longer the means of the new
        ranking's blocks); ``blocks`` is dropped.

        Parameters
        ----------
        classes : sequence or str
            Class names of the ranking to keep (they keep the ranking's column
            order); a string is one class name.

        Returns
        -------
        Ranking
            The events of these classes, in the same relative order.

        Examples
        --------
        >>> r = Ranking([3, 0, 1, 2], n_objects=2, classes=("a", "b"))
        >>> np.asarray(r.restrict(["b"])).tolist()
        [1, 0]
        """
        lookup = {c: i for i, c in enumerate(self.classes)}

        def known(name):
            try:
                return name in lookup
            except TypeError:  # unhashable
                return False

        # one class name (a string, or an int of make_paper_synthetic's classes) stands for itself
        classes = as_names(classes, known)
        keep = np.zeros(self.n_classes, dtype=bool)
        unknown = [c for c in classes if not known(c)]
        if unknown:
            raise InputError(f"classes must be classes of the ranking, got unknown {unknown[:5]}")
        keep[[lookup[c] for c in classes]] = True
        cls = self.class_indices
        mask = keep[cls]
        new_col = np.cumsum(keep) - 1
        order = self.objects[mask] * int(keep.sum()) + new_col[cls[mask]]
        means = None if self.block_means is None else self.block_means[:, keep]
        kept = tuple(c for c, k in zip(self.classes, keep) if k)
        return Ranking(order, self.n_objects, kept, block_means=means, method=self.method, index=self.index)

    def to_frame(self, values=None):
        """One row per event, best first: rank, object, class, block mean and value.

        Parameters
        ----------
        values : array-like or DataFrame of shape (M, K), optional
            Adds a ``value`` column (e.g. the mLPRs that were ranked).

        Returns
        -------
        pandas.DataFrame
            Columns ``rank``, ``object`` (the index of the ranked values when they
            had one), ``class``, then ``value`` and ``block_mean`` when known.
        """
        import pandas as pd

        objects = self.objects
        table = {
            "rank": np.arange(1, self.n_events + 1),
            "object": objects if self.index is None else object_labels(self.index)[objects],
            "class": np.asarray(self.classes, dtype=object)[self.class_indices],
        }
        if values is not None:
            table["value"] = self.ranked(values)
        if self.block_means is not None:
            table["block_mean"] = self.block_means.reshape(-1)[self.order]
        return pd.DataFrame(table)


#: the columns of a ranking file besides the objects' ids (:meth:`Ranking.to_frame` and the FDR decisions'
#: ``positive``; ``name`` too when the classes' names are written)
RANKING_COLUMNS = ("rank", "class", "value", "block_mean", "positive")


def object_labels(index):
    """The objects' labels as an array: integers stay integers (a CSV writes them as fast as numbers), others are
    objects."""
    labels = np.asarray(index)
    return labels if labels.dtype.kind in "iu" else np.asarray(index, dtype=object)


def id_column_name(id_column, *, names=False):
    """The name of the objects' column in a ranking file: ``id_column``, or ``"object"`` without one.

    An id column named like one of :data:`RANKING_COLUMNS` (or ``name``, when ``names`` are written) is
    refused: the file would hold two columns of that name, or the decisions would overwrite the ids.

    Examples
    --------
    >>> id_column_name(None), id_column_name("gene"), id_column_name("name")
    ('object', 'gene', 'name')
    """
    if id_column is None:
        return "object"
    taken = RANKING_COLUMNS + (("name",) if names else ())
    if id_column in taken:
        raise InputError(f"the id column {id_column!r} has the name of a column of the ranking file "
                         f"({', '.join(taken)}); choose another --id-column")
    return id_column


def labelled_matrix(matrix, shape, index, classes):
    """``matrix`` (checked to be of ``shape``) as it is without ``index``, else a DataFrame of it with rows
    named by ``index`` and columns by ``classes``: what :meth:`Ranking.labelled` (and the chunked
    ranking's) return."""
    matrix = np.asarray(matrix)
    if matrix.shape != shape:
        raise InputError(f"matrix has shape {matrix.shape} but the ranking is of shape {shape}")
    if index is None:
        return matrix
    import pandas as pd

    return pd.DataFrame(matrix, index=index, columns=list(classes))


def as_ranking(ranking, shape, name="ranking", *, frames=()):
    """A :class:`Ranking` for a matrix of ``shape``; a plain order array is accepted for arrays.

    ``frames`` lists the names of arguments given as DataFrames: a plain order
    cannot align them by class name, so it is refused then.
    """
    if isinstance(ranking, Ranking):
        if ranking.shape != tuple(shape):
            raise InputError(
                f"{name} ranks a {ranking.shape[0]} x {ranking.shape[1]} matrix but the matrix given "
                f"with it has shape {tuple(shape)}"
            )
        return ranking
    if frames:
        raise InputError(
            f"{frames[0]} is a DataFrame but {name} is a plain order array, which cannot match its "
            "columns by class name; pass the Ranking from hier_rank or naive_sort"
        )
    m, k = shape
    return Ranking(event_order(ranking, m * k, name), m, tuple(range(k)))


def frame_names(*items):
    """The names of the arguments (pairs of value, name) that are DataFrames."""
    return tuple(n for v, n in items if is_frame(v))


def matrix_for(ranking, values, name, *, flat=True):
    """``(Ranking, (M, K) float array)``: ``values`` aligned to a ranking's classes.

    With a :class:`Ranking`, a DataFrame is aligned by class name (its rows paired
    with the ranking's objects by :func:`paired_rows`) and (with
    ``flat``) a flat vector is taken in event order. With a plain order array,
    ``values`` must be an array (M, K), or (with ``flat``) a flat vector taken as
    one object; a DataFrame (or a Series labelled by class names) is refused.
    """
    values = paired_rows(values, ranking, name) if isinstance(ranking, Ranking) else as_table(values)
    values = _numeric(values, name)
    if not flat and not is_frame(values) and np.ndim(values) != 2:
        raise InputError(f"{name} must be a 2-D (n_objects, n_classes) array, got shape {np.shape(values)}")
    if isinstance(ranking, Ranking):
        if not is_frame(values) and np.ndim(values) == 1 and np.size(values) == ranking.n_events:
            values = np.reshape(values, ranking.shape)
        v = class_matrix(values, ranking, name, allow_nan=True)
        return as_ranking(ranking, v.shape), v
    if is_frame(values):
        as_ranking(ranking, values.shape, frames=(name,))
    v = values
    if v.ndim == 1:
        v = v.reshape(1, -1)
    if v.ndim != 2:
        raise InputError(f"{name} must be an (M, K) matrix or a flat vector, got shape {v.shape}")
    return as_ranking(ranking, v.shape), v


def _numeric(values, name):
    """A float array of anything but a DataFrame (returned as it is), or a one-line InputError."""
    if is_frame(values):
        return values
    refuse_complex(values, name)  # numpy would drop the imaginary part with a warning
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric (n_objects, n_classes) array: {exc}") from None


def paired_rows(values, ranking, name):
    """``values`` with a DataFrame's rows in the order of the ranking's objects.

    A ranking of a DataFrame keeps its row index (``Ranking.index``); a DataFrame
    given with it is paired with the objects by that index, as the estimators
    pair ``X`` and ``y`` (:func:`hmcpgm._validation.rows_aligned`: the same rows
    in another order are reordered, other rows are refused in one line). Arrays,
    and every input of a ranking without an index, pass unchanged (rows by
    position); a Series labelled by class names is one object (:func:`series_row`).
    """
    values = as_pandas(values)
    row = series_row(values, ranking.classes)
    if row is not values or not is_frame(values) or ranking.index is None:
        return row  # a labelled Series is one object: no row label to pair
    import pandas as pd

    return rows_aligned(values, pd.Index(ranking.index), name, "the ranked values")


def computed_ranking(order, n_objects, classes, *, block_means, blocks, method, index=None):
    """A :class:`Ranking` of arrays a ranking function has just computed, without re-checking them.

    ``order`` is a permutation of ``n_objects * len(classes)`` intp event indices,
    ``block_means`` and ``blocks`` have the shape (M, K), ``classes`` is a tuple,
    and no one else holds the arrays: they are frozen in place. Checking and
    copying 10^6 events again costs as much as Horn's rule itself.
    """
    ranking = object.__new__(Ranking)
    for name, value in (("order", order), ("block_means", block_means), ("blocks", blocks)):
        value.flags.writeable = False
        object.__setattr__(ranking, name, value)
    for name, value in (("n_objects", int(n_objects)), ("classes", tuple(classes)), ("method", method),
                        ("index", index), ("certificate", None)):
        object.__setattr__(ranking, name, value)
    return ranking
