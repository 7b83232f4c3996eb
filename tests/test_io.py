"""Reading and writing hierarchy files and class matrices (hmcpgm.io)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hierarchies

from hmcpgm import Hierarchy, HierarchyError, InputError
from hmcpgm.io import read_hierarchy, read_matrix, write_hierarchy, write_matrix


def _write(tmp_path, text, name="h.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------------- hierarchies
@pytest.mark.parametrize(
    "text",
    [
        "A,B\nA,C\nC,D\n",
        "A\tB\nA\tC\nC\tD\n",
        "parent,child\nA,B\nA,C\nC,D\n",
        "Parent\tChild\nA\tB\nA\tC\nC\tD\n",
        "# a comment\nA,B\n\n  # indented comment\nA,C\nC,D\n\n",
        " A , B \nA,C\nC,D\n",
        "A;B\nA;C\nC;D\n",
    ],
    ids=["csv", "tsv", "header", "tsv-header", "comments-blank", "spaces", "semicolon"],
)
def test_read_hierarchy_variants(tmp_path, text):
    h = read_hierarchy(_write(tmp_path, text))
    assert h.classes == ("A", "B", "C", "D")
    assert set(h.edges) == {("A", "B"), ("A", "C"), ("C", "D")}
    assert h.kind == "tree"


def test_single_name_lines_declare_parentless_classes(tmp_path):
    h = read_hierarchy(_write(tmp_path, "parent,child\nA,B\nZ\n,Y\nB,C\n"))
    assert h.classes == ("A", "B", "Z", "Y", "C")
    assert set(h.roots) == {"A", "Z", "Y"}
    assert h.kind == "forest"


def test_single_name_line_of_a_class_with_a_parent(tmp_path):
    # declaring a class alone does not make it a root when an edge gives it a parent
    h = read_hierarchy(_write(tmp_path, "B\nA,B\n"))
    assert h.classes == ("B", "A")
    assert h.roots == ("A",)


def test_dag_file(tmp_path):
    h = read_hierarchy(_write(tmp_path, "A,B\nA,C\nB,D\nC,D\n"))
    assert h.kind == "dag"
    d = h.classes.index("D")
    assert sorted(h.classes[p] for p in h.parent_indices[d]) == ["B", "C"]


def test_names_are_strings(tmp_path):
    h = read_hierarchy(_write(tmp_path, "1,2\n1,3\n"))
    assert h.classes == ("1", "2", "3")


@pytest.mark.parametrize(
    "text, match",
    [
        ("A,B\nB,C\nC,A\n", "cycle"),
        ("A,B\nA,B,C\n", "line 2: expected 'parent,child', got 'A,B,C'"),
        ("A\tB\nA\t\n", r"line 2: expected 'parent\tchild'"),
        ("", "no edges"),
        ("\n\n# nothing\n", "no edges"),
        ("A B\nB C\n", "cannot tell the delimiter"),
        ("A,B\nA,A\n", "self loops"),
        ("A,B\nA,B\n", "twice"),
    ],
    ids=["cycle", "three-fields", "empty-child", "empty", "comments-only", "spaces", "self-loop", "duplicate-edge"],
)
def test_malformed_hierarchy_files(tmp_path, text, match):
    with pytest.raises(HierarchyError, match=match) as exc:
        read_hierarchy(_write(tmp_path, text))
    assert "h.csv" in str(exc.value)


def test_missing_hierarchy_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv' does not exist"):
        read_hierarchy(tmp_path / "nope.csv")


@pytest.mark.parametrize(
    "hierarchy",
    [
        Hierarchy.from_edges([("A", "B"), ("A", "C"), ("C", "D")]),
        Hierarchy.from_edges([("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")], classes=["A", "B", "C", "D", "E"]),
        Hierarchy.from_parents([None, 0, 0, None, 3, None]),
    ],
    ids=["tree", "dag-with-isolated", "forest-int-names"],
)
def test_write_then_read_hierarchy(tmp_path, hierarchy):
    path = tmp_path / "h.csv"
    write_hierarchy(hierarchy, path)
    again = read_hierarchy(path)
    assert set(again.classes) == {str(c) for c in hierarchy.classes}
    assert set(again.edges) == {(str(p), str(c)) for p, c in hierarchy.edges}


# ---------------------------------------------------------------------- matrices
@pytest.fixture
def tree():
    return Hierarchy.from_edges([("A", "B"), ("A", "C")])


def test_read_matrix_reorders_columns(tmp_path, tree):
    path = _write(tmp_path, "C,A,B\n0.3,0.1,0.2\n0.6,0.4,0.5\n", "m.csv")
    ids, m = read_matrix(path, tree, "scores")
    np.testing.assert_array_equal(m, [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    assert ids is None  # no id column: objects are numbered by row


def test_read_matrix_id_column(tmp_path, tree):
    path = _write(tmp_path, "gene,B,A,C\nYAL001,2,1,3\nYAL002,5,4,6\n", "m.csv")
    ids, m = read_matrix(path, tree, "scores", id_column="gene")
    assert list(ids) == ["YAL001", "YAL002"]
    np.testing.assert_array_equal(m, [[1, 2, 3], [4, 5, 6]])


def test_read_matrix_tab_separated(tmp_path, tree):
    path = _write(tmp_path, "A\tB\tC\n1\t2\t3\n", "m.tsv")
    _, m = read_matrix(path, tree, "scores")
    np.testing.assert_array_equal(m, [[1, 2, 3]])


def test_integer_class_names_match_string_headers(tmp_path):
    h = Hierarchy.from_parents([None, 0, 0])
    _, m = read_matrix(_write(tmp_path, "2,0,1\n3,1,2\n", "m.csv"), h, "scores")
    np.testing.assert_array_equal(m, [[1, 2, 3]])


def test_write_then_read_matrix(tmp_path, tree):
    rng = np.random.default_rng(0)
    values = rng.normal(size=(20, 3))
    write_matrix(tmp_path / "m.csv", values, tree, ids=[f"o{i}" for i in range(20)], id_column="obj")
    ids, again = read_matrix(tmp_path / "m.csv", tree, "scores", id_column="obj")
    assert list(ids) == [f"o{i}" for i in range(20)]
    np.testing.assert_array_equal(again, values)  # pandas writes floats with round-trip precision
    frame = pd.read_csv(tmp_path / "m.csv")
    assert list(frame.columns) == ["obj", "A", "B", "C"]


@pytest.mark.parametrize(
    "text, kwargs, match",
    [
        ("A,B\n1,2\n", {}, r"missing: \['C'\]"),
        ("A,B,C,D\n1,2,3,4\n", {}, r"not classes of the hierarchy: \['D'\]"),
        ("A,B,X\n1,2,3\n", {}, r"missing: \['C'\]; not classes of the hierarchy: \['X'\]"),
        ("A,B,C\n1,two,3\n", {}, r"row 1 \(line 2\), column 'B' holds 'two', not a number"),
        ("A,B,C\n1,nan,3\n", {},
         r"row 1 \(line 2\), column 'B' is empty, NaN or infinite; values must be finite numbers"),
        ("A,B,C\n2,3,4\n1,,3\n", {}, r"row 2 \(line 3\), column 'B' is empty, NaN or infinite; values must be finite"),
        ("A,B,C\n1,inf,3\n", {}, r"row 1 \(line 2\), column 'B' is empty, NaN or infinite"),
        ("A,B,C\n1,2,3\n", {"id_column": "gene"}, r"no id column 'gene'"),
        ("A,A,B,C\n1,1,2,3\n", {}, r"the header names a column twice: \['A'\]"),
        # a field too many: pandas took the first one as an index and shifted the rest, silently
        ("A,B,C\n0.1,0.2,0.3,0.4\n", {}, r"line 2: 4 fields, but the header names 3 columns; every column must be "
                                         r"a class$"),
        ("A,B,C\n0.1,0.2,0.3\n0.1,0.2,0.3,0.4\n", {}, r"line 3: 4 fields, but the header names 3 columns"),
        ("id,A,B,C\nx,0.1,0.2,0.3,0.4\n", {"id_column": "id"}, r"line 2: 5 fields, but the header names 4 columns; "
                                                                r"every column must be a class or the id column"),
        # "some cells are not numbers", naming no cell
        ("A,B,C\n1, ,3\n", {}, r"row 1 \(line 2\), column 'B' is empty, NaN or infinite"),
        ("A,B,C\n1,99999999999999999999999,3\n", {}, r"column 'B' cannot be read as 64-bit numbers"),
    ],
    ids=["missing", "unknown", "missing-and-unknown", "text", "nan", "empty-cell", "inf", "id-column", "duplicate",
         "wide-first-row", "wide-later-row", "wide-row-with-ids", "spaces-cell", "huge-integer"],
)
def test_read_matrix_errors(tmp_path, tree, text, kwargs, match):
    path = _write(tmp_path, text, "bad.csv")
    with pytest.raises(InputError, match=match) as exc:
        read_matrix(path, tree, "scores", **kwargs)
    assert "scores file" in str(exc.value) and "bad.csv" in str(exc.value)


def test_read_matrix_missing_file(tmp_path, tree):
    with pytest.raises(FileNotFoundError, match="scores file .*nope.csv' does not exist"):
        read_matrix(tmp_path / "nope.csv", tree, "scores")


def test_a_wide_row_is_refused_by_the_chunked_reader_too(tmp_path, tree):
    from hmcpgm.scale import read_matrix_chunks

    for text, line in (("A,B,C\n0.1,0.2,0.3,0.4\n", 2), ("A,B,C\n" + "0.1,0.2,0.3\n" * 5 + "1,2,3,4\n", 7)):
        path = _write(tmp_path, text, "wide.csv")
        with pytest.raises(InputError, match=f"line {line}: 4 fields, but the header names 3 columns"):
            list(read_matrix_chunks(path, tree, "scores", chunk_size=2))


@pytest.mark.parametrize("text, row, line", [
    ("A,B,C\n1,2,3\n\n4,5,6\n7,oops,9\n", 3, 5),  # a blank line
    ("A,B,C\n\n  \n1,2,3\n4,oops,6\n", 2, 5),  # a blank line and one of spaces
    ('A,B,C\n"1\n",2,3\n\n4,oops,6\n', 2, 5),  # a quoted field over two lines
    ("A,B,C\n1,2,3\n\n4,5,6\n7,,9\n", 3, 5),  # an empty cell
])
def test_a_bad_cell_after_a_blank_line_is_named_by_its_own_line(tmp_path, tree, text, row, line):
    """pandas skips blank lines, and messages named 'line row + 1' (line 4 for line 5); the chunked reader
    re-read a chunk's rows after a blank line from the wrong place and blamed 64-bit integers (audit25)."""
    from hmcpgm.scale import read_matrix_chunks

    path = _write(tmp_path, text, "blank.csv")
    where = rf"blank.csv: row {row} \(line {line}\), column 'B' "
    with pytest.raises(InputError, match=where):
        read_matrix(path, tree, "scores")
    for chunk_size in (1, 2, 10):
        with pytest.raises(InputError, match=where):
            list(read_matrix_chunks(path, tree, "scores", chunk_size=chunk_size))


def test_a_header_alone_with_allow_empty_is_an_empty_matrix(tmp_path, tree):
    """The docstring promised it; the empty columns read as text gave 'some cells are not numbers'."""
    ids, m = read_matrix(_write(tmp_path, "A,B,C\n", "e.csv"), tree, "scores", allow_empty=True)
    assert ids is None and m.shape == (0, 3)
    ids, m = read_matrix(_write(tmp_path, "id,C,B,A\n", "e.csv"), tree, "scores", id_column="id", allow_empty=True)
    assert ids.shape == (0,) and m.shape == (0, 3)


def test_a_tab_separated_hierarchy_that_starts_with_a_lone_class(tmp_path):
    """The delimiter was guessed from the first line alone: a comma, so every 'parent<TAB>child' was one name."""
    h = read_hierarchy(_write(tmp_path, "0\n1\t3\n2\t4\n", "h.tsv"))
    assert h.classes == ("0", "1", "3", "2", "4") and set(h.edges) == {("1", "3"), ("2", "4")}


def test_a_class_name_that_starts_with_a_hash_survives_a_round_trip(tmp_path):
    """write_hierarchy wrote '#A,B' unquoted, which read_hierarchy skips as a comment."""
    h = Hierarchy.from_edges([("r", "x"), ("#A", "B")], classes=["r", "x", "#A", "B", "# lone"])
    write_hierarchy(h, tmp_path / "h.csv")
    again = read_hierarchy(tmp_path / "h.csv")
    assert set(again.classes) == set(h.classes) and set(again.edges) == set(h.edges)


@settings(max_examples=60, deadline=None)
@given(h=hierarchies(kind="dag", max_classes=10, permute=True), hashes=st.booleans())
def test_a_written_hierarchy_reads_back_with_its_class_order(tmp_path_factory, h, hashes):
    """The class order is the column order of every matrix; write_hierarchy wrote the edges alone, which
    read_hierarchy read back in another order ((a,b,c,d,e) as (a,b,c,e,d), a review, audit45)."""
    if hashes:  # a name starting with '#' is quoted, not read as a comment
        h = Hierarchy.from_edges([(f"#{p}", f"#{c}") for p, c in h.edges], classes=[f"#{c}" for c in h.classes])
    path = tmp_path_factory.mktemp("h") / "h.csv"
    write_hierarchy(h, path)
    again = read_hierarchy(path)
    assert again.classes == h.classes and set(again.edges) == set(h.edges) and again == h


def test_a_hierarchy_whose_edges_keep_its_order_is_written_as_its_edges():
    import io

    for h, text in [(Hierarchy.from_edges([("a", "b"), ("a", "c"), ("x", "y")], classes=list("abcxy")),
                     "a,b\na,c\nx,y\n"),  # the edges alone keep the order: as before
                    (Hierarchy.from_edges([("a", "b"), ("b", "c"), ("a", "d")]), "a,b\nb,c\na,d\n"),
                    (Hierarchy.from_edges([("a", "b"), ("a", "c"), ("c", "d"), ("b", "e")]),  # e before d: no
                     "a,b\na,c\nc,d\nb,e\n"),
                    (Hierarchy.from_edges([("r", "x"), ("s", "x")], classes=["x", "s", "r"]),
                     "x\ns\nr\ns,x\nr,x\n")]:
        out = io.StringIO(newline="")
        write_hierarchy(h, out)
        assert out.getvalue().replace("\r\n", "\n") == "parent,child\n" + text


def test_one_name_that_holds_a_space_is_read_in_double_quotes_as_the_refusal_says(tmp_path):
    """A file of one column whose name holds a space was refused without saying how to write it (a review,
    audit45): a quoted name is one field."""
    (tmp_path / "h.csv").write_text("only one\n")
    with pytest.raises(HierarchyError, match="a single name that holds a space goes in double quotes"):
        read_hierarchy(tmp_path / "h.csv")
    (tmp_path / "h.csv").write_text('"only one"\n')
    h = read_hierarchy(tmp_path / "h.csv")
    assert h.classes == ("only one",)
    (tmp_path / "s.csv").write_text('"only one"\n0.25\n0.5\n')
    _, values = read_matrix(tmp_path / "s.csv", h, "scores")
    np.testing.assert_array_equal(values, [[0.25], [0.5]])


@pytest.mark.parametrize("header, hint", [
    ("A,B,u\u0308", "'\u00fc' and 'u\u0308' are the same text in two Unicode forms \\(composed, NFC, and decomposed"),
    ("A,B,c", r"'C' and 'c' differ only in letter case"),
    ("A,B,X", r"\['X'\]\)$"),  # nothing alike: no hint
])
def test_a_missing_class_that_a_column_prints_like_is_pointed_out(tmp_path, header, hint):
    """A header in decomposed Unicode (a Mac's file names) against a hierarchy in composed form was refused with
    "missing: ['ü']; not classes of the hierarchy: ['ü']", two names that print the same (a review, audit45)."""
    h = Hierarchy.from_edges([("A", "B"), ("A", "\u00fc" if "u\u0308" in header else "C")])
    (tmp_path / "m.csv").write_text(f"{header}\n1,2,3\n", encoding="utf-8")
    with pytest.raises(InputError, match=hint):
        read_matrix(tmp_path / "m.csv", h, "scores")


def test_a_class_name_beyond_the_csv_modules_field_limit_is_named_by_its_line(tmp_path):
    # csv.reader's own limit (131072 characters) raised _csv.Error, a traceback on the command line
    import csv

    long = "a" * (csv.field_size_limit() + 1)
    (tmp_path / "h.csv").write_text(f"# comment\n\nx,y\n\nz,{long}\n")
    with pytest.raises(HierarchyError, match=r"h\.csv, line 5: a field is longer than 131072 characters"):
        read_hierarchy(tmp_path / "h.csv")
    (tmp_path / "s.csv").write_text(f"{long},b\n0.1,0.2\n")
    with pytest.raises(InputError, match=r"s\.csv, line 1: a field is longer than"):
        read_matrix(tmp_path / "s.csv", Hierarchy.from_edges([("b", "c")]), "scores")


_CELL_TEXT = st.text(alphabet=st.sampled_from(list('ab ,"\r\n\tü')), max_size=4)
_SPECIAL_FLOATS = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e16, 1e-5, 0.1])


@st.composite
def _frames(draw):
    """A DataFrame of the column kinds hmcpgm writes (float64, integers, booleans, strings) and some it does not."""
    n = draw(st.integers(0, 4))
    kinds = draw(st.lists(st.sampled_from(["f8", "f8", "i1", "i8", "u8", "b", "str", "object", "f4", "cat", "nan_str"]),
                          min_size=1, max_size=6))
    columns = {}
    for j, kind in enumerate(kinds):
        if kind in ("f8", "f4"):
            cells = st.floats(width=64 if kind == "f8" else 32) | _SPECIAL_FLOATS
            values = np.array(draw(st.lists(cells, min_size=n, max_size=n)), dtype=kind)
        elif kind in ("i1", "i8", "u8"):
            info = np.iinfo(kind)
            values = np.array(draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=n, max_size=n)),
                              dtype=kind)
        elif kind == "b":
            values = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        elif kind == "cat":
            values = pd.Categorical(draw(st.lists(_CELL_TEXT, min_size=n, max_size=n)))
        else:
            texts = draw(st.lists(_CELL_TEXT, min_size=n, max_size=n))
            if kind == "nan_str" and n:
                texts[0] = None
            values = pd.Series(texts, dtype=object if kind == "object" else None)
        columns[f"{draw(_CELL_TEXT)}{j}"] = values
    return pd.DataFrame(columns)


@settings(max_examples=300, deadline=None)
@given(frame=_frames(), header=st.booleans())
def test_write_csv_gives_the_bytes_of_pandas_to_csv(frame, header):
    """Independent reference: pandas' own writer, on every kind of column (the fast path and the fallback); a
    header name pandas leaves bare though hmcpgm's reader would split it (a tab or ';' in it, a space in a lone
    name) is quoted, and its line reads back as the names."""
    import csv
    import io

    from hmcpgm._csvwrite import _header_quoted, write_csv
    from hmcpgm.io import _delimiter

    ours, theirs = io.StringIO(), io.StringIO()
    write_csv(frame, ours, header=header)
    frame.to_csv(theirs, index=False, header=header)
    if header and _header_quoted(frame.columns):
        bare = frame.iloc[:0].to_csv(index=False)  # pandas' header line
        quoted = ours.getvalue()[:len(ours.getvalue()) - len(theirs.getvalue()) + len(bare)]
        assert ours.getvalue()[len(quoted):] == theirs.getvalue()[len(bare):]  # the rows, as pandas writes them
        assert next(csv.reader(io.StringIO(quoted, newline=""))) == [str(c) for c in frame.columns]
        if not any(ch in str(c) for c in frame.columns for ch in "\r\n"):  # one line: read_header's delimiter
            assert _delimiter(quoted.rstrip("\r\n"), "header", "-") == ","
    else:
        assert ours.getvalue() == theirs.getvalue()


def test_names_that_would_read_back_as_others_are_refused_or_quoted(tmp_path):
    """audit59: write_hierarchy wrote classes 1 and '1' (or 'a' and ' a') as one name, read back as one class
    without a word, and an empty name on a line read_hierarchy drops; write_matrix left a lone class name with a
    space, or a name with ';' or a tab, bare, so read_matrix could not read its own writer's file."""
    for classes, edges in [([0, 1, "1", 2], [(0, 1), ("1", 2)]), (["a", " a"], []), (["", "a"], [("", "a")])]:
        h = Hierarchy.from_edges(edges, classes=classes)
        (tmp_path / "h.csv").write_text("old\n")
        with pytest.raises(InputError, match="both written|empty name as text") as exc:
            write_hierarchy(h, tmp_path / "h.csv")
        assert len(str(exc.value).splitlines()) == 1 and (tmp_path / "h.csv").read_text() == "old\n"
    for names in (["sp ace"], ["x;y"], ["GO 1"], ["a\tb", "c"], ["x;y", "z w"]):
        h = Hierarchy.from_edges([], classes=names)
        values = np.arange(2.0 * len(names)).reshape(2, -1) / 4
        write_matrix(tmp_path / "s.csv", values, h)
        np.testing.assert_array_equal(read_matrix(tmp_path / "s.csv", h, "scores")[1], values)


def test_the_missing_classes_of_integer_names_read_as_text_are_the_missing_ones(tmp_path):
    """audit59: classes [1, 2, 'c'] and the header '1,2,cc' reported 'missing: [1, 2, 'c']' (the text names of
    1 and 2 were matched all or none); 1 and 2 are there."""
    h = Hierarchy.from_edges([], classes=[1, 2, "c"])
    (tmp_path / "s.csv").write_text("1,2,cc\n0.5,0.5,0.5\n")
    with pytest.raises(InputError, match=r"\(missing: \['c'\]; not classes of the hierarchy: \['cc'\]\)"):
        read_matrix(tmp_path / "s.csv", h, "scores")
    # a name with a tab in a comma-separated header: the delimiter is the one that splits the line most (the tab
    # came first, and the message named 2 columns cut at the tab)
    h = Hierarchy.from_edges([], classes=["a", "tab\there", "c"])
    (tmp_path / "s.csv").write_text("a,tab\there,cc\n0.5,0.5,0.5\n")
    with pytest.raises(InputError, match=r"has 3 columns but the hierarchy has 3 classes \(missing: \['c'\]"):
        read_matrix(tmp_path / "s.csv", h, "scores")
    (tmp_path / "s.csv").write_text("c\ta,b\tx\n0.5\t0.5\t0.5\n")  # tab-separated, a comma in a name
    assert read_matrix(tmp_path / "s.csv", Hierarchy.from_edges([], classes=["c", "a,b", "x"]), "scores")[1].shape \
        == (1, 3)


def test_write_csv_takes_the_fast_path_on_the_matrices_hmcpgm_writes():
    """The frames of mLPRs and decisions (an id column, float64 or int8 cells) are formatted here, not by pandas."""
    from hmcpgm._csvwrite import _runs

    frame = pd.DataFrame(np.zeros((2, 3)), columns=["a", "b", "c"])
    frame.insert(0, "id", ["x", "y"])
    assert _runs(frame) == [(0, 1, "text"), (1, 4, "float")]
    assert _runs(frame.astype({"a": np.int8, "b": np.int8, "c": np.int8})) == [(0, 1, "text"), (1, 4, "|i1")]


def test_write_csv_pieces_are_cut_where_a_piece_ends(monkeypatch):
    """Rows formatted a piece at a time give the text of the whole."""
    import io

    from hmcpgm import _csvwrite

    frame = pd.DataFrame(np.arange(21.0).reshape(7, 3) / 7, columns=["a", "b", "c"])
    frame.insert(1, "id", [f"o{i}" for i in range(7)])
    monkeypatch.setattr(_csvwrite, "_CELLS", 8)  # two rows a piece
    out = io.StringIO()
    _csvwrite.write_csv(frame, out)
    assert out.getvalue() == frame.to_csv(index=False)


@pytest.mark.parametrize("id_column", [None, "id"])
def test_a_missing_cell_is_named_first_in_file_order_and_counted_with_or_without_ids(tmp_path, id_column):
    """With an id column the file is read without pandas' missing-value filter (empty cells come as text); the
    message names the same first bad cell and the same count as without ids."""
    h = Hierarchy.from_edges([("r", "a"), ("r", "b")])
    rows = ["0.1,0.2,inf", "0.1,,0.3", "nan, ,1"]
    head = "r,a,b" if id_column is None else "id,r,a,b"
    body = rows if id_column is None else [f"o{i},{row}" for i, row in enumerate(rows)]
    (tmp_path / "s.csv").write_text("\n".join([head, *body]) + "\n")
    with pytest.raises(InputError, match=r"row 1 \(line 2\), column 'b' is empty, NaN or infinite; values must be "
                                         r"finite numbers \(4 cells are not\)$"):
        read_matrix(tmp_path / "s.csv", h, "scores", id_column=id_column)


def test_a_boolean_column_is_no_missing_cell_in_the_message_of_a_file_with_ids(tmp_path):
    """True and False read as 1 and 0; the missing cell named is the blank one, and counted alone."""
    h = Hierarchy.from_edges([("a", "b")])
    (tmp_path / "v.csv").write_text("id,a,b\nx,True,0.5\ny,False, \n")
    with pytest.raises(InputError, match=r"row 2 \(line 3\), column 'b' is empty, NaN or infinite; values must be "
                                         r"finite numbers \(1 cells are not\)$"):
        read_matrix(tmp_path / "v.csv", h, "values", id_column="id")


def test_a_parquet_text_column_beside_a_boolean_one_is_named_for_its_type(tmp_path):
    pytest.importorskip("pyarrow")
    from hmcpgm.scale import read_matrix_file

    pd.DataFrame({"a": [True, False], "b": ["0.5", "1"]}).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(InputError, match="column 'b' is stored as text, not as numbers"):
        read_matrix_file(tmp_path / "t.parquet", Hierarchy.from_edges([("a", "b")]), "values")


def test_write_matrix_into_a_binary_file_as_pandas_writes_it():
    """A binary file object (BytesIO, gzip.open(..., 'wb')) is left to pandas, which writes bytes into it."""
    import io

    out = io.BytesIO()
    write_matrix(out, [[0.5, 0.25]], Hierarchy.from_parents([None, 0]))
    assert out.getvalue() == b"0,1\n0.5,0.25\n"


def test_a_hierarchy_file_names_the_lines_of_a_repeated_edge_and_shortens_a_wide_line(tmp_path):
    """A repeated edge was 'edges lists the edge ... twice' (no line); a matrix file passed as the hierarchy
    echoed its whole first line (44 KB for 4000 columns)."""
    from hmcpgm.exceptions import HierarchyError
    from hmcpgm.io import read_hierarchy

    (tmp_path / "h.csv").write_text("parent,child\nx,y\nx,z\n# comment\nx,y\n")
    with pytest.raises(HierarchyError, match=r"h.csv, lines 2 and 5: the edge 'x' -> 'y' is listed twice"):
        read_hierarchy(tmp_path / "h.csv")
    (tmp_path / "wide.csv").write_text(",".join(f"c{i}" for i in range(4000)) + "\n")
    with pytest.raises(HierarchyError) as info:
        read_hierarchy(tmp_path / "wide.csv")
    assert len(str(info.value)) - len(str(tmp_path)) < 200 and str(info.value).endswith("(4000 fields)")
