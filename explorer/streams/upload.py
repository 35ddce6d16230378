"""A file handed over as bytes (the explorer's upload button): bounded before it is parsed, read as data only,
and its columns matched to ours by the names exports use.

The explorer holds the whole upload in kernel memory, so the bounds come before parsing: the bytes, and for
Parquet (whose columns can expand 1,000-fold when decompressed) the row count and decompressed size its footer
declares; then the memory the parsed table will take (``budget.check_load``), against what the machine has.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from explorer.budget import BYTES_PER_LOADED_ROW, BYTES_PER_TEXT_BYTE, check_load, text_bytes
from explorer.errors import InputError
from explorer.streams.avro import avro_rows, read_avro
from explorer.streams.files import SUFFIXES, check_width, read_parquet
from explorer.streams.json_records import records
from explorer.streams.mapping import field_paths

MAX_UPLOAD_BYTES = 200 * 1024**2
MAX_UPLOAD_ROWS = 10_000_000  # the largest trace the product is built for
MAX_PARQUET_DECODED_BYTES = 4 * 1024**3

# Our column and the names exports commonly give it, best first (a Kafka export: ts, ingest_ts, device_id).
COLUMN_NAMES = {
    "event_time": ("event_time", "ts", "event_ts", "eventtime", "timestamp", "time"),
    "arrival_time": ("arrival_time", "ingest_ts", "ingestion_time", "arrival", "processing_time", "kafka_ts"),
    "key": ("key", "device_id", "device", "user_id", "user", "sensor_id"),
    "id": ("id", "event_id", "uuid"),
    "batch": ("batch",),
    "partition": ("partition",),
    "offset": ("offset", "kafka_offset"),
}


@dataclass(frozen=True)
class Upload:
    """An uploaded table, not yet a Stream: the user still maps its columns and, if need be, time units."""

    name: str
    frame: pd.DataFrame

    @property
    def columns(self) -> list[str]:
        """What a column box offers: the file's columns, nested records' fields as dotted paths (``payload.ts``)."""
        return field_paths(self.frame)

    def guess_mapping(self) -> dict[str, str]:
        """Our column → the file's, for every one of ours whose usual name the file has (case-insensitive): a
        column of that name, or else the first nested field of that name (``ts`` finds ``payload.ts``)."""
        by_lower: dict[str, str] = {}
        for column in self.columns:  # top-level names first, then the last part of a dotted path
            by_lower.setdefault(column.lower(), column)
        for column in self.columns:
            by_lower.setdefault(column.rsplit(".", 1)[-1].lower(), column)
        mapping: dict[str, str] = {}
        for ours, names in COLUMN_NAMES.items():
            found = next((by_lower[n] for n in names if n in by_lower and by_lower[n] not in mapping.values()), None)
            if found is not None:
                mapping[ours] = found
        return mapping


def read_upload(name: str, content: bytes) -> Upload:
    """Read uploaded bytes as CSV, JSON (lines or an array), Parquet or Avro (never pickle or eval), after checking their
    size; JSON as a file on disk is read, so an upload and ``load_events`` see the same table."""
    if not content:
        raise InputError(f"{name}: the file is empty (no events)")
    if len(content) > MAX_UPLOAD_BYTES:
        raise InputError(f"{name}: {len(content) / 1024**2:.0f} MiB is over the {MAX_UPLOAD_BYTES // 1024**2} MiB "
                         "upload limit; open it from disk instead: explore('path/to/file')")
    suffix = Path(name).suffix.lower()
    kind = SUFFIXES.get(suffix)
    if kind is None:
        raise InputError(f"{name}: unknown file type {suffix!r}; use .csv, .jsonl, .parquet or .avro")
    if kind in ("parquet", "avro"):
        rows = _check_parquet_footer(name, content) if kind == "parquet" else avro_rows(io.BytesIO(content), name)
        if rows > MAX_UPLOAD_ROWS:
            raise InputError(f"{name}: {rows:,} rows, over the {MAX_UPLOAD_ROWS:,}-row upload limit; sample it first")
        check_load(name, rows * BYTES_PER_LOADED_ROW, f"{rows:,} rows")
    elif b"\x00" in content:  # a parser would cut its cell there
        nul = content.index(b"\x00")
        line = content.count(b"\n", 0, nul) + 1
        raise InputError(f"{name}: not a text file (a NUL byte at offset {nul}, line {line})")
    elif content.count(b"\n") > MAX_UPLOAD_ROWS:
        raise InputError(f"{name}: over {MAX_UPLOAD_ROWS:,} rows; sample it first")
    else:
        check_load(name, len(content) * BYTES_PER_TEXT_BYTE, text_bytes(len(content)))
    try:
        if kind == "csv":
            frame = pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False, skipinitialspace=True)
            check_width(frame, name, lambda: io.StringIO(content.decode("utf-8"), newline=""))
        elif kind == "json":
            frame = pd.DataFrame(list(records(lambda: io.StringIO(content.decode("utf-8")), name)))
        elif kind == "avro":
            frame = read_avro(io.BytesIO(content), name)
        else:
            frame = read_parquet(io.BytesIO(content))
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError(f"{name}: the file has no header and no rows") from None
    except Exception as exc:  # the parsers raise many types; the user needs one sentence
        reason = " ".join(str(exc).split())[:160]
        raise InputError(f"{name}: cannot be read as {kind.upper()} ({exc.__class__.__name__}: {reason})") from None
    if len(frame) == 0:
        raise InputError(f"{name}: the file has a header but no rows")
    return Upload(name, frame)


def _check_parquet_footer(name: str, content: bytes) -> int:
    """The row count the footer declares, after refusing what is over the upload limits."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(io.BytesIO(content)).metadata
    except Exception as exc:
        reason = " ".join(str(exc).split())[:160]
        raise InputError(f"{name}: cannot be read as PARQUET ({exc.__class__.__name__}: {reason})") from None
    decoded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if meta.num_rows > MAX_UPLOAD_ROWS:
        raise InputError(f"{name}: {meta.num_rows:,} rows, over the {MAX_UPLOAD_ROWS:,}-row upload limit; sample it first")
    if decoded > MAX_PARQUET_DECODED_BYTES:
        raise InputError(f"{name}: decompresses to {decoded / 1024**3:.1f} GiB, over the "
                         f"{MAX_PARQUET_DECODED_BYTES // 1024**3} GiB upload limit; drop columns or sample it first")
    rows: int = meta.num_rows
    return rows
