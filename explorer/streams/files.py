"""Event files as tables of text: which files (one, several, a directory), whether each is one we can read
(its type, size, encoding, the memory it would take), and the table each holds, read as written.

A module of its own because a file's bytes are a different concern from their meaning: here every problem is
about the file (not found, binary, UTF-16, a broken line) and names the file; ``loading`` then reads the
table's columns as events, and its messages name columns and rows.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import os
import re
import stat as stat_module
import zlib
from pathlib import Path
from typing import IO, Callable, Iterator, Sequence, cast

import pandas as pd

from explorer.budget import (BYTES_PER_ARROW_ROW, BYTES_PER_CSV_BYTE, BYTES_PER_LOADED_ROW, BYTES_PER_TEXT_BYTE,
                             check_load, text_bytes)
from explorer.errors import InputError
from explorer.streams.avro import avro_rows, read_avro
from explorer.streams.json_records import records

MAX_FILE_BYTES = 2 * 1024**3


SUFFIXES = {".csv": "csv", ".jsonl": "json", ".ndjson": "json", ".json": "json", ".parquet": "parquet", ".pq": "parquet",
            ".avro": "avro"}
BINARY = ("parquet", "avro")  # formats with their own encoding and compression (never a codec around them)
# the compressions read around a text format, streaming (events.csv.zst), by suffix: Arrow's codec name, and a name
# for messages; zstd through pyarrow's codec (a dependency already), bz2 and gzip through the standard library
CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}
CODEC_NAMES = {"gzip": "gzip", "bz2": "bzip2", "zstd": "Zstandard"}
COMPRESSED = (".xz", ".zip", ".lz4", ".snappy", ".br", ".zstd", ".tgz")  # compressions not read: refused by name
READ_COMPRESSED = ".gz, .bz2 or .zst"
CHUNK = 1024**2


def file_format(path: Path) -> tuple[str | None, str | None]:
    """The file's format by its name (csv, json, parquet, avro or None) and its compression (gzip, bz2, zstd or
    None: ``events.csv.gz``, ``events.jsonl.zst``; text formats only)."""
    suffixes = [s.lower() for s in path.suffixes]
    codec = CODECS.get(suffixes[-1]) if suffixes else None
    if codec is not None and len(suffixes) >= 2:
        fmt = SUFFIXES.get(suffixes[-2])
        return (fmt, codec) if fmt in ("csv", "json") else (None, codec)
    return SUFFIXES.get(path.suffix.lower()), None


def expand_paths(path: str | Path | Sequence[str | Path]) -> list[Path]:
    if isinstance(path, (str, Path)):
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if file_format(p)[0] is not None)
            unread = sorted(p for p in path.iterdir() if p.suffix.lower() in COMPRESSED + tuple(CODECS)
                            and file_format(p)[0] is None and len(p.suffixes) >= 2
                            and p.suffixes[-2].lower() in SUFFIXES)
            if unread:  # a part of the stream we cannot read is never skipped in silence
                raise InputError(f"{unread[0]}: a compressed {unread[0].suffixes[-2]} part this reader cannot "
                                 f"open (only .csv and .jsonl parts are read compressed, as {READ_COMPRESSED}); "
                                 "decompress it")
            if not found:
                raise InputError(f"{path}: no .csv, .jsonl, .parquet or .avro files (nor .csv or .jsonl as "
                                 f"{READ_COMPRESSED}) in this directory")
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
    fmt, codec = file_format(path)
    if fmt is None:
        compressed = codec or path.suffix.lower() in COMPRESSED
        raise InputError(f"{path}: unknown file type {''.join(path.suffixes[-2:]) if compressed else path.suffix!r}; "
                         f"use .csv, .jsonl, .parquet or .avro (or .csv, .jsonl compressed as {READ_COMPRESSED})")
    if path.is_dir():
        raise InputError(f"{path}: is a directory inside the input; give its files or the directory itself")
    if not stat_module.S_ISREG(stat.st_mode):  # a device (/dev/urandom), a pipe, a socket: no size, maybe no end
        raise InputError(f"{path}: not a regular file (a device, pipe or socket); save the events to a file")
    size = stat.st_size
    if size == 0:
        raise InputError(f"{path}: the file is empty (no events)")
    if size > max_bytes:
        raise InputError(f"{path}: the file is {size / 1024**2:.0f} MiB, over the {max_bytes / 1024**2:.0f} MiB limit; "
                         "sample it, or use the Spark sweep for large traces")
    spaced = False
    if fmt not in BINARY:
        size, spaced = _check_text(path, fmt, codec, max_bytes)
        per_byte = BYTES_PER_CSV_BYTE if fmt == "csv" and not spaced else BYTES_PER_TEXT_BYTE  # Arrow, or pandas
        check_load(path, size * per_byte, text_bytes(size))
    else:
        rows = _parquet_rows(path) if fmt == "parquet" else _avro_rows(path)
        check_load(path, rows * (BYTES_PER_ARROW_ROW if fmt == "parquet" else BYTES_PER_LOADED_ROW), f"{rows:,} rows")
    if fmt == "csv" and not spaced:
        frame = read_csv_columns(path, codec)
        if frame is not None:
            return frame
    return _read(path, fmt, codec)


def _parquet_rows(path: Path) -> int:
    """The row count from the footer, without reading the data (0 if the footer is unreadable: _read says so)."""
    import pyarrow.parquet as pq  # here, not at import: the CLI starts faster for CSV

    try:
        rows: int = pq.ParquetFile(path).metadata.num_rows
        return rows
    except Exception:  # a corrupt file; _read reports it in words
        return 0


def _avro_rows(path: Path) -> int:
    """The record count the blocks declare, before any record is decoded."""
    with path.open("rb") as handle:
        return avro_rows(handle, str(path))


_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


def _open(path: Path, codec: str | None) -> IO[bytes]:
    """The file's bytes, decompressed as they are read (never the whole file at once)."""
    if codec == "gzip":
        return cast(IO[bytes], gzip.open(path, "rb"))
    if codec == "bz2":
        return cast(IO[bytes], bz2.open(path, "rb"))
    if codec == "zstd":
        import pyarrow as pa  # here, not at import: the CLI starts faster for CSV

        if not pa.Codec.is_available("zstd"):  # a pyarrow built without it (the wheels on PyPI all have it)
            raise InputError(f"{path}: this pyarrow has no Zstandard codec; decompress the file (zstd -d)")
        return cast(IO[bytes], pa.input_stream(str(path), compression="zstd"))
    return path.open("rb")


def open_text(path: Path, codec: str | None, newline: str | None = None) -> IO[str]:
    """The file as UTF-8 text, decompressed as it is read."""
    if codec is None:
        return path.open(encoding="utf-8", newline=newline)
    return io.TextIOWrapper(_open(path, codec), encoding="utf-8", newline=newline)


def _chunks(path: Path, codec: str | None) -> Iterator[bytes]:
    """The file's (decompressed) bytes, a MiB at a time."""
    try:
        with _open(path, codec) as handle:
            while chunk := handle.read(CHUNK):
                yield chunk
    except (OSError, EOFError, ValueError, zlib.error) as exc:  # "not a gzipped file", a cut-off stream (Arrow's
        # codecs raise OSError, or ArrowInvalid, a ValueError)
        raise InputError(f"{path}: cannot be read as {CODEC_NAMES.get(codec or '', 'a file')} "
                         f"({exc.__class__.__name__}: {_one_line(exc)})") from None


def _check_text(path: Path, fmt: str, codec: str | None = None, max_bytes: int = MAX_FILE_BYTES) -> tuple[int, bool]:
    """A .csv or .jsonl must be UTF-8 text: say so, rather than parse binary into "a header but no rows". A NUL
    byte anywhere is refused (a parser would cut its cell there), read a MiB at a time. Returns the size of the
    text (decompressed), which must stay under ``max_bytes`` too, and whether a space follows a comma somewhere
    (a CSV written by hand: pandas, which skips such spaces, reads it)."""
    kind = "CSV" if fmt == "csv" else "JSON lines"
    suffix = "".join(path.suffixes[-2:]).lower() if codec else path.suffix.lower()
    size = 0
    spaced, last = False, b""
    for chunk in _chunks(path, codec):
        spaced = spaced or b", " in last + chunk[:1] or b", " in chunk
        last = chunk[-1:]
        if size == 0:
            for bom, encoding in _BOMS.items():
                if chunk.startswith(bom):
                    raise InputError(f"{path}: the file is {encoding} text; save it as UTF-8")
            head = chunk[:64 * 1024]
            try:
                head.decode("utf-8")
            except UnicodeDecodeError as exc:
                if exc.start < len(head) - 3 and b"\x00" not in head[:exc.start]:  # not a character cut at the end
                    raise InputError(f"{path}: not a text file (byte 0x{head[exc.start]:02x} at offset {exc.start} is "
                                     f"not UTF-8); a {suffix} must be UTF-8 {kind}") from None
        nul = chunk.find(b"\x00")
        if nul >= 0:
            line = _lines_before(path, codec, size + nul) + 1
            raise InputError(f"{path}: not a text file (a NUL byte at offset {size + nul}, line {line}); a {suffix} "
                             f"must be UTF-8 {kind}")
        size += len(chunk)
        if size > max_bytes:
            raise InputError(f"{path}: the file holds over {max_bytes / 1024**2:.0f} MiB of text, over the limit; "
                             "sample it, or use the Spark sweep for large traces")
    if size == 0:
        raise InputError(f"{path}: the file is empty (no events)")
    return size, spaced


def _lines_before(path: Path, codec: str | None, offset: int) -> int:
    """How many line ends the text has before byte ``offset``: counted only for a message, not on every read."""
    count = seen = 0
    for chunk in _chunks(path, codec):
        count += chunk.count(b"\n", 0, max(offset - seen, 0))
        seen += len(chunk)
        if seen >= offset:
            break
    return count


def _read(path: Path, fmt: str, codec: str | None = None) -> pd.DataFrame:
    try:
        if fmt == "csv":
            if codec is None:
                frame = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
            else:  # decompressed as pandas reads it (pandas' own zstd needs a package of its own)
                with _open(path, codec) as handle:
                    frame = pd.read_csv(handle, dtype=str, keep_default_na=False, skipinitialspace=True)
            check_width(frame, str(path), lambda: open_text(path, codec, newline=""))
            return frame
        if fmt == "parquet":
            return read_parquet(path)
        if fmt == "avro":
            with path.open("rb") as handle:
                return read_avro(handle, str(path))
        return _read_json(path, codec)
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


def read_parquet(source: Path | IO[bytes]) -> pd.DataFrame:
    """A Parquet file as a table, its struct columns flattened to dotted columns (``payload.after.ts``) with their
    own types: pandas would turn a struct into dicts, its timestamps into bare integers. A flattened name the
    file also has as a top-level column is dropped, so the literal column wins, as for JSON."""
    import pyarrow as pa  # here, not at import: the CLI starts faster for CSV
    import pyarrow.parquet as pq
    import pyarrow.types as types

    arrow_memory()
    table = pq.read_table(source, pre_buffer=False)  # (its coalesced reads left ~80 MB resident at 10M rows)
    if not any(types.is_struct(field.type) for field in table.schema):
        plain: pd.DataFrame = table.to_pandas(types_mapper=arrow_strings)
        return plain
    literal = set(table.column_names)
    names, arrays = [], []
    pending = list(zip(table.column_names, table.columns))
    while pending:
        name, array = pending.pop(0)
        if types.is_struct(array.type):
            children = [(f"{name}.{array.type.field(i).name}", child) for i, child in enumerate(array.flatten())]
            pending[:0] = [(n, c) for n, c in children if n not in literal]
        else:
            names.append(name)
            arrays.append(array)
    flat: pd.DataFrame = pa.table(arrays, names=names).to_pandas(types_mapper=arrow_strings)
    return flat


def arrow_memory() -> None:
    """Arrow's memory from jemalloc, which gives freed memory back to the system at once (decay 0), where
    pyarrow's default (mimalloc) keeps it: a file's table is let go column by column as it is read, so ten
    million rows then peak about 0.5 GB lower, with a second less spent paging. Not where
    ARROW_DEFAULT_MEMORY_POOL names a pool, or where this pyarrow has no jemalloc."""
    import pyarrow as pa

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") or pa.default_memory_pool().backend_name != "mimalloc":
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:  # a build without jemalloc (Windows wheels)
        pass


def arrow_strings(kind: object) -> pd.ArrowDtype | None:
    """Text columns stay Arrow strings in the table (``columnar`` reads them whole; a Python string per cell
    would cost ~60 bytes and a hash each); other types convert as pandas converts them."""
    import pyarrow.types as types

    return pd.ArrowDtype(kind) if types.is_string(kind) or types.is_large_string(kind) else None


def read_csv_columns(path: Path, codec: str | None) -> pd.DataFrame | None:
    """A CSV read by Arrow, every column as strings (as ``pd.read_csv(dtype=str, keep_default_na=False)`` reads
    them, an empty cell as ""), in a fraction of pandas' time and memory. None when Arrow cannot read it, or its
    header is one pandas renames (a duplicate or empty name): ``_read`` then reads it with pandas, whose messages
    name the row that is wrong."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        with open_text(path, codec, newline="") as handle:
            header = next(csv.reader(handle), [])
    except (UnicodeDecodeError, csv.Error, OSError, EOFError, ValueError, zlib.error):
        return None
    width = len(header)
    arrow_memory()
    try:
        table = pcsv.read_csv(
            pa.input_stream(str(path), compression=codec),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pcsv.ParseOptions(newlines_in_values=True),
            convert_options=pcsv.ConvertOptions(column_types={f"f{i}": pa.string() for i in range(width)},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowException, OSError):
        return None
    if table.num_rows == 0 or table.num_columns != width:
        return None
    names = [str(value) for value in table.slice(0, 1).to_pylist()[0].values()]
    if len(set(names)) != len(names) or "" in names:
        return None
    frame: pd.DataFrame = table.slice(1).rename_columns(names).to_pandas(types_mapper=arrow_strings)
    return frame


def check_width(frame: pd.DataFrame, where: str, text: Callable[[], IO[str]]) -> None:
    """A CSV read by pandas has every data row as wide as its header, or is refused naming the row: one field
    more on every row (a delimiter at the end of each) makes pandas take the first column as the index and shift
    the rest; one field fewer is filled with blanks. ``text`` opens the CSV as text, to find a short row (only
    looked for when the last column has a blank, as a short row leaves)."""
    width = len(frame.columns)
    if not isinstance(frame.index, pd.RangeIndex):
        raise InputError(f"{where}: row 1 (line 2) has {width + 1} fields; the header has {width} (a delimiter at "
                         "the end of every row?)")
    if width < 2 or not (frame.iloc[:, -1] == "").any():
        return
    with text() as handle:
        reader = csv.reader(handle, skipinitialspace=True)
        next(reader, None)  # the header
        row = 0
        for fields in reader:
            if not fields:  # a blank line: pandas skips it, and it is no row
                continue
            row += 1
            if len(fields) < width:
                raise InputError(f"{where}: row {row} (line {reader.line_num}) has {len(fields)} field"
                                 f"{'s' if len(fields) != 1 else ''}; the header has {width}")


def _one_line(exc: Exception) -> str:
    """A library's message, whitespace (newlines included) folded and cut to 200 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:199] + "…"


def _read_json(path: Path, codec: str | None = None) -> pd.DataFrame:
    """JSON lines or a JSON array of objects (``json_records``), as a table, decompressed as it is read."""
    return pd.DataFrame(list(records(lambda: open_text(path, codec), str(path))))
