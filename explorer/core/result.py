"""The Result: the one contract between every runner (local core, Spark) and every front end (CLI, UI).

Times are integer microseconds; ``None`` means "no watermark yet". Tables are pandas DataFrames so the
UI can plot them and tests can compare them; :meth:`Result.to_json` is the CLI's stable JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, TextIO

import numpy as np
import pandas as pd

from explorer.config import RunConfig, describe
from explorer.timeutil import MICROS, iso_instant


class Status(str, Enum):
    """What became of an event. Late means: late for at least one of its windows."""

    ON_TIME = "on_time"
    LATE_UPDATED = "late_updated"  # late, yet admitted to every window it was late for (allowed lateness)
    SIDE_OUTPUT = "side_output"  # late and refused by at least one window; kept in the side output
    DROPPED = "dropped"  # late and refused by at least one window; gone


class Reason(str, Enum):
    UPDATE = "UPDATE"  # emit on-update: a record the window took, forwarded with the window's new count at once
    # emit on-update, sessions: a session a record replaced (grew or merged away), forwarded with no result
    # (count 0, no events) for its old span, as Kafka Streams forwards a tombstone (null) before the new session
    TOMBSTONE = "TOMBSTONE"
    WATERMARK = "WATERMARK"
    IDLE_TIMEOUT = "IDLE_TIMEOUT"
    LATE_UPDATE = "LATE_UPDATE"
    END_OF_STREAM = "END_OF_STREAM"
    # Beam's early firings (--early-firings): a processing-time timer fired the window before the watermark did
    # (core/early.py); every row of a window is one of Beam's panes, its PaneInfo.index is revision − 1
    EARLY = "EARLY"


EVENT_COLUMNS = ["id", "key", "partition", "event_time", "arrival_time", "batch", "status", "watermark",
                 "effective_watermark"]
ASSIGNMENT_COLUMNS = ["event", "start", "end", "late", "admitted"]
WINDOW_COLUMNS = ["key", "start", "end", "count", "ids", "emit_batch", "emit_time", "watermark",
                  "effective_watermark", "reason", "revision", "latency_event", "latency_processing"]
WATERMARK_COLUMNS = ["batch", "time", "scope", "watermark", "effective", "at"]


# at one instant an early pane (its timer fired before the elements arriving then) comes first; EARLY never
# meets UPDATE or TOMBSTONE (early firings need emit on-close)
REASON_ORDER = {"EARLY": -3, "TOMBSTONE": -2, "UPDATE": -1, "LATE_UPDATE": 0, "WATERMARK": 1, "IDLE_TIMEOUT": 2,
                "END_OF_STREAM": 3}


def pane_timing(reason: str) -> str:
    """A row's pane timing in Beam's words (PaneInfo.Timing): an early pane is EARLY, a late element's re-firing
    LATE, a window's firing by watermark (or at the end of input, or an idle timeout) ON_TIME."""
    return PANE_TIMINGS.get(reason, "ON_TIME")


PANE_TIMINGS = {Reason.EARLY.value: "EARLY", Reason.LATE_UPDATE.value: "LATE"}  # every other reason: ON_TIME


def pane_columns(windows: pd.DataFrame) -> pd.DataFrame:
    """Each emission of the whole windows table as one of Beam's panes (PaneInfo): ``pane_index`` from 0 and
    ``pane_timing``. A session that merged is a new window to Beam (Java's ``ReduceFnRunner.onMerge`` and Python's
    ``GeneralTriggerDriver`` clear the merged-away windows' pane state), so the index counts the earlier emissions
    of the same [start, end) only: ``revision`` − 1 for every other window, 0 for a merged session's first pane.
    Rows of emit on-update or on-batch (UPDATE, TOMBSTONE), and a late element's firing of a session that merged
    past the watermark (LATE_UPDATE), are EARLY while the effective watermark at their emission is before the
    window's end, LATE after it (Beam's ``_output``: EARLY while the watermark ≤ maxTimestamp); every other
    reason as :func:`pane_timing` says."""
    reason = windows["reason"].to_numpy(dtype=object)
    timing = np.full(len(reason), "ON_TIME", dtype=object)
    for named, name in PANE_TIMINGS.items():
        timing[reason == named] = name
    by_mark = np.isin(reason, [Reason.UPDATE.value, Reason.TOMBSTONE.value, Reason.LATE_UPDATE.value])
    if by_mark.any():
        effective = windows["effective_watermark"].to_numpy(dtype="float64", na_value=np.nan)
        passed = effective >= windows["end"].to_numpy()  # (no watermark yet: NaN, not passed)
        timing[by_mark] = np.where(passed[by_mark], "LATE", "EARLY")
    return pd.DataFrame({"pane_index": _pane_index(windows), "pane_timing": timing}, index=windows.index)


def _pane_index(windows: pd.DataFrame) -> np.ndarray:
    """Each row's revision less the first revision its [start, end) emitted: a window that never changed its
    bounds starts at revision 1, a merged session at its session's next revision."""
    revision = windows["revision"].to_numpy(dtype=np.int64)
    if len(revision) == 0 or (revision == 1).all():  # (no window emitted twice: nothing to group)
        return np.asarray(revision - 1)
    first = windows.groupby(["key", "start", "end"], sort=False)["revision"].transform("min")
    return np.asarray(revision - first.to_numpy(dtype=np.int64))


def canonical_order(windows: pd.DataFrame) -> pd.DataFrame:
    """Emissions sorted by when they happened, then by window: every runner lists them the same way."""
    if windows.empty:
        return windows.reset_index(drop=True)
    order = emission_order(windows["emit_batch"].to_numpy(), windows["emit_time"].to_numpy(),
                           windows["reason"].map(REASON_ORDER).to_numpy(),
                           pd.factorize(windows["key"], sort=True)[0], windows["start"].to_numpy(),
                           windows["end"].to_numpy(), windows["revision"].to_numpy())
    return windows.iloc[order].reset_index(drop=True)


def emission_order(batch: np.ndarray, time: np.ndarray, reason_rank: np.ndarray, key_rank: np.ndarray,
                   start: np.ndarray, end: np.ndarray, revision: np.ndarray) -> np.ndarray:
    """The canonical order as positions, from plain arrays: a runner holding integer codes (the compiled
    kernel's emission records) sorts them before building any table, rather than sorting the table's text.
    Emitting on every update, a runner's records are usually in order already; checking costs a tenth of a sort.

    At one instant, windows are ordered by reason (updates, late re-emissions, then watermark firings, …); a
    window that emits more than once at that instant is ranked by its most urgent reason, so its emissions stay
    together in revision order (a window a watermark fires on one element and a late one re-fires on the next,
    at the same arrival, lists revision 1 before 2, and a discarding pane is cut in that order).

    So the rows are sorted by instant and window first, where each window's rows at an instant lie together and
    their lowest rank is read off them; then, stably, by instant and that rank. The same order as one sort on all
    seven keys with each row's rank lowered beforehand (ties left in the rows' order), without hashing every row
    to find the windows (6.3M emissions: 1.5 s, against 2.0)."""
    rank = np.asarray(reason_rank)
    if len(rank) == 0 or rank.min() == rank.max():  # one reason (every update): no rank to lower
        keys = (batch, time, rank, key_rank, start, end, revision)  # most significant first
        return np.arange(len(rank)) if _in_order(keys) else np.lexsort(keys[::-1])
    by_window = np.lexsort((revision, end, start, key_rank, time, batch))
    b, t = np.asarray(batch)[by_window], np.asarray(time)[by_window]
    new_instant = np.ones(len(b), dtype=bool)
    new_instant[1:] = (b[1:] != b[:-1]) | (t[1:] != t[:-1])
    new_window = new_instant.copy()
    for column in (key_rank, start, end):
        c = np.asarray(column)[by_window]
        new_window[1:] |= c[1:] != c[:-1]
    first = np.flatnonzero(new_window)
    lowest = np.minimum.reduceat(rank[by_window], first)
    lowered = np.repeat(lowest, np.diff(np.append(first, len(b))))
    low = int(rank.min())
    instant = np.cumsum(new_instant)
    return by_window[np.argsort(instant * (int(rank.max()) - low + 1) + (lowered - low), kind="stable")]


def _in_order(keys: tuple[np.ndarray, ...]) -> bool:
    """Each row ≤ the next, comparing key by key (a lexicographic order check, without sorting)."""
    before = np.zeros(max(len(keys[0]) - 1, 0), bool)  # the row is already known to come before the next one
    tied = ~before
    for key in keys:
        a, b = key[:-1], key[1:]
        before |= tied & (a < b)
        tied &= a == b
    return bool((before | tied).all())


@dataclass
class Stat:
    mean: float | None
    p50: float | None
    p95: float | None
    max: float | None

    @staticmethod
    def of(values: np.ndarray, unit: str = "s") -> "Stat":
        """Sorted first, so the mean's rounding does not depend on the order the rows came in."""
        if len(values) == 0:
            return Stat(None, None, None, None)
        scaled = np.sort(np.asarray(values, dtype=float)) / MICROS[unit]
        return Stat(float(scaled.mean()), float(np.percentile(scaled, 50)), float(np.percentile(scaled, 95)),
                    float(scaled.max()))


@dataclass
class Metrics:
    """Counts add up: on_time + late_updated + side_output + dropped == events."""

    events: int
    on_time: int
    late_updated: int
    side_output: int
    dropped: int
    # events a window refused while another took them (refused_when=every-window, Flink's sliding windows): not
    # counted as refused, in no side output; completeness counts the refused pairs
    partly_dropped: int
    completeness: float  # admitted (event, window) assignments / all assignments
    # the same, counting only windows emitted while the input runs: a live job never reaches the end of its input,
    # so the windows only a flush at the end emits (END_OF_STREAM, first emission) are not output it gets
    completeness_live: float
    windows_emitted: int  # first emissions (revision 1): by watermark, idle timeout, a late element (on-update: the first UPDATE)
    updates: int  # re-emissions (revision > 1): LATE_UPDATE, and on-update every UPDATE after a window's first
    end_of_stream: int  # windows still open when the input ran out and the heartbeats had nothing left to do
    latency_event: Stat  # max event time seen at emission − window end (003's measure), seconds
    latency_processing: Stat  # emit time − window end on the processing clock, seconds
    max_open_windows: int  # most windows held in state at once

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Result:
    """``events``: one row per event in arrival order. ``assignments``: one row per (event, window) pair —
    ``event`` is the event's row, ``late`` whether it was late for that window, ``admitted`` whether the
    window took it (sessions: the session it ended up in). ``windows``: one row per emission: ``count`` events
    in the window's result, ``ids`` the events the emission carries (a tuple, or from the compiled engine an
    ``EventIds`` equal to it that shares its window's array), in arrival order: all of them, or with
    discarding panes those since the window's previous emission; an UPDATE (emit on-update) carries the one
    record whose update it forwards, and ``count`` the window's count after it.
    ``watermarks``: the trace per batch (and heartbeat) and scope."""

    events: pd.DataFrame
    assignments: pd.DataFrame
    windows: pd.DataFrame
    watermarks: pd.DataFrame
    metrics: Metrics
    config: RunConfig
    stream_name: str = "stream"
    time_unit: str = "s"
    engine: str = "local"
    absolute: bool = False  # times are wall-clock instants (shown as date-times), else seconds from 0

    def side_output(self) -> pd.DataFrame:
        """Late events kept for reconciliation, as a first-class stream."""
        return self.events[self.events["status"] == Status.SIDE_OUTPUT.value]

    def windows_of(self, row: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(windows that admitted the event in ``row``, windows that refused it) — for the inspector."""
        a = self.assignments[self.assignments["event"] == row]
        took = a[a["admitted"]]
        refused = a[~a["admitted"]]
        return (sorted(zip(took["start"].tolist(), took["end"].tolist())),
                sorted(zip(refused["start"].tolist(), refused["end"].tolist())))

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--format json``, the same for every input form of the same events: every time and
        duration an integer number of µs (``units`` says from when), absolute times also as ISO-8601 UTC
        (``start_iso`` …), ``None`` for no watermark."""
        return {name: list(value) if isinstance(value, Iterator) else value for name, value in self._json_parts()}

    def write_json(self, out: TextIO) -> None:
        """:meth:`to_json`, serialised exactly as ``json.dumps`` would, one record at a time: the document for
        millions of events is never held in memory whole (it was 10 GB for 5M events)."""
        out.write("{")
        for i, (name, value) in enumerate(self._json_parts()):
            out.write(f"{', ' if i else ''}{json.dumps(name)}: ")
            if not isinstance(value, Iterator):
                out.write(json.dumps(value))
                continue
            out.write("[")
            for j, item in enumerate(value):
                out.write((", " if j else "") + json.dumps(item))
            out.write("]")
        out.write("}\n")

    def _json_parts(self) -> Iterator[tuple[str, Any]]:
        """The JSON document's members in order; the long ones as iterators of records."""
        took = self.assignments[self.assignments["admitted"]].sort_values(["event", "start", "end"])
        spans: dict[int, list[tuple[int, int]]] = {}
        for row, start, end in zip(took["event"].tolist(), took["start"].tolist(), took["end"].tolist()):
            spans.setdefault(row, []).append((start, end))
        absolute = self.absolute

        def at(record: dict[str, Any], **instants: Any) -> dict[str, Any]:
            """``record`` with each instant as µs, and for an absolute stream as ISO-8601 beside it."""
            for name, micros in instants.items():
                record[name] = _micros(micros)
                if absolute:
                    record[f"{name}_iso"] = iso_instant(record[name])
            return record

        yield "stream", self.stream_name
        yield "engine", self.engine
        yield "units", json_units(absolute)
        yield "config", describe(self.config)
        panes = pane_columns(self.windows)
        yield "windows", (
            at({"key": w.key}, start=w.start, end=w.end) | {"count": int(w.count), "ids": list(w.ids),
                                                            "emit_batch": int(w.emit_batch)}
            | at({}, emit_time=w.emit_time, watermark=w.watermark, effective_watermark=w.effective_watermark)
            | {"reason": w.reason, "revision": int(w.revision), "pane_index": int(index), "pane_timing": timing,
               "latency_event": _micros(w.latency_event), "latency_processing": _micros(w.latency_processing)}
            for w, index, timing in zip(_rows(self.windows), panes["pane_index"].tolist(),
                                        panes["pane_timing"].tolist())
        )
        yield "events", (
            {"id": e.id, "key": e.key, "status": e.status, "batch": int(e.batch),
             "windows": [[_micros(s), _micros(t)] for s, t in spans.get(row, [])]}
            | ({"windows_iso": [[iso_instant(s), iso_instant(t)] for s, t in spans.get(row, [])]} if absolute else {})
            | at({}, watermark=e.watermark)
            for row, e in enumerate(_rows(self.events[["id", "key", "status", "batch", "watermark"]]))
        )
        yield "watermarks", (
            at({"batch": int(r.batch)}, time=r.time) | {"scope": r.scope}
            | at({}, watermark=r.watermark, effective=r.effective) | {"at": r.at}
            for r in _rows(self.watermarks)
        )
        yield "metrics", self.metrics.to_dict()


def json_units(absolute: bool) -> dict[str, str]:
    """What the JSON's numbers count, said in the document itself."""
    return {
        "times": ("integer µs since the Unix epoch (1970-01-01T00:00:00Z); each *_iso field is the same instant "
                  "in ISO-8601, UTC") if absolute else
                 "integer µs from the stream's zero (its times are not dates, so there are no *_iso fields)",
        "durations": "integer µs: config's delay, bound, window and every other duration; windows' latency_event "
                     "and latency_processing",
        "metrics": "latency_event and latency_processing in seconds; completeness a fraction of 1",
    }


def _rows(table: pd.DataFrame) -> Iterator[Any]:
    """A table's rows as namedtuples of its columns (pandas-stubs types them as plain tuples, so ``row.count``
    would be ``tuple.count``)."""
    return iter(table.itertuples(index=False))


def _micros(micros: Any) -> int | None:
    if micros is None or micros is pd.NA or (isinstance(micros, float) and np.isnan(micros)):
        return None
    return int(micros)


def differences(a: Result, b: Result) -> list[str]:
    """Where two Results differ, in words (empty when they agree table for table)."""
    out = []
    for table in ("events", "assignments", "windows", "watermarks"):
        left, right = getattr(a, table), getattr(b, table)
        if len(left) != len(right):
            out.append(f"{table}: {len(left)} rows vs {len(right)}")
            continue
        for column in left.columns:
            ours, theirs = left[column].astype(object).to_numpy(), right[column].astype(object).to_numpy()
            same = np.array([_same(x, y) for x, y in zip(ours, theirs)], dtype=bool)
            if not same.all():
                row = int(np.flatnonzero(~same)[0])
                out.append(f"{table}.{column}: first at row {row} ({ours[row]!r} vs {theirs[row]!r})")
    if a.metrics != b.metrics:
        out.append("metrics differ")
    return out


def _same(x: Any, y: Any) -> bool:
    """Equal values, or both missing (pd.NA, None and NaN alike)."""
    x_missing = not isinstance(x, Sequence) and pd.isna(x)
    y_missing = not isinstance(y, Sequence) and pd.isna(y)
    if x_missing or y_missing:
        return x_missing and y_missing
    return bool(x == y)
