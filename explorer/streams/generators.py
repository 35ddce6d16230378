"""Seeded synthetic streams. Each returns a table in seconds; ``generate`` validates it into a Stream.

``textbook`` makes exactly the random calls of 003's Code 9.4.1 in the same order, so the same seed
gives the same numbers and Output 9.4.1 comes out digit for digit.
"""

from __future__ import annotations

import inspect
import math
import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from explorer.errors import InputError
from explorer.streams.delays import delays
from explorer.streams.loading import stream_from_frame
from explorer.streams.stream import Stream


def textbook(seed: int = 7, events: int = 20_000, spacing: float = 0.5, mean_delay: float = 6.0,
             max_delay: float = 25.0) -> pd.DataFrame:
    """Steady event times, heavy-tailed (exponential, capped) delays; rows in arrival order."""
    rng = random.Random(seed)
    rows = []
    for i in range(events):
        event_time = i * spacing
        delay = min(rng.expovariate(1 / mean_delay), max_delay)
        rows.append((event_time, event_time + delay))
    order = sorted(range(events), key=lambda i: rows[i][1])  # the book's stable sort on arrival
    return pd.DataFrame({
        "id": [f"e{i}" for i in order],
        "event_time": [rows[i][0] for i in order],
        "arrival_time": [rows[i][1] for i in order],
    })


def voltsp(scenario: int = 3) -> pd.DataFrame:
    """The worked example of 000 for one user. Scenarios 0–2 share the five events; 3 adds e6 (9 s, batch 2);
    4 is scenario 3 with e5 never arriving. e6 arrives with batch 2, so its processing time is 8 s."""
    if scenario not in range(5):
        raise InputError("voltsp --scenario must be 0, 1, 2, 3 or 4")
    rows = [("e1", 2, 7, 1), ("e2", 5, 7, 1), ("e4", 12, 8, 2), ("e6", 9, 8, 2), ("e3", 8, 9, 3), ("e5", 25, 10, 4)]
    if scenario < 3:
        rows = [r for r in rows if r[0] != "e6"]
    if scenario == 4:
        rows = [r for r in rows if r[0] != "e5"]
    return pd.DataFrame(rows, columns=["id", "event_time", "arrival_time", "batch"]).assign(key="user1")


def mobile_bursts(seed: int = 1, devices: int = 20, duration: float = 600.0, rate: float = 1.0,
                  offline_prob: float = 0.002, mean_offline: float = 40.0, network_delay: float = 0.3) -> pd.DataFrame:
    """Devices emit about ``rate`` events/s; now and then one goes offline, buffers, and flushes its
    backlog in a burst when it reconnects (the 003 feature-pipeline story)."""
    rng = np.random.default_rng(seed)
    frames = []
    for d in range(devices):
        gaps = rng.exponential(1 / rate, size=int(duration * rate * 1.5) + 10)
        times = np.cumsum(gaps)
        times = times[times < duration]
        arrival = times + rng.exponential(network_delay, size=len(times))
        offline_start = times[rng.random(len(times)) < offline_prob]
        for start in offline_start:
            back = start + rng.exponential(mean_offline)
            held = (times >= start) & (times < back)
            arrival[held] = np.maximum(arrival[held], back + rng.exponential(network_delay, size=held.sum()))
        frames.append(pd.DataFrame({"key": f"device-{d:02d}", "event_time": times, "arrival_time": arrival}))
    return _finish(pd.concat(frames))


def skewed_partitions(seed: int = 3, events: int = 4_000, spacing: float = 0.5, partitions: int = 2,
                      skew: float = 5.0, mean_delay: float = 2.0) -> pd.DataFrame:
    """Same event-time rate on every partition, but partition p's arrivals trail by p × skew (003, exercise 2)."""
    rng = np.random.default_rng(seed)
    index = np.arange(events)
    event_time = index * spacing
    partition = index % partitions
    arrival = event_time + rng.exponential(mean_delay, size=events) + partition * skew
    names = np.array([chr(ord("A") + p) for p in range(partitions)])
    return _finish(pd.DataFrame({"partition": names[partition], "key": names[partition],
                                 "event_time": event_time, "arrival_time": arrival}))


def idle_key(seed: int = 5, keys: int = 3, duration: float = 300.0, silent_after: float = 40.0,
             rate: float = 1.0, mean_delay: float = 0.5) -> pd.DataFrame:
    """Busy keys keep sending; the key ``quiet`` falls silent after ``silent_after`` seconds, so its last
    windows close only through an idle timeout."""
    rng = np.random.default_rng(seed)
    frames = []
    for k in range(keys):
        name = "quiet" if k == 0 else f"busy-{k}"
        end = silent_after if k == 0 else duration
        base = np.arange(0.0, end, 1 / rate)
        times = base + rng.uniform(0, 0.5, size=len(base))
        arrival = times + rng.exponential(mean_delay, size=len(times))
        frames.append(pd.DataFrame({"key": name, "event_time": times, "arrival_time": arrival}))
    return _finish(pd.concat(frames))


def future_outliers(seed: int = 11, events: int = 2_000, spacing: float = 0.5, outlier_prob: float = 0.005,
                    jump: float = 3600.0, mean_delay: float = 1.0) -> pd.DataFrame:
    """An orderly stream with a few events stamped far in the future by a skewed clock; they open
    future windows (000's "Future outliers") and, under MAX_EVENT_TIME, drag the watermark ahead."""
    rng = np.random.default_rng(seed)
    event_time = np.arange(events) * spacing
    arrival = event_time + rng.exponential(mean_delay, size=events)
    outlier = rng.random(events) < outlier_prob
    event_time = np.where(outlier, event_time + jump, event_time)
    return _finish(pd.DataFrame({"event_time": event_time, "arrival_time": arrival}))


KAFKA_COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id", "partition": "partition",
                 "offset": "offset"}


def kafka_export(seed: int = 2, devices: int = 20, duration: float = 2500.0, rate: float = 1.0,
                 offline_prob: float = 0.0015, mean_offline: float = 240.0, network_delay: float = 0.2,
                 start: str = "2026-11-20T09:00:00Z", times: str = "mixed") -> pd.DataFrame:
    """A topic exported from Kafka, as users bring it: ``device_id``, ``ts`` (when the device recorded the
    event), ``ingest_ts`` (when the broker took it), ``partition`` and ``offset``, about 50k rows. Devices now
    and then go offline for minutes and flush their backlog when they reconnect. ``times`` is how the export
    writes them: ``mixed`` (ts ISO-8601 with ms and Z, ingest_ts epoch ms, Kafka's own format), ``epoch-ms``
    (both epoch ms) or ``iso`` (both ISO-8601; ingest_ts with a +01:00 offset)."""
    if times not in ("mixed", "epoch-ms", "iso"):
        raise InputError("kafka-export --times is mixed, epoch-ms or iso")
    try:
        origin = pd.Timestamp(start).tz_convert("UTC")
    except (ValueError, TypeError):
        raise InputError(f"kafka-export --start {start!r}: give an ISO-8601 date-time with a zone, e.g. "
                         "2026-11-20T09:00:00Z") from None
    rng = np.random.default_rng(seed)
    frames = []
    for d in range(devices):
        recorded = np.cumsum(rng.exponential(1 / rate, size=int(duration * rate * 1.5) + 10))
        recorded = recorded[recorded < duration]
        ingested = recorded + rng.exponential(network_delay, size=len(recorded))
        for went in recorded[rng.random(len(recorded)) < offline_prob]:
            back = went + rng.exponential(mean_offline)
            held = (recorded >= went) & (recorded < back)
            ingested[held] = np.maximum(ingested[held], back + rng.exponential(network_delay, size=held.sum()))
        frames.append(pd.DataFrame({"device_id": f"device-{d:02d}", "partition": d % 4, "recorded": recorded,
                                    "ingested": ingested}))
    frame = pd.concat(frames).sort_values("ingested", kind="stable").reset_index(drop=True)
    frame["offset"] = frame.groupby("partition").cumcount()
    ts = origin + pd.to_timedelta((frame["recorded"] * 1000).round(), unit="ms")
    ingest = origin + pd.to_timedelta((frame["ingested"] * 1000).round(), unit="ms")

    def epoch_ms(stamps: pd.Series) -> pd.Series:
        millis: pd.Series = (stamps - pd.Timestamp("1970-01-01", tz="UTC")) // pd.Timedelta(milliseconds=1)
        return millis

    def iso(stamps: pd.Series) -> pd.Series:
        text: pd.Series = stamps.dt.strftime("%Y-%m-%dT%H:%M:%S.%f").str[:-3]
        return text

    frame["ts"] = epoch_ms(ts) if times == "epoch-ms" else iso(ts) + "Z"
    frame["ingest_ts"] = iso(ingest.dt.tz_convert("Etc/GMT-1")) + "+01:00" if times == "iso" else epoch_ms(ingest)
    return frame[["device_id", "ts", "ingest_ts", "partition", "offset"]]


def _finish(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.sort_values("arrival_time", kind="stable").reset_index(drop=True)
    frame.insert(0, "id", [f"e{i}" for i in range(1, len(frame) + 1)])
    frame["event_time"] = frame["event_time"].round(6)
    frame["arrival_time"] = frame["arrival_time"].round(6)
    return frame


@dataclass(frozen=True)
class Generator:
    name: str
    make: Callable[..., pd.DataFrame]
    description: str
    columns: dict[str, str] | None = None  # the file's own column names, for exports that keep them


GENERATORS: dict[str, Generator] = {
    g.name: g for g in (
        Generator("textbook", textbook, "003's Code 9.4.1 stream: 20k events, heavy-tailed delays"),
        Generator("voltsp", voltsp, "000's worked example (scenarios 0–4), one user, in its batches"),
        Generator("mobile-bursts", mobile_bursts, "devices that go offline, then flush a backlog"),
        Generator("skewed-partitions", skewed_partitions, "partitions whose arrivals trail each other by a skew"),
        Generator("idle-key", idle_key, "busy keys and one key that falls silent"),
        Generator("future-outliers", future_outliers, "a few events stamped far in the future"),
        Generator("kafka-export", kafka_export, "a Kafka topic export: ISO and epoch-ms times, devices offline "
                  "for minutes", KAFKA_COLUMNS),
        Generator("delays", delays, "steady events whose delays follow a distribution (uniform, exponential, "
                  "log-normal, Pareto) with a given p99, and devices that go offline"),
    )
}


# What each generator option may be, by name: (smallest, largest, whether the smallest itself is allowed).
# Checked before a generator runs, so a zero mean delay or a negative seed is a sentence, not a traceback.
OPTION_RANGES: dict[str, tuple[float, float, bool]] = {
    "seed": (0, 2**32 - 1, True),
    "events": (1, 5_000_000, True),
    "devices": (1, 10_000, True),
    "keys": (1, 10_000, True),
    "partitions": (1, 1_000, True),
    "scenario": (0, 4, True),
    "spacing": (0, 86_400, False),
    "mean_delay": (0, 86_400, False),
    "max_delay": (0, 86_400, True),
    "duration": (0, 10**8, False),
    "rate": (0, 100_000, False),
    "p99": (0, 365 * 86_400, False),
    "shape": (0, 100, False),
    "silent_after": (0, 10**8, True),
    "offline_prob": (0, 1, True),
    "outlier_prob": (0, 1, True),
    "mean_offline": (0, 86_400, False),
    "network_delay": (0, 86_400, True),
    "skew": (0, 86_400, True),
    "jump": (0, 10**8, True),
}
MAX_GENERATED_EVENTS = 5_000_000  # about 1 GB once run; a bigger trace belongs in a file and the Spark sweep


def check_options(name: str, options: dict[str, Any]) -> None:
    """Refuse an option value a generator cannot use (negative seed, zero partitions, NaN, a stream of billions),
    naming the option as it is typed on the command line."""
    for option, value in options.items():
        if option not in OPTION_RANGES:
            continue
        low, high, low_ok = OPTION_RANGES[option]
        flag = f"--{option.replace('_', '-')}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"generator {name!r}: {flag} must be a number, not {value!r}")
        if value < low or (value == low and not low_ok) or value > high:
            raise InputError(f"generator {name!r}: {flag} must be {'≥' if low_ok else '>'} {low:,} and ≤ {high:,}, "
                             f"not {value:,}")
    defaults = {k: p.default for k, p in inspect.signature(GENERATORS[name].make).parameters.items()}
    given = defaults | options
    many = given.get("events", 0)
    if "duration" in given:
        many = given.get("devices", given.get("keys", 1)) * given["duration"] * given["rate"]
    if many > MAX_GENERATED_EVENTS:
        raise InputError(f"generator {name!r}: these options make about {many:,.0f} events; at most "
                         f"{MAX_GENERATED_EVENTS:,} are generated (fewer devices or keys, a shorter duration or a "
                         "lower rate)")


def make_frame(name: str, **options: Any) -> pd.DataFrame:
    """A generator's table, its options checked first."""
    try:
        generator = GENERATORS[name]
    except KeyError:
        raise InputError(f"unknown generator {name!r}; available: {', '.join(GENERATORS)}") from None
    check_options(name, options)
    try:
        return generator.make(**options)
    except TypeError as exc:
        raise InputError(f"generator {name!r}: {exc}") from None


def generate(name: str, **options: Any) -> Stream:
    """Run a generator and validate its table into a Stream (the same path as an uploaded file)."""
    frame = make_frame(name, **options)
    return stream_from_frame(frame, name=name, columns=GENERATORS[name].columns)
