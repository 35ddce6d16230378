"""Plot-ready arrays from a Result: no widgets here, so the in-kernel tests can check them directly.

The two-clocks figure: x = arrival (processing) time, y = event time. Each trace is created once (``clocks.py``)
and only its arrays change afterwards; these functions compute those arrays, and the delay histogram's. How the
arrays travel to the page is ``plotly_messages.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from explorer.config import RunConfig
from explorer.core import Result
from explorer.streams import Stream, batches_for
from explorer.timeutil import MICROS, format_instant, human_duration
from explorer.ui.words import duration, plural

STATUSES = ("on_time", "late_updated", "side_output", "dropped")
STATUS_LABELS = {"on_time": "on time", "late_updated": "late, updated", "side_output": "side output",
                 "dropped": "dropped"}
STATUS_COLORS = {"on_time": "#4C78A8", "late_updated": "#F58518", "side_output": "#B279A2", "dropped": "#E45756"}
REASON_SYMBOLS = {"EARLY": "diamond-open", "WATERMARK": "diamond", "IDLE_TIMEOUT": "square", "LATE_UPDATE": "star",
                  "END_OF_STREAM": "x", "UPDATE": "triangle-up", "TOMBSTONE": "circle-x-open"}
REASON_LABELS = {"EARLY": "emitted early (a trigger's timer)", "WATERMARK": "emitted: watermark",
                 "IDLE_TIMEOUT": "emitted: idle timeout", "LATE_UPDATE": "emitted by a late event",
                 "END_OF_STREAM": "still open at end", "UPDATE": "emitted: update (a revision)",
                 "TOMBSTONE": "forwarded: tombstone (session replaced)"}
REASON_COLORS = {"EARLY": "#8E6AC8", "WATERMARK": "#222", "IDLE_TIMEOUT": "#54A24B", "LATE_UPDATE": "#F58518",
                 "END_OF_STREAM": "#999", "UPDATE": "#72B7B2", "TOMBSTONE": "#9D755D"}
# the many emissions a sample may thin (early panes come every few seconds per window); the others are the story
ROUTINE_REASONS = ("EARLY", "WATERMARK", "UPDATE", "TOMBSTONE")
POINT_BUDGET = 40_000
LINE_BUDGET = 1_500  # points per watermark line; a monotone step line keeps its shape
MARKER_BUDGET = 4_000  # emission markers (and window boxes) drawn
# While a control moves, draw at most this many events (every late one first, and the figure says so); the
# full budget follows once the controls rest. In headless Chromium, without a GPU, redrawing 20k WebGL
# points takes most of a slider step.
INTERACTIVE_BUDGET = 5_000
INTERACTIVE_WINDOWS = 250  # and at most this many emission markers and window outlines (two_clocks)
ALL_KEYS = "(all keys)"
Line = tuple[np.ndarray, np.ndarray]  # x and y of a line


def plot_time(micros: Any, absolute: bool) -> np.ndarray:
    """µs → the figures' coordinate: milliseconds since 1970 on Plotly's date axes for wall-clock streams,
    seconds from 0 otherwise."""
    return np.asarray(micros, dtype=float) / (1_000 if absolute else MICROS["s"])


def seconds(micros: Any) -> np.ndarray:
    """Durations (delays, latencies) in seconds."""
    return np.asarray(micros, dtype=float) / MICROS["s"]


@dataclass
class Points:
    x: np.ndarray
    y: np.ndarray
    rows: np.ndarray  # event rows (for clicks → inspector)


@dataclass
class Markers(Points):
    """Emission markers of one reason; ``rows`` are rows of ``Result.windows``."""

    text: list[str] | None  # hover text, one per marker; None in a light frame


NOTE_SEP = "; "  # between the parts of a frame's note (what it leaves out): the title breaks its lines there


@dataclass
class TwoClocks:
    """Everything the two-clocks figure draws, for one Result, key filter and batch limit."""

    events: dict[str, Points]  # the shown events of each status: one WebGL trace per status, one colour each
    shown: int
    total: int
    watermark: tuple[np.ndarray, np.ndarray]
    effective: tuple[np.ndarray, np.ndarray]
    watermark_owners: np.ndarray  # per point of both lines, whose watermark it is ("key a", "global"; "" at gaps)
    bands: tuple[np.ndarray, np.ndarray]
    emissions: dict[str, Markers]  # per emission reason (one WebGL trace each), split off the slider's path
    diagonal: tuple[list[float], list[float]]
    hover: bool  # with hover text; without, a light frame drawn while a control moves (float32 where exact)
    absolute: bool = False  # coordinates are ms since 1970 (date axes), else seconds
    note: str = ""


def sample_rows(rows: np.ndarray, late: np.ndarray, budget: int) -> np.ndarray:
    """At most ``budget`` rows: every late one first (they are the story), then an even stride of the rest.
    ``late`` is a mask over every row, not only ``rows``."""
    if len(rows) <= budget:
        return rows
    is_late = late[rows]
    late_rows = rows[is_late]
    if len(late_rows) >= budget:
        return np.asarray(late_rows[np.linspace(0, len(late_rows) - 1, budget).astype(int)])
    ontime = rows[~is_late]
    keep = ontime[np.linspace(0, len(ontime) - 1, budget - len(late_rows)).astype(int)]
    return np.sort(np.concatenate([late_rows, keep]))


def two_clocks(result: Result, key: str = ALL_KEYS, upto_batch: int | None = None,
               budget: int = POINT_BUDGET, hover: bool = True, windows: int | None = None) -> TwoClocks:
    """What the two clocks draw. ``hover=False`` for a frame drawn while a control moves: it is not read
    closely, so it gets hover text only if it shows every event anyway (formatting it costs ~45 ms at 1M).
    ``windows``: at most this many emission markers, and so window outlines (a light frame's: ~3,600 WebGL
    emission markers cost software GL ~100 ms a frame on the 50k Kafka export; RESULTS.md), else MARKER_BUDGET."""
    ev = result.events
    mask = np.ones(len(ev), dtype=bool)
    if key != ALL_KEYS:
        mask &= ev["key"].to_numpy() == key
    if upto_batch is not None:
        mask &= ev["batch"].to_numpy() <= upto_batch
    rows = np.flatnonzero(mask)
    at = result.absolute
    status = ev["status"].to_numpy()
    shown_rows = sample_rows(rows, status != "on_time", budget)
    arrival_us, event_time_us = ev["arrival_time"].to_numpy(), ev["event_time"].to_numpy()
    shown_status = status[shown_rows]
    points = {name: Points(plot_time(arrival_us[rows_of], at), plot_time(event_time_us[rows_of], at), rows_of)
              for name in STATUSES for rows_of in [shown_rows[shown_status == name]]}
    notes = [] if len(shown_rows) == len(rows) else [
        f"showing {len(shown_rows):,} of {len(rows):,} events (all late ones, an even sample of the rest)"]
    wm, eff, owners = watermark_steps(result, key, upto_batch)
    steps = int(np.isfinite(wm[1]).sum())
    if steps < len(result.watermarks):
        notes.append(f"watermark drawn through {steps:,} of its {len(result.watermarks):,} steps")
    emitted = result.windows
    if upto_batch is not None:
        emitted = emitted[emitted["emit_batch"] <= upto_batch]
    if key != ALL_KEYS:
        emitted = emitted[emitted["key"] == key]
    markers = MARKER_BUDGET if windows is None else min(windows, MARKER_BUDGET)
    if len(emitted) > markers:
        keep = sample_rows(np.arange(len(emitted)), ~emitted["reason"].isin(ROUTINE_REASONS).to_numpy(), markers)
        notes.append(f"{len(keep):,} of {len(emitted):,} emissions drawn, with their windows' outlines (all but "
                     "watermark and update ones, a sample of those)")
        emitted = emitted.iloc[keep]
    lo = float(plot_time(min(arrival_us.min(), event_time_us.min()), at)) if len(ev) else 0.0
    hi = float(plot_time(max(arrival_us.max(), event_time_us.max()), at)) if len(ev) else 1.0
    hover = hover or len(shown_rows) == len(rows)
    return TwoClocks(points, len(shown_rows), len(rows), wm, eff, owners, window_bands(result, emitted),
                     emission_markers(emitted, hover, at), ([lo, hi], [lo, hi]), hover, at, NOTE_SEP.join(notes))


def watermark_steps(result: Result, key: str = ALL_KEYS, upto_batch: int | None = None) -> tuple[Line, Line, np.ndarray]:
    """Raw and effective watermark as step lines over the processing clock, and whose watermark each point is.
    With one watermark per key (or partition) and no key chosen, every one's line is drawn, separated by gaps:
    the hover text tells them apart."""
    trace = result.watermarks
    mask = trace["watermark"].notna().to_numpy()
    if upto_batch is not None:
        mask &= trace["batch"].to_numpy() <= upto_batch
    scope = trace["scope"].to_numpy()
    scopes = scope[:1] if _all_same(scope) else pd.unique(scope)
    chosen = None  # of several watermarks: the picked key's, else the merged one; with neither, one line each
    if len(scopes) > 1 and key != ALL_KEYS and key in scopes:
        chosen = key
    elif len(scopes) > 1 and "*" in scopes:
        chosen = "*"
    if chosen is not None:
        mask &= scope == chosen
    one_line = len(scopes) <= 1 or chosen is not None
    trace = trace[mask] if not mask.all() else trace
    xs, ys, es, owners = [], [], [], []
    groups = [(trace["scope"].iat[0] if len(trace) else "*", trace)] if one_line else \
        list(trace.groupby("scope", sort=True))
    budget = max(50, LINE_BUDGET // max(1, len(groups)))
    for name, part in groups:
        keep = thin_steps(len(part), budget)
        at = result.absolute
        xs.append(plot_time(part["time"].to_numpy()[keep], at))
        ys.append(plot_time(part["watermark"].to_numpy(dtype=np.int64)[keep], at))
        es.append(plot_time(part["effective"].to_numpy(dtype=np.int64)[keep], at))
        owners.append(np.full(len(keep), watermark_owner(result, str(name)), dtype=object))
        for lst in (xs, ys, es):
            lst.append(np.array([np.nan]))
        owners.append(np.array([""], dtype=object))
    if not xs:
        empty = np.array([])
        return (empty, empty), (empty, empty), np.array([], dtype=object)
    x = np.concatenate(xs)
    return (x, np.concatenate(ys)), (x, np.concatenate(es)), np.concatenate(owners)


def scripted_marks(stream: Stream, config: RunConfig, absolute: bool,
                   upto_batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The input's own watermark rows as points (arrival, watermark), those arrived by the batch shown: drawn
    whether or not the strategy follows them, so a logged watermark can be read against the one computed. Read
    from the stream and the settings, not a Result: a frame computed ahead may be drawn without its Result."""
    marks = stream.watermarks
    if upto_batch is not None and len(marks):
        marks = marks[marks["arrival_time"] <= batches_for(stream, config).commit_time[upto_batch - 1]]
    at = absolute
    return plot_time(marks["arrival_time"].to_numpy(), at), plot_time(marks["watermark"].to_numpy(), at)


def watermark_owner(result: Result, scope: str) -> str:
    """A watermark trace's scope in words: "*" is the one global (or merged) watermark."""
    kind = result.config.time.scope.value
    if scope == "*":
        return "global" if kind in ("global", "key") else f"merged ({kind.replace('partition-', '')} of partitions)"
    if kind == "key":
        return f"key {scope}" if scope else "key (empty)"
    return f"partition {scope}"


def _all_same(values: np.ndarray) -> bool:
    """Whether an object column holds one value, by one comparison: hashing a million strings (``pd.unique``,
    ``pd.factorize``) cost ~30 ms of each 1M-event frame for what is usually one key or one watermark scope."""
    return len(values) == 0 or bool((values == values[0]).all())


def thin_steps(n: int, budget: int) -> np.ndarray:
    """Indices of at most ``budget`` points of a step line, evenly spread, first and last kept. Watermarks
    never decrease, so the thinned line stays within one step of the true one."""
    if n <= budget:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, budget).round().astype(int))


def window_bands(result: Result, emitted: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """One rectangle per window of ``emitted`` (its last emission so far): from its first event's arrival to its
    emission on x, its event-time span on y. Returned as one polygon trace with gaps, so it stays a single trace.
    A light frame's emissions are sampled, so are its outlines: an SVG path of 1,000 rectangles cost the page
    ~45 ms a frame (RESULTS.md)."""
    if emitted.empty:
        return np.array([]), np.array([])
    last = emitted.sort_values("revision").drop_duplicates(["key", "start", "end"], keep="last")
    opened = first_arrivals(result, last)
    at = result.absolute
    x0 = plot_time(np.where(np.isnan(opened), last["emit_time"].to_numpy(dtype=float), opened), at)
    x1 = plot_time(last["emit_time"].to_numpy(dtype=float), at)
    y0, y1 = plot_time(last["start"].to_numpy(), at), plot_time(last["end"].to_numpy(), at)
    nan = np.full(len(last), np.nan)
    x = np.column_stack([x0, x1, x1, x0, x0, nan]).ravel()
    y = np.column_stack([y0, y0, y1, y1, y0, nan]).ravel()
    return x, y


def first_arrivals(result: Result, windows: pd.DataFrame) -> np.ndarray:
    """The arrival time of the first admitted event of each window (key, start, end), NaN for none.

    One sort of the admitted assignments and a min per run of equal windows: a pandas groupby over a million
    assignments (with a filter to the windows shown first) took 250–380 ms of each 1M-event slider step, and
    this ~60 ms. Assignments arrive nearly sorted by window, which is the sort's best case. Only assignments to
    a wanted window's start enter the sort: a light frame wants at most 250 windows, and sorting all of a 3M-event
    stream's assignments for them took 2.7 s of its 13.8 s step (RESULTS.md)."""
    assignments = result.assignments
    start = assignments["start"].to_numpy()
    wanted_starts = np.unique(windows["start"].to_numpy())
    if len(wanted_starts) == 0:
        return np.full(0, np.nan)
    nearest = wanted_starts[np.minimum(np.searchsorted(wanted_starts, start), len(wanted_starts) - 1)]
    taken = assignments["admitted"].to_numpy() & (nearest == start)
    event = assignments["event"].to_numpy()[taken]
    if len(event) == 0:
        return np.full(len(windows), np.nan)
    start, end = start[taken], assignments["end"].to_numpy()[taken]
    arrival = result.events["arrival_time"].to_numpy(dtype=np.int64)[event]
    keys = result.events["key"].to_numpy()
    if _all_same(keys):  # one key (the usual case)
        key_code, names = np.zeros(len(event), dtype=np.int64), pd.Index([keys[0]])
    else:
        codes, names = pd.factorize(keys)
        key_code, names = codes[event], pd.Index(names)
    order = np.lexsort((end, start, key_code))
    key_code, start, end, arrival = key_code[order], start[order], end[order], arrival[order]
    new_window = np.flatnonzero((np.diff(key_code) != 0) | (np.diff(start) != 0) | (np.diff(end) != 0)) + 1
    runs = np.concatenate([[0], new_window])
    first = np.minimum.reduceat(arrival, runs)
    known = pd.MultiIndex.from_arrays([key_code[runs], start[runs], end[runs]])
    wanted = pd.MultiIndex.from_arrays([names.get_indexer(windows["key"].to_numpy()), windows["start"].to_numpy(),
                                        windows["end"].to_numpy()])
    at = known.get_indexer(wanted)
    return np.where(at >= 0, first[np.maximum(at, 0)].astype(float), np.nan)


def emission_markers(emitted: pd.DataFrame, hover: bool = True, absolute: bool = False) -> dict[str, Markers]:
    """The markers of every emission reason, empty where a reason has none; with their hover text if ``hover``
    (formatting it is most of the cost: ~45 ms for 4,000 markers)."""
    text = _emission_text(emitted, absolute) if hover else None
    x, y = plot_time(emitted["emit_time"].to_numpy(), absolute), plot_time(emitted["end"].to_numpy(), absolute)
    reasons, rows = emitted["reason"].to_numpy(), emitted.index.to_numpy()
    markers = {}
    for reason in REASON_LABELS:
        of = np.flatnonzero(reasons == reason)
        markers[reason] = Markers(x[of], y[of], rows[of], None if text is None else [text[i] for i in of])
    return markers


def _emission_text(emitted: pd.DataFrame, absolute: bool) -> list[str]:
    lat = emitted["latency_event"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return [
        f"{'key ' + k + ' · ' if k else ''}[{format_instant(s, absolute)}, {format_instant(e, absolute)}) · "
        f"{plural(c, 'event')}<br>{reason} · revision {rev} · batch {b}<br>latency {duration(la, 'none')}"
        for k, s, e, c, reason, rev, b, la in zip(emitted["key"], emitted["start"], emitted["end"], emitted["count"],
                                                  emitted["reason"], emitted["revision"], emitted["emit_batch"], lat)
    ]


@dataclass
class DelayHistogram:
    centers: np.ndarray
    counts: np.ndarray
    width: float
    quantiles: dict[str, float]


def delay_histogram(stream: Stream, bins: int = 60) -> DelayHistogram:
    """arrival − event time, the distribution the delay has to cover."""
    delay = seconds(stream.events["arrival_time"].to_numpy() - stream.events["event_time"].to_numpy())
    counts, edges = np.histogram(delay, bins=bins)
    quantiles = {f"p{q}": float(np.percentile(delay, q)) for q in (50, 95, 99)}
    return DelayHistogram((edges[:-1] + edges[1:]) / 2, counts, float(edges[1] - edges[0]), quantiles)


@dataclass(frozen=True)
class QuantileLabel:
    x: float
    text: str
    anchor: str  # "left" of its line, or "right" near the axis' end where a left-anchored label would be cut


def quantile_labels(hist: DelayHistogram, apart: float = 0.12) -> list[QuantileLabel]:
    """One label per group of quantiles closer than ``apart`` of the histogram's width, its quantiles one per
    line, so labels never sit on one another; each names its delay as a duration."""
    span = max(float(hist.centers[-1] - hist.centers[0]) + hist.width, 1e-9)
    groups: list[list[tuple[str, float]]] = []
    for name, value in sorted(hist.quantiles.items(), key=lambda item: item[1]):
        if groups and value - groups[-1][0][1] < apart * span:
            groups[-1].append((name, value))
        else:
            groups.append([(name, value)])
    right_part = float(hist.centers[0]) - hist.width / 2 + 0.75 * span
    return [QuantileLabel(group[0][1], "<br>".join(f"{name} {human_duration(round(value * MICROS['s']))}"
                                                   for name, value in reversed(group)),
                          "right" if group[0][1] > right_part else "left")
            for group in groups]


FLOAT32_FINE_BELOW = 2.0**14  # seconds; below it float32 values are spaced 2**-10 s apart at most (under 1 ms)


def compact(values: Any) -> np.ndarray:
    """Positions for a frame drawn while a control moves, in half the bytes: float32 when every value is below
    FLOAT32_FINE_BELOW, so none moves by a millisecond (epoch-second times stay float64). The page then receives
    and decodes half as much; the settled frame that follows is exact."""
    array: np.ndarray = np.asarray(values, dtype=float)
    finite = array[np.isfinite(array)]
    if finite.size == 0 or np.abs(finite).max() < FLOAT32_FINE_BELOW:
        return array.astype(np.float32)
    return array
