"""Reader for the Clus-HMC ARFF format of the hierarchical multi-label benchmarks.

Maintained ARFF parsers do not read these files: liac-arff (also vendored in
scikit-learn as ``sklearn.externals._arff``) raises ``BadAttributeType`` and
``scipy.io.arff`` raises ``ParseArffError: unknown attribute hierarchical`` on the
``@ATTRIBUTE class hierarchical ...`` line. This module is a small parser for the
subset of ARFF the benchmarks use: numeric and nominal features, one hierarchical
class attribute, dense rows, ``%`` comments, quoted names and values.

The hierarchical attribute comes in two spellings:

* FunCat (trees): every root-to-class path, ``/``-separated and comma-separated,
  ``01,01/01,01/01/03``. Classes are named by their full path (``"01/01/03"``);
  the top-level paths (``"01"``, ``"02"``, ...) are the roots of a forest.
* Gene Ontology (DAGs): ``parent/child`` edges, ``root/GO0003674,GO0003674/GO0003774``.
  The literal ``root`` is an artificial super-root; it is dropped, so its children
  (the three GO roots) become the roots of the hierarchy and are reported in
  :attr:`HMCData.excluded`, the classes that the benchmark convention leaves
  out of evaluation.

Data rows list the class labels joined by ``@`` (``11/02/01@11/02/02``); labels
may name internal classes and are closed upward (every ancestor of a listed class
becomes positive).
"""

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._util import preview, repeated, warn
from ..exceptions import HierarchyError, InputError
from ..hierarchy import Hierarchy
from ..options import check_choice
from ._data import HMCData, HMCSplit

__all__ = ["dataset_name", "load_hmc_arff", "load_hmc_split"]

_NUMERIC_TYPES = {"numeric", "real", "integer"}
_MISSING = "?"


def load_hmc_arff(path, *, super_root="root", nominal="codes"):
    """Read one Clus-HMC ARFF file (features, labels closed upward, hierarchy).

    Parameters
    ----------
    path : str or os.PathLike
        The ARFF file (UTF-8).
    super_root : str or None
        Name of the artificial parent in edge-style (GO) class attributes; it is
        dropped and its children reported as :attr:`HMCData.excluded`. Labels
        naming it in data rows are ignored. None keeps every node.
    nominal : {"codes", "one-hot"}
        How a nominal feature becomes numbers. ``"codes"``: one column of its value's
        position in the declaration (0, 1, ...). ``"one-hot"``: a nominal feature of
        three or more declared values becomes one 0/1 column per value, named
        ``"<name>=<value>"`` (what a linear first stage needs: the codes of unordered
        values are not a scale); one of two values keeps its single 0/1 code column. A
        missing value (``?``) is NaN in every column of its feature either way.

    Returns
    -------
    HMCData
        The features, the labels and the hierarchy of the file.

    Raises
    ------
    InputError
        Malformed file (no class attribute, a row with the wrong number of
        values, an unknown label, a bad number); the message names the file and
        the line.
    HierarchyError
        The class attribute describes no valid hierarchy (a cycle, a path whose
        parent path is not listed).

    Examples
    --------
    >>> import tempfile, os
    >>> text = '''@RELATION toy
    ... @ATTRIBUTE x numeric
    ... @ATTRIBUTE class hierarchical 01,01/01,02
    ... @DATA
    ... 0.5,01/01
    ... ?,02
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "toy.arff")
    ...     with open(path, "w") as f:
    ...         _ = f.write(text)
    ...     data = load_hmc_arff(path)
    >>> data.hierarchy.classes
    ('01', '01/01', '02')
    >>> data.labels
    array([[1, 1, 0],
           [0, 0, 1]], dtype=int8)
    >>> data.features
    array([[0.5],
           [nan]])
    """
    check_choice(nominal, "nominal", _NOMINAL)  # before the file is read
    path = Path(path)
    if path.is_dir():
        raise InputError(f"ARFF file {str(path)!r} is a directory, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file {str(path)!r} does not exist")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ARFF file {str(path)!r}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (Windows "UTF-8 with BOM") is dropped
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    nul = text.find("\x00")
    if nul >= 0:  # numpy's string arrays drop trailing NULs: 'a\x00' would be read as the value 'a'
        line = len((text[:nul] + "x").splitlines())  # numbered as _parse numbers them
        raise InputError(f"{path}, line {line}: a NUL character; an ARFF file is text (a binary or damaged file?)")
    data = _parse(text.splitlines(), str(path), super_root)
    return data if nominal == "codes" else data.one_hot()


_NOMINAL = ("codes", "one-hot")


# ---------------------------------------------------------------------- parsing
@dataclass
class _Attribute:
    name: str
    kind: str  # "numeric", "nominal" or "hierarchical"
    values: object  # nominal: {value: code}; hierarchical: the spec string
    line: int


def _parse(lines, source, super_root):
    attributes, data_line = _parse_header(lines, source)
    where = f"{source}"
    hier = [a for a in attributes if a.kind == "hierarchical"]
    if not hier:
        raise InputError(
            f"{where}: no '@ATTRIBUTE <name> hierarchical ...' class attribute; this reader "
            "needs the Clus-HMC hierarchical class attribute"
        )
    if len(hier) > 1:
        raise InputError(
            f"{where}: {len(hier)} hierarchical attributes (lines "
            f"{', '.join(str(a.line) for a in hier)}); expected exactly one"
        )
    cls_attr = hier[0]
    hierarchy, excluded = _hierarchy_from_spec(cls_attr.values, super_root, source, cls_attr.line)
    class_col = attributes.index(cls_attr)
    n_attr = len(attributes)
    features_attrs = [a for a in attributes if a is not cls_attr]

    feature_rows, class_tokens, line_numbers = [], [], []
    # numbers alone (hom_FUN: 47,034 a row): each row parsed as it is read, not kept as strings (gigabytes)
    numeric = np.empty((len(lines) - data_line, len(features_attrs))) if all(
        a.kind == "numeric" for a in features_attrs) else None
    for i in range(data_line, len(lines)):
        line = lines[i].strip()
        if not line or line[0] == "%":
            continue
        lineno = i + 1
        if line[0] == "{":
            raise InputError(
                f"{source}, line {lineno}: sparse ARFF rows ({{index value, ...}}) are not supported"
            )
        if "'" in line or '"' in line:
            tokens = _split_quoted(line, source, lineno)
        else:
            tokens = line.split(",")
        if len(tokens) != n_attr:
            raise InputError(
                f"{source}, line {lineno}: the row has {len(tokens)} values but the header "
                f"declares {n_attr} attributes"
            )
        class_tokens.append(tokens.pop(class_col))
        if numeric is not None:
            row = numeric[len(line_numbers)]
            try:
                row[:] = np.fromiter(map(float, tokens), dtype=float, count=len(tokens))
            except ValueError:  # missing values (?); else a quoted number or a bad cell, which _cells names
                try:
                    row[:] = np.fromiter(map(float, ["nan" if t == _MISSING else t for t in tokens]), dtype=float,
                                         count=len(tokens))
                except ValueError:
                    row[:] = _cells([tokens], features_attrs, range(len(tokens)), source, [lineno])[0]
        else:
            feature_rows.append(tokens)
        line_numbers.append(lineno)

    if numeric is not None:
        features = numeric[:len(line_numbers)]
    else:
        features = _feature_matrix(feature_rows, features_attrs, source, line_numbers)
    labels = _label_matrix(class_tokens, hierarchy, super_root, source, line_numbers)
    return HMCData(
        features=features,
        labels=labels,
        hierarchy=hierarchy,
        feature_names=tuple(a.name for a in features_attrs),
        excluded=excluded,
        path=source,
        categories=tuple(tuple(a.values) if a.kind == "nominal" else None for a in features_attrs),
    )


def _parse_header(lines, source):
    attributes = []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line[0] == "%":
            continue
        lineno = i + 1
        keyword = line.split(None, 1)[0].lower()
        if keyword == "@relation":
            continue
        if keyword == "@data":
            if not attributes:
                raise InputError(f"{source}, line {lineno}: @DATA before any @ATTRIBUTE")
            return attributes, i + 1
        if keyword != "@attribute":
            raise InputError(
                f"{source}, line {lineno}: expected @RELATION, @ATTRIBUTE or @DATA in the "
                f"header, got {line[:60]!r}"
            )
        attributes.append(_parse_attribute(line[len("@attribute"):].strip(), source, lineno))
    raise InputError(f"{source}: no @DATA line")


def _parse_attribute(rest, source, lineno):
    name, rest = _take_name(rest, source, lineno)
    rest = rest.strip()
    if not rest:
        raise InputError(f"{source}, line {lineno}: attribute {name!r} has no type")
    if rest[0] == "{":
        if not rest.endswith("}"):
            raise InputError(f"{source}, line {lineno}: nominal attribute {name!r} lacks a closing '}}'")
        values = [_unquote(v) for v in _split_quoted(rest[1:-1], source, lineno)]
        if len(set(values)) != len(values):  # each value once, at its first place: one code and one column each
            warn(f"{source}, line {lineno}: nominal attribute {name!r} declares {preview(repeated(values))} "
                 "more than once; each is read once, at its first place", UserWarning)
            values = list(dict.fromkeys(values))
        return _Attribute(name, "nominal", {v: float(c) for c, v in enumerate(values)}, lineno)
    parts = rest.split(None, 1)
    kind = parts[0].lower()
    if kind in _NUMERIC_TYPES:
        return _Attribute(name, "numeric", None, lineno)
    if kind == "hierarchical":
        spec = parts[1].strip() if len(parts) > 1 else ""
        if not any(s.strip() for s in spec.split(",")):  # nothing, or separators alone
            raise InputError(f"{source}, line {lineno}: hierarchical attribute {name!r} lists no classes")
        return _Attribute(name, "hierarchical", spec, lineno)
    raise InputError(
        f"{source}, line {lineno}: attribute {name!r} has type {parts[0]!r}; supported types are "
        "numeric, real, integer, nominal {...} and hierarchical"
    )


def _take_name(rest, source, lineno):
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        end = 1
        while end < len(rest):
            if rest[end] == "\\":
                end += 2
                continue
            if rest[end] == quote:
                return _unquote(rest[: end + 1]), rest[end + 1 :]
            end += 1
        raise InputError(f"{source}, line {lineno}: unterminated quoted attribute name")
    parts = rest.split(None, 1)
    if not parts:
        raise InputError(f"{source}, line {lineno}: @ATTRIBUTE without a name")
    return parts[0], parts[1] if len(parts) > 1 else ""


def _split_quoted(line, source, lineno):
    """Split on commas outside quotes; quoted tokens keep their quotes (see :func:`_unquote`)."""
    tokens, pos, n = [], 0, len(line)
    while True:
        while pos < n and line[pos] in " \t":
            pos += 1
        if pos < n and line[pos] in "'\"":
            quote, end = line[pos], pos + 1
            while end < n and line[end] != quote:
                end += 2 if line[end] == "\\" else 1
            if end >= n:
                raise InputError(f"{source}, line {lineno}: unterminated quoted value {line[pos:pos + 40]!r}")
            tokens.append(line[pos : end + 1])
            pos = end + 1
            while pos < n and line[pos] in " \t":
                pos += 1
            if pos < n and line[pos] != ",":
                raise InputError(
                    f"{source}, line {lineno}: unexpected text after a quoted value: {line[pos:pos + 40]!r}"
                )
        else:
            end = line.find(",", pos)
            end = n if end == -1 else end
            tokens.append(line[pos:end].strip())
            pos = end
        if pos >= n:
            return tokens
        pos += 1  # the comma


def _unquote(token):
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in ("'", '"'):
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return token


def _feature_matrix(rows, attrs, source, line_numbers):
    m, f = len(rows), len(attrs)
    if m == 0:
        return np.empty((0, f), dtype=float)
    numeric = [j for j, a in enumerate(attrs) if a.kind == "numeric"]
    out = np.empty((m, f), dtype=float)
    if numeric:  # beside nominal columns (numbers alone are parsed row by row in _parse)
        table = np.array([[r[j] for j in numeric] for r in rows])
        if table.dtype.itemsize < 12:  # room for "nan" in a fixed-width string array
            table = table.astype("<U3")
        table[table == _MISSING] = "nan"
        try:
            out[:, numeric] = table.astype(float)
        except ValueError:  # a bad cell: parse cell by cell to name it
            out[:, numeric] = _cells(rows, attrs, numeric, source, line_numbers)
    nominal = [j for j, a in enumerate(attrs) if a.kind == "nominal"]
    if nominal:
        out[:, nominal] = _nominal_codes(rows, attrs, nominal, source, line_numbers)
    return out


_BLOCK_CELLS = 1 << 22  # nominal cells decoded at a time: their strings, codes and masks stay in tens of MB
_LONG_VALUE = 32  # a declaration with a longer value is parsed cell by cell (the table's strings would be as wide)


def _nominal_codes(rows, attrs, columns, source, line_numbers):
    """The nominal columns as codes, compared a declared value at a time over the columns that declare the
    same values, a block of columns at a time (a file of 20,000 binary features is read in seconds, not cell
    by cell).

    A group's strings are one character longer than its longest declared value, so a longer token, cut to
    that width, equals none of them. A group with a token that is not a declared value as written (a quoted
    or padded value, an undeclared one), with a value longer than ``_LONG_VALUE`` or with a value that has
    outer spaces or quotes is parsed cell by cell, which unquotes or names the cell. An unquoted ``?`` is a
    missing value, declared or not, as in the cell parser (a quoted one is left to it)."""
    out = np.empty((len(rows), len(columns)))
    groups = {}
    for c, j in enumerate(columns):
        groups.setdefault(tuple(attrs[j].values), []).append(c)
    step = max(1, _BLOCK_CELLS // max(1, len(rows)))
    for values, group in groups.items():
        width = 1 + max(len(_MISSING), *map(len, values))
        # a value with outer spaces or quotes (declared ' a' or '"b"') would match a raw token that the cell
        # parser strips or unquotes first (to 'a', 'b'): such a declaration is read cell by cell
        by_cell = width > _LONG_VALUE + 1 or any(_unquote(v) != v for v in values)
        for b in range(0, len(group), step):
            part = group[b:b + step]
            where = [columns[c] for c in part]
            if by_cell:
                out[:, part] = _cells(rows, attrs, where, source, line_numbers)
                continue
            j0, j1 = where[0], where[-1] + 1
            cells = [r[j0:j1] for r in rows] if j1 - j0 == len(where) else [[r[j] for j in where] for r in rows]
            block = np.array(cells, dtype=f"<U{width}").reshape(len(rows), len(where))
            codes = np.full(block.shape, np.nan)
            read = block == _MISSING
            for code, value in enumerate(values):
                if value != _MISSING:
                    hit = block == value
                    codes[hit] = code
                    read |= hit
            out[:, part] = codes if read.all() else _cells(rows, attrs, where, source, line_numbers)
    return out


def _cells(rows, attrs, columns, source, line_numbers):
    """Some columns parsed cell by cell: a number, a nominal value's code, NaN for ``?``; a quoted ``'?'`` is the
    value ``?`` where the attribute declares it (as Weka and liac-arff read it), else missing too."""
    out = np.empty((len(rows), len(columns)))
    for c, j in enumerate(columns):
        a = attrs[j]
        quoted_missing = a.kind == "nominal" and _MISSING in a.values  # a declared value, when quoted
        for i, row in enumerate(rows):
            token = _unquote(row[j])
            if token == _MISSING and not (quoted_missing and row[j].strip() != _MISSING):
                out[i, c] = np.nan
                continue
            try:
                out[i, c] = a.values[token] if a.kind == "nominal" else float(token)
            except (KeyError, ValueError):
                what = f"has no value {token!r}; declared values: {preview(a.values)}" if a.kind == "nominal" \
                    else f"has value {token!r}, not a number"
                raise InputError(f"{source}, line {line_numbers[i]}: {a.kind} attribute {a.name!r} {what}") from None
    return out


def _label_matrix(tokens, hierarchy, super_root, source, line_numbers):
    index = {c: k for k, c in enumerate(hierarchy.classes)}
    rows, cols = [], []
    for i, token in enumerate(tokens):
        token = _unquote(token)
        if not token:
            continue
        for label in token.split("@"):
            label = label.strip()
            if label == super_root:
                continue
            k = index.get(label)
            if k is None:
                raise InputError(
                    f"{source}, line {line_numbers[i]}: label {label!r} is not a class of the "
                    f"hierarchy declared by the class attribute ({hierarchy.n_classes} classes, "
                    f"e.g. {preview(hierarchy.classes, 3)})"
                )
            rows.append(i)
            cols.append(k)
    # close upward with one sparse product: row i gets its listed classes and all
    # their ancestors (ancestor_matrix[k, a] is True when a is an ancestor of k)
    from scipy import sparse

    k = hierarchy.n_classes
    ones = np.ones(len(rows), dtype=np.int32)
    direct = sparse.csr_matrix((ones, (rows, cols)), shape=(len(tokens), k))
    closure = sparse.csr_matrix(hierarchy.ancestor_matrix, dtype=np.int32) + sparse.identity(
        k, dtype=np.int32, format="csr"
    )
    return ((direct @ closure).toarray() > 0).astype(np.int8)


def _hierarchy_from_spec(spec, super_root, source, lineno):
    items = [s.strip() for s in spec.split(",")]
    items = [s for s in items if s]
    depth = [s.count("/") for s in items]
    where = f"{source}, line {lineno}"
    try:
        if min(depth) == 0:
            return _from_paths(items, where), ()
        if max(depth) == 1:
            return _from_edge_list(items, super_root, where)
    except HierarchyError as exc:
        raise HierarchyError(f"{where}: {exc}") from None
    raise InputError(
        f"{where}: cannot tell the class attribute's format: FunCat paths need top-level "
        "classes without '/', GO edges are all 'parent/child' pairs; got items with up to "
        f"{max(depth) + 1} parts and none with one, e.g. {preview(items, 3)}"
    )


def _from_paths(items, where):
    listed = set(items)
    if len(listed) != len(items):  # harmless in a declaration (one Clus-HMC image data set has them): read once
        warn(f"{where}: the class attribute lists {len(items) - len(listed)} paths twice "
             f"({preview(repeated(items))}); each is read once", UserWarning)
        items = list(dict.fromkeys(items))
    edges = []
    for item in items:
        if "/" in item:
            parent = item.rsplit("/", 1)[0]
            if parent not in listed:
                raise HierarchyError(
                    f"path {item!r} is listed but its parent path {parent!r} is not"
                )
            edges.append((parent, item))
    return _hierarchy(items, edges)


def _from_edge_list(items, super_root, where):
    edges, order, excluded = [], {}, []
    for item in items:
        parent, child = (s.strip() for s in item.split("/"))
        if not parent or not child:
            raise HierarchyError(f"edge {item!r} has an empty end")
        if child == super_root:
            raise HierarchyError(f"edge {item!r} makes the super-root {super_root!r} a child")
        if parent == super_root:
            excluded.append(child)
            order.setdefault(child, None)
            continue
        order.setdefault(parent, None)
        order.setdefault(child, None)
        edges.append((parent, child))
    return _hierarchy(list(order), edges), tuple(dict.fromkeys(excluded))


def _hierarchy(classes, edges):
    try:
        return Hierarchy.from_edges(edges, classes=classes)
    except HierarchyError as exc:
        if "twice" in str(exc):
            raise HierarchyError(f"the class attribute lists edges twice: {exc}") from None
        raise


# ---------------------------------------------------------------------- splits
_SPLIT_FILES = {
    "train": ("{}.train.arff", "{}_Train.arff", "{}_train.arff", "{}_trainvalid.arff"),
    "valid": ("{}.valid.arff", "{}_Valid.arff", "{}_valid.arff"),
    "test": ("{}.test.arff", "{}_Test.arff", "{}_test.arff"),
}
_SUFFIX = re.compile(r"([._](train|valid|test|trainvalid))\.arff$", re.IGNORECASE)


def dataset_name(path):
    """The data set's name from one of its file names, by the spellings :func:`load_hmc_split` looks for.

    Parameters
    ----------
    path : str or os.PathLike
        A file of the data set (only its name is read).

    Returns
    -------
    str
        The name without its split suffix (``.train.arff``, ``_Test.arff``,
        ``_trainvalid.arff``, ...) or, failing that, without ``.arff``.

    Examples
    --------
    >>> dataset_name("data/cellcycle_FUN.train.arff"), dataset_name("Diatoms_train.arff")
    ('cellcycle_FUN', 'Diatoms')
    """
    name = Path(path).name
    stem = _SUFFIX.sub("", name)
    return stem if stem != name else name[:-len(".arff")] if name.endswith(".arff") else name


def load_hmc_split(name, data_dir, *, super_root="root", nominal="codes"):
    """Read the train, validation and test files of one benchmark.

    Files are looked up as ``<name>.train.arff`` / ``.valid.arff`` /
    ``.test.arff`` (the Clus naming), or ``<name>_Train.arff`` / ``_Test.arff``
    and ``<name>_trainvalid.arff`` / ``_test.arff`` (ImCLEF07A, Enron_corr).
    All three must declare the same hierarchy and the same features; the
    returned splits share one :class:`Hierarchy` and one column order.

    Parameters
    ----------
    name : str
        E.g. ``"cellcycle_FUN"``, ``"eisen_GO"``, ``"ImCLEF07A"``, ``"Enron_corr"``.
    data_dir : str or os.PathLike
        The folder holding the ARFF files.
    super_root : str or None
        See :func:`load_hmc_arff`.
    nominal : {"codes", "one-hot"}
        See :func:`load_hmc_arff`; each file's declared values must agree.

    Returns
    -------
    HMCSplit
        ``valid`` is None when the benchmark has no validation file.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"data_dir {str(data_dir)!r} is not a folder")
    found = {}
    for part, patterns in _SPLIT_FILES.items():
        for pattern in patterns:
            candidate = data_dir / pattern.format(name)
            if candidate.is_file():
                found[part] = candidate
                break
    missing = [p for p in ("train", "test") if p not in found]
    if missing:
        available = sorted({_SUFFIX.sub("", p.name) for p in data_dir.glob("*.arff")})
        raise FileNotFoundError(
            f"no {' or '.join(missing)} file for benchmark {name!r} in {str(data_dir)!r} "
            f"(looked for {', '.join(pattern.format(name) for pattern in _SPLIT_FILES[missing[0]])}); "
            f"benchmarks there: {available}"
        )
    parts = {p: load_hmc_arff(f, super_root=super_root, nominal=nominal) for p, f in found.items()}
    reference = parts["train"]
    for data in parts.values():
        data.check_hierarchy_like(reference)
        data.check_features_like(reference)
    shared = {
        p: dataclasses.replace(d, hierarchy=reference.hierarchy) for p, d in parts.items()
    }
    return HMCSplit(
        name=name,
        hierarchy=reference.hierarchy,
        train=shared["train"],
        valid=shared.get("valid"),
        test=shared["test"],
    )
