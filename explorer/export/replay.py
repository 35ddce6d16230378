"""The part every exported Python program shares: reading the user's file as the explorer read it, and putting its
events in the arrival order the prediction replayed.

Text, not code: each whole program (``spark_job``, ``bytewax_job``…) is the user's to keep, so it carries its own
copy of these functions and imports nothing of the explorer. One copy here keeps every program reading the file the
same way; ``tests/test_export_replay.py`` holds it against the explorer's own loader.
"""

from __future__ import annotations

from explorer.export.common import ExportSource
from explorer.streams.files import SUFFIXES
from explorer.streams.times import TimeFormat


def _time_spec(column: str | None, form: TimeFormat | None) -> tuple[str | None, str, str]:
    """(column, kind, unit) for the program's ``to_micros``."""
    if form is None:
        return column, "number", "us"
    return column, form.kind, form.unit


def source_settings(source: ExportSource) -> dict[str, object]:
    """The program's constants that say where its events are: the reader, the columns and their time formats."""
    return {
        "READER": SUFFIXES.get("." + (source.path or "events.csv").rsplit(".", 1)[-1].lower(), "csv"),
        "EVENT_TIME": _time_spec(source.event_time, source.event_time_format),
        "ARRIVAL_TIME": _time_spec(source.arrival_time, source.arrival_time_format),
        "KEY": source.key,
        "ID": source.id,
    }


def settings_block(settings: dict[str, object]) -> str:
    return "\n".join(f"{name} = {value!r}" for name, value in settings.items())


READING = '''
MICROS_PER = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 0.001}


def read_events(path):
    if READER == "parquet":
        return pd.read_parquet(path)
    if READER == "json":
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def to_micros(values, kind, unit):
    """A time column as int64 µs, read as the explorer read it."""
    if kind in ("iso", "timestamp"):
        if kind == "iso":
            values = pd.to_datetime(values.astype(str).str.strip(), format="ISO8601", utc=True)
        elif getattr(values.dtype, "tz", None) is not None:
            values = values.dt.tz_convert("UTC")
        if getattr(values.dtype, "tz", None) is not None:
            values = values.dt.tz_localize(None)
        return values.to_numpy().astype("datetime64[us]").astype(np.int64)
    numbers = pd.to_numeric(values).to_numpy(dtype=float)
    return np.round(numbers * MICROS_PER[unit]).astype(np.int64)


def events_in_arrival_order(frame):
    """The file's events as dicts (id, key, t, arrival; times in µs), in the order they arrive: by arrival time,
    then event time, then id. Without an arrival column the file's order is the arrival order, and an event
    arrives with the newest event time so far. Arrival times are made non-decreasing along that order."""
    n = len(frame)
    ids = frame[ID].astype(str).str.strip().to_numpy() if ID else np.array([f"e{i}" for i in range(1, n + 1)])
    keys = frame[KEY].astype(str).str.strip().to_numpy() if KEY else np.full(n, "")
    t = to_micros(frame[EVENT_TIME[0]], *EVENT_TIME[1:])
    if ARRIVAL_TIME[0]:
        arrival = to_micros(frame[ARRIVAL_TIME[0]], *ARRIVAL_TIME[1:])
        order = np.lexsort([ids.astype(str), t, arrival])
    else:
        arrival = np.maximum.accumulate(t)
        order = np.arange(n)
    arrival = np.maximum.accumulate(arrival[order])
    return [{"id": str(i), "key": str(k), "t": int(v), "arrival": int(a)}
            for i, k, v, a in zip(ids[order], keys[order], t[order], arrival)]
'''
