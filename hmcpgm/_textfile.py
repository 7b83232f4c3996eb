"""Text files as every reader opens them: checked, UTF-8 (a byte-order mark dropped), gzip-compressed or not.

A module below :mod:`hmcpgm.io`, :mod:`hmcpgm.ontology` and the OBO reader, which all
read through it, so that a reader anywhere gives the same one-line errors: a folder,
a missing file, another encoding, a broken gzip file.
"""

import contextlib
from pathlib import Path

from .exceptions import InputError

__all__ = ["GZIP_MAGIC", "check_input_file", "gzipped", "not_utf8", "open_text", "plain_text_encoding", "utf8_text"]


def check_input_file(path, what):
    """``path`` as a Path when it is a file; a folder or a missing file is a one-line error naming ``what``."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{what} {str(path)!r} is a directory, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"{what} {str(path)!r} does not exist")
    return path


def plain_text_encoding(path, what):
    """"utf-8-sig" for UTF-8 (with or without a byte-order mark); other encodings are refused."""
    with path.open("rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK\x03\x04"):
        raise InputError(f"{what} {path} is a zip archive (an hmcpgm model .npz?), not a text file")
    if head.startswith(GZIP_MAGIC):
        raise InputError(f"{what} {path} is gzip-compressed; this file must be plain text (decompress it first)")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(
            f"{what} {path} is UTF-16 (or UTF-32) encoded; save it as UTF-8 (e.g. 'CSV UTF-8' in a spreadsheet)"
        )
    return "utf-8-sig"


def open_text(path):
    r"""A text stream over a UTF-8 file (a byte-order mark dropped), gzip-compressed or not.

    Parameters
    ----------
    path : str or Path
        The file; compressed files are told by their first bytes, not by their name
        (GO releases its GAF files as ``.gaf.gz``).

    Returns
    -------
    file object
        Open for reading text; the caller closes it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "a.txt"
    ...     _ = path.write_bytes(b"\xef\xbb\xbfGO:1 0.5\n")
    ...     with open_text(path) as fh:
    ...         fh.read()
    'GO:1 0.5\n'
    """
    path = Path(path)
    if gzipped(path):
        import gzip

        return gzip.open(path, "rt", encoding="utf-8-sig")
    return path.open(encoding="utf-8-sig")


def gzipped(path):
    """Whether the file starts with gzip's magic bytes (its name is not read)."""
    with Path(path).open("rb") as fh:
        return fh.read(2) == GZIP_MAGIC


GZIP_MAGIC = b"\x1f\x8b"


@contextlib.contextmanager
def utf8_text(path, what):
    """:func:`open_text` for readers that stream a file's lines; bad contents are a one-line InputError.

    A ``UnicodeDecodeError`` met in the block becomes an error naming the file, the
    first bad byte and its line; a truncated or broken gzip file one naming the file.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What messages call it (``"predictions file"``).

    Yields
    ------
    file object
    """
    import gzip

    check_input_file(path, what)
    try:
        with open_text(path) as fh:
            yield fh
    except UnicodeDecodeError as exc:
        raise not_utf8(what, path, *first_undecodable(path, exc)) from None
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{what} {path}: cannot decompress it ({exc})") from None


def first_undecodable(path, exc):
    """The first byte that is not UTF-8 and its line, read again line by line (plain or gzip-compressed)."""
    import gzip

    with (gzip.open(path, "rb") if gzipped(path) else Path(path).open("rb")) as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as found:
                return raw[found.start], number
    return exc.object[exc.start], None  # only in the middle of a multi-byte character across lines: no line


def not_utf8(what, path, byte, line):
    """The one-line error for a file that is not UTF-8, naming its first bad byte and that byte's line."""
    where = "" if line is None else f" on line {line}"
    return InputError(f"{what} {path} is not UTF-8: byte {byte:#04x}{where} cannot be decoded; save the file as UTF-8")
