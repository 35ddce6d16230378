"""The part every exported Python program shares: reading the user's file as the explorer read it, and putting its
events in the arrival order the prediction replayed.

Text, not code: each whole program (``spark_job``, ``bytewax_job``…) is the user's to keep, so it carries its own
copy of these functions and imports nothing of the explorer. One copy here keeps every program reading the file the
same way; ``tests/test_export_replay.py`` holds it against the explorer's own loader.
"""

from __future__ import annotations

from pathlib import Path

from explorer.export.common import ExportSource
from explorer.streams.files import file_format
from explorer.streams.times import TimeFormat


def _time_spec(column: str | None, form: TimeFormat | None) -> tuple[str | None, str, str, str]:
    """(column, kind, unit, zone) for the program's ``to_micros``; zone: where naive times are local ("" = UTC)."""
    if form is None:
        return column, "number", "us", ""
    return column, form.kind, form.unit, form.local


def source_settings(source: ExportSource) -> dict[str, object]:
    """The program's constants that say where its events are: the reader, the columns and their time formats."""
    fmt, _codec = file_format(Path(source.path or "events.csv"))
    return {
        "READER": fmt or "csv",
        "EVENT_TIME": _time_spec(source.event_time, source.event_time_format),
        "ARRIVAL_TIME": _time_spec(source.arrival_time, source.arrival_time_format),
        "KEY": source.key,
        "ID": source.id,
        "KIND": source.kind,
        "PARTITION": source.partition,
    }


def program_head(settings: dict[str, object]) -> str:
    """What every Python program starts with after its imports: its constants, then the reading code."""
    return "\n".join(f"{name} = {value!r}" for name, value in settings.items()) + "\n" + READING + "\n"


READING = '''
# --- reading the file as the explorer read it ---
import bz2
import gzip
import io
import json
from decimal import ROUND_HALF_EVEN, Decimal

PER_UNIT = {"s": Decimal(1_000_000), "ms": Decimal(1_000), "us": Decimal(1), "ns": Decimal("0.001")}


def opened(path):
    """The file as text, decompressed as it is read when its name ends in .gz, .bz2 or .zst."""
    name = str(path).lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    if name.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8")
    if name.endswith(".zst"):
        import pyarrow as pa  # Zstandard through Arrow's codec: pyarrow is in every engine's environment
        return io.TextIOWrapper(pa.input_stream(str(path), compression="zstd"), encoding="utf-8")
    return open(path, encoding="utf-8")


def read_events(path):
    """The file as a table, nested records flattened to dotted columns (``payload.after.ts``)."""
    if READER == "parquet":
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        while any(str(field.type).startswith("struct") for field in table.schema):
            table = table.flatten()
        return table.to_pandas()
    if READER == "avro":
        import fastavro
        with open(path, "rb") as f:
            return pd.json_normalize(list(fastavro.reader(f)))
    if READER == "json":
        with opened(path) as f:
            text = f.read()
        if text.lstrip().startswith("["):  # a JSON array of records, or JSON lines
            records = json.loads(text)
        else:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        return pd.json_normalize(records)
    with opened(path) as f:
        return pd.read_csv(f, dtype=str, keep_default_na=False)


def round_half_even(ns):
    """Nanoseconds to µs, half to even, as the explorer rounds."""
    q, r = np.divmod(ns, 1000)
    return q + ((r > 500) | ((r == 500) & (q % 2 == 1)))


def localized(moments, zone):
    """Naive date-times as local time in ``zone``: a time the clocks skipped is an error, a repeated one is
    taken at its first occurrence (java.time's rule, the explorer's)."""
    first = np.ones(len(moments), dtype=bool)
    return moments.dt.tz_localize(zone, ambiguous=first, nonexistent="raise").dt.tz_convert("UTC")


def to_micros(values, kind, unit, zone):
    """A time column as int64 µs since the epoch (or the stream's zero), read exactly as the explorer read it."""
    if kind == "iso":
        text = values.astype(str).str.strip()
        zoned = text.str.contains(r"\\d:\\d\\d(?::\\d\\d(?:[.,]\\d+)?)?\\s*(?:Z|[+-]\\d\\d(?::?\\d\\d)?)$", case=False)
        moments = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns, UTC]")
        if zoned.any():
            moments[zoned] = pd.to_datetime(text[zoned], format="ISO8601", utc=True)
        if (~zoned).any():
            naive = pd.to_datetime(text[~zoned], format="ISO8601")
            moments[~zoned] = localized(naive, zone) if zone else naive.dt.tz_localize("UTC")
        return round_half_even(moments.dt.tz_localize(None).to_numpy().astype("datetime64[ns]").astype(np.int64))
    if kind == "timestamp":
        if getattr(values.dtype, "tz", None) is None:
            values = localized(values, zone) if zone else values.dt.tz_localize("UTC")
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        return round_half_even(values.to_numpy().astype("datetime64[ns]").astype(np.int64))
    scale = PER_UNIT[unit]
    return np.array([int((Decimal(str(v).strip()) * scale).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
                     for v in values.tolist()], dtype=np.int64)


def events_in_arrival_order(frame):
    """The file's events as dicts (id, key, t, arrival, partition; times in µs; partition "" for one partition, or
    when PARTITION is None: a program whose watermark is global), in the order they arrive: by arrival time,
    then event time, then id. Without an arrival column the file's order is the arrival order, and an event
    arrives with the newest event time so far. Arrival times are made non-decreasing along that order. Rows of
    kind "watermark" are the explorer's scripted watermarks, not events."""
    frame = frame.reset_index(drop=True)
    n = len(frame)
    ids = frame[ID].astype(str).str.strip().to_numpy() if ID else np.array([f"e{i}" for i in range(1, n + 1)])
    if KIND:
        events = (frame[KIND].astype(str).str.strip().str.lower() != "watermark").to_numpy()
        frame, ids = frame[events].reset_index(drop=True), ids[events]
        n = len(frame)
    keys = frame[KEY].astype(str).str.strip().to_numpy() if KEY else np.full(n, "")
    parts = frame[PARTITION].astype(str).str.strip().to_numpy() if PARTITION else np.full(n, "")
    t = to_micros(frame[EVENT_TIME[0]], *EVENT_TIME[1:])
    if ARRIVAL_TIME[0]:
        arrival = to_micros(frame[ARRIVAL_TIME[0]], *ARRIVAL_TIME[1:])
        order = np.lexsort([ids.astype(str), t, arrival])
    else:
        arrival = np.maximum.accumulate(t)
        order = np.arange(n)
    arrival = np.maximum.accumulate(arrival[order])
    return [{"id": str(i), "key": str(k), "t": int(v), "arrival": int(a), "partition": str(p)}
            for i, k, v, a, p in zip(ids[order], keys[order], t[order], arrival, parts[order])]
'''
