"""Event files as tables of text: which files (one, several, a directory), whether each is one we can read
(its type, size, encoding, the memory it would take), and the table each holds, read as written.

A module of its own because a file's bytes are a different concern from their meaning: here every problem is
about the file (not found, binary, UTF-16, a broken line) and names the file; ``loading`` then reads the
table's columns as events, and its messages name columns and rows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Sequence

import pandas as pd

from explorer.budget import BYTES_PER_LOADED_ROW, BYTES_PER_TEXT_BYTE, check_load, text_bytes
from explorer.errors import InputError

MAX_FILE_BYTES = 2 * 1024**3


SUFFIXES = {".csv": "csv", ".jsonl": "json", ".ndjson": "json", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


def expand_paths(path: str | Path | Sequence[str | Path]) -> list[Path]:
    if isinstance(path, (str, Path)):
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix.lower() in SUFFIXES)
            if not found:
                raise InputError(f"{path}: no .csv, .jsonl or .parquet files in this directory")
            return found
        return [path]
    if not path:
        raise InputError("no events files given")
    return [Path(p) for p in path]


def read_checked(path: Path, max_bytes: int) -> pd.DataFrame:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as exc:  # a symlink loop, a path through a file, no permission
        raise InputError(f"{path}: cannot be opened ({exc.strerror})") from None
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown file type {path.suffix!r}; use .csv, .jsonl or .parquet")
    if path.is_dir():
        raise InputError(f"{path}: is a directory inside the input; give its files or the directory itself")
    size = stat.st_size
    if size == 0:
        raise InputError(f"{path}: the file is empty (no events)")
    if size > max_bytes:
        raise InputError(f"{path}: the file is {size / 1024**2:.0f} MiB, over the {max_bytes / 1024**2:.0f} MiB limit; "
                         "sample it, or use the Spark sweep for large traces")
    if fmt != "parquet":
        _check_text(path, fmt)
        check_load(path, size * BYTES_PER_TEXT_BYTE, text_bytes(size))
    else:
        rows = _parquet_rows(path)
        check_load(path, rows * BYTES_PER_LOADED_ROW, f"{rows:,} rows")
    return _read(path, fmt)


def _parquet_rows(path: Path) -> int:
    """The row count from the footer, without reading the data (0 if the footer is unreadable: _read says so)."""
    import pyarrow.parquet as pq  # here, not at import: the CLI starts faster for CSV

    try:
        rows: int = pq.ParquetFile(path).metadata.num_rows
        return rows
    except Exception:  # a corrupt file; _read reports it in words
        return 0


_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


def _check_text(path: Path, fmt: str) -> None:
    """A .csv or .jsonl must be UTF-8 text: say so, rather than parse binary into "a header but no rows"."""
    with path.open("rb") as handle:
        head = handle.read(64 * 1024)
    for bom, encoding in _BOMS.items():
        if head.startswith(bom):
            raise InputError(f"{path}: the file is {encoding} text; save it as UTF-8")
    problem = None
    nul = head.find(b"\x00")
    if nul >= 0:
        problem = f"a NUL byte at offset {nul}"
    else:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 3:  # not merely a character cut at the end of the sample
                problem = f"byte 0x{head[exc.start]:02x} at offset {exc.start} is not UTF-8"
    if problem:
        raise InputError(f"{path}: not a text file ({problem}); a .{path.suffix.lower().lstrip('.')} must be "
                         f"UTF-8 {'CSV' if fmt == 'csv' else 'JSON lines'}")


def _read(path: Path, fmt: str) -> pd.DataFrame:
    try:
        if fmt == "csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        if fmt == "parquet":
            return pd.read_parquet(path)
        return _read_json_lines(path)
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file has no header and no rows") from None
    except pd.errors.ParserError as exc:
        fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if fields:  # pandas counts lines of the file; rows are counted over the data, after the header
            want, line, saw = map(int, fields.groups())
            raise InputError(f"{path}: row {line - 1} (line {line}) has {saw} fields; the header has {want}") from None
        raise InputError(f"{path}: cannot be read as CSV ({_one_line(exc)})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} is not UTF-8)") from None
    except Exception as exc:  # parser libraries raise many types; the user needs one sentence
        raise InputError(f"{path}: cannot be read as {fmt.upper()} ({exc.__class__.__name__}: {_one_line(exc)})") from None


def _one_line(exc: Exception) -> str:
    """A library's message, whitespace (newlines included) folded and cut to 200 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:199] + "…"


def _read_json_lines(path: Path) -> pd.DataFrame:
    rows = []
    with path.open() as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: line {line_no} is not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}: line {line_no} is not a JSON object")
            rows.append(row)
    return pd.DataFrame(rows)
