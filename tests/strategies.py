"""Hypothesis strategies: small random streams and configurations (small keeps the suite fast)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
from hypothesis import strategies as st

from explorer.config import (BatchKind, BatchSpec, Emit, LatePolicy, LatenessRule, RefusedWhen, RunConfig, Schedule, Scope,
                             Panes, Strategy, TimeConfig, TimeSource, WindowKind, WindowSpec)
from explorer.core.triggers import TRIGGERS
from explorer.streams import stream_from_frame

# every trigger added after the runner, and the early firings' alignment: a test that draws a config and sets what a
# trigger is refused beside (another emit mode, a window kind, a strategy) clears them all with ``with_time(**NO_TRIGGERS)``
NO_TRIGGERS = {trigger.field: None for trigger in TRIGGERS} | {"early_aligned_to": None}

S = 1_000_000


@st.composite
def frames(draw, max_events: int = 30, with_batch: bool | None = None, with_marks: bool = False,
           fast_clocks: bool = False) -> pd.DataFrame:
    """Random events; ``with_marks`` may add scripted watermark rows (kind = watermark) among them. With
    ``fast_clocks`` an event may be stamped up to 20 s ahead of its arrival (a device whose clock runs fast)."""
    n = draw(st.integers(1, max_events))
    half_seconds = st.integers(0, 120)
    event_time = draw(st.lists(half_seconds, min_size=n, max_size=n))
    delay = draw(st.lists(st.integers(-40 if fast_clocks else 0, 40), min_size=n, max_size=n))
    keys = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    # up to 7 partitions: the merge's tree then has padding leaves and more than one level
    names = [f"P{i}" for i in range(draw(st.sampled_from([1, 2, 2, 3, 7])))]
    partitions = draw(st.lists(st.sampled_from(names), min_size=n, max_size=n))
    if draw(st.booleans()):  # as Kafka's partitioner puts them: a key in one partition (scope partition needs it)
        partitions = [names[ord(k) % len(names)] for k in keys]
    frame = pd.DataFrame({
        "id": [f"e{i}" for i in range(n)], "key": keys, "partition": partitions,
        "event_time": [t / 2 for t in event_time],
        "arrival_time": [max(t + d, 0) / 2 for t, d in zip(event_time, delay)],
    })
    if with_marks and draw(st.booleans()):
        marks = draw(st.lists(st.tuples(half_seconds, st.integers(0, 160)), min_size=1, max_size=5))
        frame = pd.concat([frame.assign(kind="event"), pd.DataFrame({
            "id": [f"w{j}" for j in range(len(marks))], "key": "", "partition": names[0],
            "event_time": [v / 2 for v, _ in marks], "arrival_time": [a / 2 for _, a in marks], "kind": "watermark",
        })], ignore_index=True)
        n = len(frame)
    if with_batch is None:
        with_batch = draw(st.booleans())
    if with_batch and draw(st.booleans()):
        frame = frame.sort_values("arrival_time", kind="stable")
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=6)))
        frame["batch"] = [1 + sum(1 for c in cuts if c <= i) for i in range(n)]
    elif with_batch:  # a batch column that disagrees with arrival_time (issue 17: clocks must not go back)
        frame["batch"] = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    return frame


def streams(**kwargs):
    return frames(**kwargs).map(lambda f: stream_from_frame(f, name="hypothesis"))


seconds = st.integers(0, 12).map(lambda x: x * S // 2)


@st.composite
def windows(draw) -> WindowSpec:
    kind = draw(st.sampled_from(list(WindowKind)))
    if kind is WindowKind.TUMBLING:
        size = draw(st.integers(1, 12)) * S // 2
        return WindowSpec(kind, size=size, slide=size)
    if kind is WindowKind.SLIDING:
        slide = draw(st.integers(1, 6)) * S // 2
        return WindowSpec(kind, size=slide * draw(st.integers(1, 4)), slide=slide)
    if kind is WindowKind.CUMULATE:
        step = draw(st.integers(1, 6)) * S // 2
        return WindowSpec(kind, size=step * draw(st.integers(1, 4)), slide=step, offset=draw(seconds))
    if kind is WindowKind.KSTREAMS_SLIDING:
        difference = draw(st.integers(1, 10)) * S // 2
        return WindowSpec(kind, size=difference, slide=difference)
    return WindowSpec(kind, gap=draw(st.integers(1, 10)) * S // 2)


@st.composite
def batch_specs(draw, has_batch: bool = True) -> BatchSpec | None:
    kinds = [BatchKind.EVENT, BatchKind.COUNT, BatchKind.INTERVAL] + ([BatchKind.COLUMN] if has_batch else [])
    kind = draw(st.sampled_from(kinds))
    if kind is BatchKind.COUNT:
        return BatchSpec(kind, count=draw(st.integers(1, 5)))
    if kind is BatchKind.INTERVAL:
        return BatchSpec(kind, interval=draw(st.integers(1, 10)) * S)
    return BatchSpec(kind)


def keys_in_one_partition(stream) -> bool:
    return bool((stream.events.groupby("key")["partition"].nunique() <= 1).all())


@st.composite
def configs(draw, fast_only: bool = False, has_batch: bool = True, has_marks: bool = False,
            partition_scope: bool = True) -> RunConfig:
    """``partition_scope``: whether scope partition may be drawn (the stream keeps each key in one partition)."""
    window = draw(windows())
    if fast_only and window.kind is WindowKind.SESSION:
        window = WindowSpec(WindowKind.TUMBLING, size=window.gap, slide=window.gap)
    time_source = TimeSource.EVENT if fast_only else draw(st.sampled_from(list(TimeSource)))
    idle = None if fast_only else draw(st.one_of(st.none(), st.integers(1, 30).map(lambda x: x * S)))
    emit = draw(st.sampled_from([Emit.ON_CLOSE, Emit.ON_CLOSE, Emit.ON_UPDATE, Emit.ON_BATCH]))
    forget = draw(st.booleans())
    # Beam's early firings: emit on-close, tumbling, sliding or session windows, no forgetting (the rest is refused)
    triggered = window.kind not in (WindowKind.SESSION, WindowKind.KSTREAMS_SLIDING)  # (Kafka's has none: refused)
    early = (draw(st.sampled_from([None, None, S, 3 * S]))
             if emit is Emit.ON_CLOSE and (triggered or window.kind is WindowKind.SESSION) and not forget else None)
    # Flink's ContinuousEventTimeTrigger: the same windows and emit, one trigger at a time
    continuous = (draw(st.sampled_from([None, None, 2 * S, 7 * S]))
                  if emit is Emit.ON_CLOSE and triggered and not forget and early is None else None)
    # Flink's ContinuousProcessingTimeTrigger: the same, when neither other trigger was drawn
    processing = (draw(st.sampled_from([None, None, 2 * S, 5 * S]))
                  if emit is Emit.ON_CLOSE and triggered and not forget and early is None and continuous is None
                  else None)
    time = TimeConfig(
        time_source=time_source,
        strategy=draw(st.sampled_from([s for s in Strategy if not (fast_only and s is Strategy.EVENT_CLOCK)
                                       and (has_marks or s is not Strategy.SCRIPTED)])),
        bound=draw(seconds),
        delay=draw(seconds),
        allowed_lateness=draw(st.sampled_from([0, 0, S, 5 * S])),
        late_policy=draw(st.sampled_from(list(LatePolicy))),
        lateness_rule=draw(st.sampled_from(list(LatenessRule))),
        refused_when=draw(st.sampled_from(list(RefusedWhen))),
        idle_timeout=idle,
        idle_clock=draw(st.sampled_from(list(TimeSource))),
        heartbeat=draw(st.sampled_from([5 * S, 60 * S])),
        scope=draw(st.sampled_from([s for s in Scope if partition_scope or s is not Scope.PARTITION])),
        schedule=Schedule.LIVE if fast_only else draw(st.sampled_from(list(Schedule))),
        end_inclusive=window.kind is not WindowKind.SESSION and draw(st.booleans()),
        session_close_strict=window.kind is WindowKind.SESSION and draw(st.booleans()),
        session_lateness_on_merge=window.kind is WindowKind.SESSION and draw(st.booleans()),
        session_merge_overlap_only=window.kind is WindowKind.SESSION and draw(st.booleans()),
        session_state_kept=window.kind is WindowKind.SESSION and draw(st.booleans()),
        forget_clock_when_empty=forget,
        bytewax_live_wakeups=draw(st.booleans()),
        windows_from_zero=window.kind is WindowKind.SLIDING and draw(st.booleans()),
        late_kept_at_horizon=draw(st.booleans()),
        late_fires_per_element=draw(st.booleans()),
        source_idle_timeout=None if fast_only else draw(st.one_of(st.none(), st.integers(1, 20).map(lambda x: x * S))),
        watermark_unit=draw(st.sampled_from([1, 1, 1_000, S])),  # µs (exact), Spark's ms, whole seconds
        emit=emit,
        panes=draw(st.sampled_from(list(Panes))),
        commit_interval=draw(st.sampled_from([None, None, 3 * S])),  # emit on-batch: per batch, or per 3 s
        early_firings=early,
        # Beam's alignedTo(period, offset): with early firings only (refused alone), not with sessions (refused)
        early_aligned_to=(draw(st.sampled_from([None, 0, 2 * S])) if early is not None and triggered else None),
        continuous_event_time=continuous,
        continuous_processing_time=processing,
    )
    return RunConfig(window=window, time=time, batches=draw(batch_specs(has_batch)), preset="custom")


@st.composite
def stream_and_config(draw, fast_only: bool = False):
    frame = draw(frames(with_marks=True))
    stream = stream_from_frame(frame, name="hypothesis")
    return stream, draw(configs(fast_only=fast_only, has_batch="batch" in frame.columns,
                                has_marks=not stream.watermarks.empty, partition_scope=keys_in_one_partition(stream)))


def with_batches(config: RunConfig, batches: BatchSpec) -> RunConfig:
    return replace(config, batches=batches)


def examples(n: int) -> int:
    """Hypothesis example count, scaled by WX_EXAMPLES: 20 for a long local hunt, 0.2 for ``make check``'s
    edit loop (never below 10 examples)."""
    import os
    return max(min(n, 10), round(n * float(os.environ.get("WX_EXAMPLES", "1"))))


@st.composite
def boundary_case(draw):
    """A stream built to sit on the edges the rules have: events exactly at window ends (and 1 µs either
    side), arrival gaps exactly the idle timeout or the session gap, ties in arrival time, keys that go
    silent and come back, and a silent stream at the end; with a config whose durations are those edges."""
    width = draw(st.sampled_from([2, 4, 10])) * S
    idle = draw(st.sampled_from([1, 2])) * width
    n = draw(st.integers(2, 25))
    slots = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    nudges = draw(st.lists(st.sampled_from([0, 0, -1, 1]), min_size=n, max_size=n))
    event_time = [k * width + d for k, d in zip(slots, nudges)]
    waits = draw(st.lists(st.sampled_from([0, 0, width, idle, idle - 1, idle + 1, width // 2]), min_size=n,
                          max_size=n))
    keys = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    frame = pd.DataFrame({
        "id": [f"e{i}" for i in range(n)], "key": keys,
        "partition": draw(st.lists(st.sampled_from(["P", "Q"]), min_size=n, max_size=n)),
        "event_time": [t / S for t in event_time],
        "arrival_time": [(max(t, 0) + w) / S for t, w in zip(event_time, waits)],
    })
    config = draw(configs(has_batch=False, partition_scope=False))  # keys wander across P and Q
    window = config.window
    if window.kind is WindowKind.SESSION:
        window = replace(window, gap=width)
    else:
        whole = window.kind in (WindowKind.TUMBLING, WindowKind.KSTREAMS_SLIDING)  # (their slide is their size)
        window = replace(window, size=width, slide=width if whole else width // 2)
    edge = st.sampled_from([0, width // 2, width, idle])
    time = replace(config.time, delay=draw(edge), bound=draw(edge), allowed_lateness=draw(st.sampled_from([0, width])),
                   idle_timeout=draw(st.sampled_from([None, idle])), heartbeat=draw(st.sampled_from([width, idle])),
                   source_idle_timeout=draw(st.sampled_from([None, idle])))
    batches = draw(st.sampled_from([BatchSpec(BatchKind.EVENT), BatchSpec(BatchKind.COUNT, count=2),
                                    BatchSpec(BatchKind.INTERVAL, interval=width // 2)]))
    return stream_from_frame(frame, name="boundary"), RunConfig(window=window, time=time, batches=batches,
                                                                  preset="custom")
