"""Per-class matrices aligned by class name: a DataFrame's columns matched to the classes, or refused.

A matrix has one column per class. A numpy array is taken in the column order of
the classes it is used with; a pandas DataFrame is aligned by column name, never
by position, and refused when it cannot be aligned. This module sits below the
hierarchy package (which aligns label DataFrames with it), so it names no
hmcpgm class; :mod:`hmcpgm._validation` adds the checks that need one.
"""

import operator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ._arrays import first_true, refuse_complex
from ._util import preview, repeated
from .exceptions import InputError

__all__ = ["aligned_matrices", "as_pandas", "as_table", "at_the_door", "checked_at_the_door", "class_matrix",
           "column_positions", "is_frame", "labels_by_score_rows", "matrix_classes", "rows_aligned", "series_row",
           "table_columns", "POSITIONAL_ROWS", "rows_paired"]


#: True inside :func:`checked_at_the_door`: the arrays hmcpgm's own functions hand each other were checked once.
_CHECKED = ContextVar("hmcpgm_checked_at_the_door", default=False)


@contextmanager
def checked_at_the_door():
    """A block whose inputs a public entry point has checked: nested calls skip the same checks.

    scikit-learn's ``prefer_skip_nested_validation``: a public function (say
    ``MLPR.fit``) validates its inputs once, then runs its steps inside this
    block; there :func:`class_matrix` and ``hmcpgm._validation.label_matrix`` take
    a numpy array that already has the checked dtype and column count as it is,
    without scanning its values again (finiteness, 0/1, hierarchy). DataFrames are
    still aligned by name, and anything else is checked as usual. The flag is a
    context variable: threads started inside the block check their inputs.

    Examples
    --------
    >>> with checked_at_the_door():
    ...     x = np.zeros((2, 3))
    ...     class_matrix(x, ["a", "b", "c"]) is x        # not scanned again
    True
    """
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def at_the_door():
    """Whether the caller runs inside :func:`checked_at_the_door`."""
    return _CHECKED.get()


def is_frame(values):
    """True for a pandas DataFrame (checked without importing pandas)."""
    return hasattr(values, "columns") and hasattr(values, "iloc")


def as_pandas(values):
    """A table of another library (pyarrow, polars: the dataframe interchange protocol) as a pandas DataFrame.

    Such a table names its columns, so it must be aligned by class name as a
    DataFrame is, never read in column order; anything else is returned as it is.

    Parameters
    ----------
    values : object

    Returns
    -------
    DataFrame or object
        ``values`` itself unless it is a table of another library.

    Examples
    --------
    >>> as_pandas([[1.0, 2.0]])
    [[1.0, 2.0]]
    """
    if is_frame(values) or not hasattr(values, "__dataframe__"):
        return values
    import pandas as pd

    return pd.api.interchange.from_dataframe(values)


def series_row(values, classes=None):
    """A pandas Series labelled by class names as a one-row DataFrame (one object); anything else as it is.

    Its index names the classes, so it is aligned by class name as a DataFrame
    is, never read in column order; the row is labelled by the Series' name
    (``0`` when it has none). A Series with a default ``RangeIndex``
    (``0 .. n-1``) names nothing: it stays a plain vector, unless ``classes``
    are the integers ``0 .. n-1`` in another order: its labels then name them,
    as a DataFrame's default columns do (read by position, class 2 of the
    classes ``[2, 0, 1]`` took the value labelled 0).

    Parameters
    ----------
    values : object
    classes : sequence, optional
        The classes the values are read for, in column order.

    Returns
    -------
    DataFrame or object
        ``values`` itself unless it is a Series labelled by class names.

    Examples
    --------
    >>> import pandas as pd
    >>> series_row(pd.Series([0.9, 0.2], index=["a", "b"], name="x"))
         a    b
    x  0.9  0.2
    >>> series_row(pd.Series([0.9, 0.2])).shape    # a RangeIndex names no class
    (2,)
    >>> series_row(pd.Series([0.9, 0.2]), classes=[1, 0]).columns.tolist()   # unless the classes are 0 .. n-1
    [0, 1]
    """
    if is_frame(values) or not (hasattr(values, "index") and hasattr(values, "to_frame")):
        return values
    index = values.index
    if (type(index).__name__ == "RangeIndex" and index.start == 0 and index.step == 1
            and not _permuted_range(classes, len(index))):
        return values
    return values.to_frame().T


def _permuted_range(classes, n):
    """Whether ``classes`` are the integers ``0 .. n-1`` in another order than theirs."""
    if classes is None or len(classes) != n:
        return False
    try:
        ints = [operator.index(c) for c in classes]  # ints and numpy ints, not floats, strings or bools' names
    except TypeError:
        return False
    return sorted(ints) == list(range(n)) and ints != list(range(n))


def as_table(values, classes=None):
    """Per-class values as the estimators take them: :func:`as_pandas`, then :func:`series_row`.

    A table of another library becomes a pandas DataFrame and a Series labelled
    by class names a one-row DataFrame (one object), as :func:`hmcpgm.hier_rank`
    takes them; anything else is returned as it is.

    Parameters
    ----------
    values : object
    classes : sequence, optional
        The classes, in column order, when known (see :func:`series_row`).

    Returns
    -------
    DataFrame or object

    Examples
    --------
    >>> import pandas as pd
    >>> as_table(pd.Series([1, 0], index=["b", "a"])).columns.tolist()
    ['b', 'a']
    """
    return series_row(as_pandas(values), classes)


#: ``OutOfFoldScores``' column names without class names (scikit-learn's prefix: its lowered class name)
GENERIC_SCORES = "outoffoldscores"

#: ``DataFrame.attrs`` key of a table whose rows are positions, not labels: the scores
#: ``OutOfFoldScores.transform`` makes of new rows of an array ``X`` (named by the labels' classes). A
#: DataFrame ``y`` is paired with them by position, as with an array ``X``; by index, the new rows (numbered
#: from 0) were refused beside y's labels, so a Pipeline's cross_val_score gave nan (audit42).
POSITIONAL_ROWS = "hmcpgm_positional_rows"


def rows_paired(y, X, name="y", reference="X"):
    """``y``'s rows paired with ``X``'s, both DataFrames: by row index, or by position when ``X``'s rows are
    positions (:data:`POSITIONAL_ROWS`) still numbered 0, 1, 2, ... in order.

    pandas carries ``attrs`` to a sorted or subset copy, whose rows are no longer the
    positions: such a copy is paired by index again (or refused), never by position.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"a": [0.5, 0.1]}, index=[0, 1])
    >>> X.attrs[POSITIONAL_ROWS] = True
    >>> rows_paired(pd.DataFrame({"a": [1, 0]}, index=[7, 3]), X)["a"].tolist()
    [1, 0]
    """
    import pandas as pd

    if X.attrs.get(POSITIONAL_ROWS) and X.index.equals(pd.RangeIndex(len(X))) and len(y) == len(X):
        return y
    return rows_aligned(y, X.index, name, reference)


def rows_aligned(frame, index, name, reference):
    """``frame``'s rows in the order of ``index`` (another DataFrame's row index), or a one-line InputError.

    Parameters
    ----------
    frame : DataFrame
        The rows to reorder.
    index : pandas.Index
        The order wanted: the same labels as ``frame.index``, each once.
    name, reference : str
        What messages call ``frame`` and the frame ``index`` comes from.

    Returns
    -------
    DataFrame
        ``frame`` itself when the indexes are equal, else ``frame.loc[index]``.

    Examples
    --------
    >>> import pandas as pd
    >>> y = pd.DataFrame({"a": [1, 0]}, index=["g2", "g1"])
    >>> rows_aligned(y, pd.Index(["g1", "g2"]), "y", "X")["a"].tolist()
    [0, 1]
    """
    if frame.index.equals(index):
        return frame
    if not (frame.index.is_unique and index.is_unique):
        raise InputError(f"{name} and {reference} are DataFrames with different row indexes, and one repeats a "
                         f"label: rows cannot be paired by index; give them one index (or pass arrays)")
    missing = index.difference(frame.index)
    extra = frame.index.difference(index)
    if len(missing) or len(extra):
        first = missing[0] if len(missing) else extra[0]
        where = f"in {reference} but not in {name}" if len(missing) else f"in {name} but not in {reference}"
        raise InputError(
            f"{name} and {reference} are DataFrames whose row indexes hold different labels "
            f"({len(missing)} only in {reference}, {len(extra)} only in {name}; first {first!r} is {where}); "
            f"rows are paired by index: give both the same objects (or pass arrays to pair rows by position)"
        )
    return frame.loc[index]


def labels_by_score_rows(scores, labels):
    """``labels`` with its rows in ``scores``'s order when both are DataFrames (rows are paired by index, as
    everywhere in hmcpgm; a one-line InputError when the indexes cannot be paired), else ``labels`` as given."""
    if is_frame(scores) and is_frame(labels):
        return rows_aligned(labels, scores.index, "labels", "scores")
    return labels


def _class_names(classes):
    """The class names of a Hierarchy, a Ranking (anything with ``.classes``) or a sequence."""
    return tuple(getattr(classes, "classes", classes))


def _owner(classes):
    """How messages name where the classes come from: (subject with verb, "of the ..." suffix)."""
    if hasattr(classes, "parent_indices"):  # a Hierarchy (duck-typed: this module sits below the hierarchy)
        return "the hierarchy has", " of the hierarchy"
    if hasattr(classes, "classes"):
        return "the ranking has", " of the ranking"
    return "there are", ""


def column_positions(columns, classes, name):
    """Positions of the classes among named columns (DataFrame or CSV header), matched by name.

    Each class must name exactly one column and every column a class; ``str(class)``
    matches too, since file headers are strings. The columns ``outoffoldscores0``,
    ``outoffoldscores1``, ... (:class:`hmcpgm.first_stage.OutOfFoldScores`' scores of array
    labels under scikit-learn's ``set_output(transform="pandas")``: the array's
    columns, in class order) are read in class order, unless one names a class.
    """
    owner = _owner(classes)
    classes = _class_names(classes)
    columns = list(columns)
    if columns == [f"{GENERIC_SCORES}{k}" for k in range(len(classes))] and not set(columns) & {
            str(c) for c in classes}:
        return list(range(len(classes)))
    lookup = {c: i for i, c in enumerate(columns)}
    if len(lookup) != len(columns):
        raise InputError(f"{name} has duplicate column names: {preview(repeated(columns))}")
    if not all(c in lookup for c in classes):
        # CSV headers are strings; accept str(class) when the classes are not.
        as_str = {str(c): i for i, c in enumerate(columns)}
        if all(str(c) in as_str for c in classes) and len(as_str) == len(columns):
            lookup = {c: as_str[str(c)] for c in classes}
    names = set(classes) | {str(c) for c in classes}
    texts = {str(c) for c in columns}
    missing = [c for c in classes if c not in lookup and str(c) not in texts]  # class 1 is there as '1'
    if not missing and not all(c in lookup for c in classes):  # there as text, but two columns print alike
        missing = [c for c in classes if c not in lookup]
    extra = [c for c in columns if c not in names and str(c) not in names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing: {preview(missing)}")
        if extra:
            parts.append(f"not classes{owner[1]}: {preview(extra)}")
        raise InputError(
            f"{name} has {len(columns)} columns but {owner[0]} {len(classes)} classes ({'; '.join(parts)})"
            + _look_alike(missing, extra)
        )
    return [lookup[c] for c in classes]


def _look_alike(missing, extra):
    """What a missing class and a column that is no class have in common, when they print alike or nearly.

    Examples
    --------
    >>> "two Unicode forms" in _look_alike(["\u00fc"], ["u\u0308"])   # ü composed (NFC) and decomposed (NFD)
    True
    >>> _look_alike(["Gene"], ["gene"])
    "; 'Gene' and 'gene' differ only in letter case (names are case-sensitive)"
    """
    import unicodedata

    def key(name, fold):
        text = unicodedata.normalize("NFC", str(name))
        return text.casefold() if fold else text

    for fold, what in ((False, "are the same text in two Unicode forms (composed, NFC, and decomposed, NFD): write "
                                "both in one form"),
                       (True, "differ only in letter case (names are case-sensitive)")):
        wanted = {key(c, fold): c for c in missing}
        pair = next(((wanted[key(c, fold)], c) for c in extra if key(c, fold) in wanted), None)
        if pair is not None:
            return f"; {pair[0]!r} and {pair[1]!r} {what}"
    return ""


def class_matrix(values, classes, name="scores", *, allow_nan=False, dtype=float, first_row=0, keep_integers=False):
    """An (M, K) array with columns in the order of ``classes``.

    Parameters
    ----------
    values : array-like or DataFrame
        A numpy array is taken in ``classes`` order; a DataFrame (or a pyarrow or
        polars table, :func:`as_pandas`) is aligned by column name (any order).
    classes : Hierarchy, Ranking or sequence of class names
    name : str
        The argument's name, for messages.
    allow_nan : bool
        Accept NaN and infinite values.
    dtype : numpy dtype
    first_row : int
        The row number of ``values``' first row in messages (a chunk of a larger matrix).
    keep_integers : bool
        Return an integer or boolean array (after alignment) as it is, not as a
        ``dtype`` copy: labels, which a float copy would make eight times larger.

    Examples
    --------
    >>> import pandas as pd
    >>> class_matrix(pd.DataFrame({"b": [2.0], "a": [1.0]}), ["a", "b"])
    array([[1., 2.]])
    """
    values = as_pandas(values)
    if is_frame(values):  # C order, as an array would be: the same sums in the same order
        values = np.ascontiguousarray(values.iloc[:, column_positions(values.columns, classes, name)].to_numpy())
    owner = _owner(classes)
    classes = _class_names(classes)
    if keep_integers and isinstance(values, np.ndarray) and values.dtype.kind in "biu":
        dtype = values.dtype
    if (_CHECKED.get() and isinstance(values, np.ndarray) and values.dtype == dtype and values.ndim == 2
            and values.shape[1] == len(classes)):
        return values  # checked at the door (see checked_at_the_door)
    refuse_complex(values, name)
    try:
        arr = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a numeric (n_objects, n_classes) array: {exc}") from None
    k = len(classes)
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-D array of shape (n_objects, {k}), got {arr.ndim}-D shape {arr.shape}")
    if arr.shape[1] != k:
        raise InputError(f"{name} has {arr.shape[1]} columns but {owner[0]} {k} classes")
    bad = first_true(~np.isfinite(arr)) if not allow_nan and arr.dtype.kind == "f" else None
    if bad:
        raise InputError(
            f"{name} must be finite; {int((~np.isfinite(arr)).sum())} entries are NaN or infinite, the "
            f"first at row {bad[0] + first_row}, class {classes[bad[1]]!r} ({arr[bad]})"
        )
    return arr


def matrix_classes(items, classes=None):
    """The classes of :func:`aligned_matrices`' columns: ``classes``, else the first DataFrame's columns (else
    None: arrays taken as they are), for messages that name a column's class.

    Examples
    --------
    >>> import pandas as pd
    >>> matrix_classes([([[1.0]], "values"), (pd.DataFrame({"b": [1], "a": [0]}), "labels")])
    ['b', 'a']
    """
    if classes is not None:
        return classes
    return next((names for names in (table_columns(v) for v, _ in items) if names is not None), None)


def table_columns(values):
    """The column names of a DataFrame or of another library's table (read without converting it), else None.

    Examples
    --------
    >>> import pandas as pd
    >>> table_columns(pd.DataFrame({"b": [1], "a": [0]})), table_columns([[1.0]])
    (['b', 'a'], None)
    """
    if is_frame(values):
        return list(values.columns)
    if hasattr(values, "__dataframe__"):
        return list(values.__dataframe__().column_names())
    return None


def aligned_matrices(items, classes=None, *, keep_integers=()):
    """Several (M, K) matrices with their columns matched by class name.

    Parameters
    ----------
    items : list of (values, name)
        Arrays or DataFrames.
    classes : Hierarchy, Ranking or sequence, optional
        The column order. Without it, the first DataFrame's columns give the order,
        and an array beside a DataFrame is refused (it cannot be matched by name).
    keep_integers : collection of str
        The names of the items (labels) whose integer or boolean arrays are returned
        as they are, not as float copies.

    Returns
    -------
    list of ndarray
        Float arrays (NaN allowed; callers check values), each 2-D; an item named
        in ``keep_integers`` may be an integer or boolean array. DataFrames must
        also agree on their row index.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"x": [1.0], "y": [2.0]})
    >>> b = pd.DataFrame({"y": [20.0], "x": [10.0]})
    >>> [m.tolist() for m in aligned_matrices([(a, "values"), (b, "labels")])]
    [[[1.0, 2.0]], [[10.0, 20.0]]]
    """
    items = [(as_pandas(v), n) for v, n in items]  # a pyarrow or polars table is aligned by name too
    frames = [(v, n) for v, n in items if is_frame(v)]
    if classes is None and frames:
        arrays = [n for v, n in items if not is_frame(v)]
        if arrays:
            raise InputError(
                f"{frames[0][1]} is a DataFrame but {arrays[0]} is not, so their columns cannot be "
                f"matched by class name; pass {arrays[0]} as a DataFrame too, or give the hierarchy"
            )
        classes = matrix_classes(items)
        first, first_name = frames[0]
        for v, n in frames[1:]:  # name the one that lacks a class, not the one that has it
            for a, a_name, b, b_name in ((first, first_name, v, n), (v, n, first, first_name)):
                has = {str(c) for c in a.columns}  # as column_positions matches them: 0 and "0" are one class
                lacking = [c for c in b.columns if str(c) not in has]
                if lacking:
                    raise InputError(f"{a_name} lacks the column(s) {lacking[:5]} that {b_name} has; "
                                     f"give both the same classes (or pass the hierarchy)")
    for (v, n) in frames[1:]:
        if not v.index.equals(frames[0][0].index):
            raise InputError(
                f"{n} and {frames[0][1]} have different row indexes; align the rows first "
                f"(e.g. {n}.loc[{frames[0][1]}.index])"
            )
    out = []
    for values, name in items:
        if classes is None:
            try:
                arr = np.asarray(values, dtype=float) if not isinstance(values, np.ndarray) else values
            except (TypeError, ValueError) as exc:
                raise InputError(f"{name} must be a numeric (n_objects, n_classes) array: {exc}") from None
            if arr.ndim != 2:
                raise InputError(f"{name} must be a 2-D (n_objects, n_classes) array, got shape {arr.shape}")
            out.append(arr)
        else:
            out.append(class_matrix(values, classes, name, allow_nan=True, keep_integers=name in keep_integers))
    return out
