"""The rules a configuration implies, derived in one place.

A configuration is written in the words users know (``config.py``): a strategy, a scope, a time source, a
window kind. What an engine actually does follows from several of them together: under processing time no
event-time strategy applies and there is one watermark; scripted watermark rows are one watermark for the
stream too, so a per-key scope then means nothing; Bytewax's forgotten clock needs per-key watermarks and fixed
windows. Every runner needs those switches, and when each worked them out for itself they drifted apart.

:func:`derive` works them out once. The reference engine (``core/engine.py``), the compiled kernel's plan
(``core/compiled/plan.py``; its ``State``, in ``compiled/state.py``, has a field per rule), the Spark runner and export
read the record it returns. ``tests/test_rules.py`` fails when a rule is added to one of them only.

"Off" has one spelling here: ``None`` (an idle timeout that never fires). The kernel's integer encoding of
it is :data:`OFF`, applied in one place (:func:`as_ints`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from explorer.config import (BatchKind, Emit, LatenessRule, RefusedWhen, RunConfig, Schedule, Scope, Strategy, TimeSource,
                             WindowKind)

NONE = -(2**62)  # "no watermark yet": below every real time, so comparisons need no special case
OFF = -1  # an optional duration that is off (None), as the kernel's integers hold it


def effective_watermark(raw: int, delay: int) -> int:
    """raw − delayWindowClose; the delay never pulls it below time 0 (000's scenario 2 shows 0 s for
    2 s − 5 s, and Spark floors its watermark at 0 too). "No watermark yet" stays so.

    The one definition of the formula: the compiled kernel compiles this very function (for one value and
    for whole columns, ``core/compiled/watermarks.py``), so it must stay plain arithmetic."""
    if raw == NONE:
        return NONE
    if raw >= 0:
        value = raw - delay
        return value if value > 0 else 0
    return raw - delay


def idle_at_check(quiet_from: int, timeout: int, now: int) -> bool:
    """Flink's ``WatermarksWithIdleness``: whether a periodic emit at ``now`` finds a partition idle whose inactivity
    clock started at ``quiet_from``. Its ``IdlenessTimer.checkIfIdle`` starts the clock at the first periodic emit
    that sees no record since the one before (not at the last record), and declares idle strictly more than the
    timeout after that (``now − start > maxIdleTime``).

    The one definition of the rule for both engines (the kernel compiles this very function)."""
    return now - quiet_from > timeout


def first_idle_check(quiet_from: int, timeout: int, every: int) -> int:
    """The periodic emit, on the multiples of ``every`` (the auto-watermark interval), that first finds idle a
    partition silent since its clock started at ``quiet_from`` (:func:`idle_at_check`): the first multiple past
    ``quiet_from + timeout``."""
    return ((quiet_from + timeout) // every + 1) * every


@dataclass(frozen=True)
class Rules:
    """Every switch a run's decisions depend on, derived from a RunConfig by :func:`derive`.

    The fields are the kernel's settings too (``compiled.state.State`` has one per rule, in this order), so
    each is a bool or an int (or ``None`` for off)."""

    # whose clock: processing time makes the watermark the clock itself
    processing: bool
    # one watermark for the whole stream: the processing clock, or the input's scripted watermark rows
    one_watermark: bool
    # the watermark generator (event-time strategies only; all False under processing time)
    strategy_min: bool  # MIN_EVENT_TIME: each batch's smallest event time
    per_batch: bool  # MIN or MAX: moved at commit by the batch's event times
    bounded: bool  # max seen − L, per element
    event_clock: bool  # Bytewax's event clock, moving with processing time once set
    scripted: bool  # the input's watermark rows
    bound: int
    watermark_unit: int  # event times enter the watermark in whole units (Spark's ms)
    delay: int  # delayWindowClose as the engine subtracts it: whole watermark units
    # whose watermark closes a window
    per_key: bool
    merged: bool  # min or max over partitions
    pick_min: bool
    per_partition: bool  # Kafka Streams: each partition its own stream time
    backlog: bool  # Spark: a batch's watermark applies from the next micro-batch (never under processing time)
    source_idle_timeout: int | None  # Flink's withIdleness on the partition merge
    # withIdleness also checks between commits: every interval of arrival time (Flink's auto-watermark interval,
    # --batches interval:T), the silent ones too; None: at commits only
    source_idle_every: int | None
    # windows
    session: bool
    gap: int
    end_inclusive: bool
    from_zero: bool  # Kafka Streams: no sliding (hopping) window starts below 0
    strict: bool  # Bytewax: a session closes strictly after last + gap
    on_merge: bool  # Flink: a session event's lateness is judged after the merge
    overlap_only: bool  # Beam: sessions merge only when they overlap
    sessions_kept: bool  # Beam's Python runner: a fired session is never purged
    forget_when_empty: bool  # Bytewax: a key with no window left loses its clock (per key, fixed windows)
    live_wakeups: bool  # Bytewax on the system clock: a key is woken at its notify_at only (per key, fixed windows)
    # lateness
    allowed: int
    rule_window: bool  # late = its window has closed (else: its timestamp is behind the watermark)
    refuse_every: bool  # Flink: to the side output only when every window refused it
    kept_at_horizon: bool  # Beam: kept at exactly end + allowed lateness
    # idleness per key
    idle_timeout: int | None
    idle_processing: bool  # the idle timeout runs on the processing clock
    heartbeat: int
    # output
    on_update: bool  # Kafka Streams: every record forwards its window's new result (on-batch coalesces them after)
    late_at_once: bool  # Flink: a passed window fires for each late element

    @property
    def schedule(self) -> Schedule:
        return Schedule.BACKLOG if self.backlog else Schedule.LIVE


def derive(config: RunConfig) -> Rules:
    """The rules of ``config``: each switch from the settings that decide it."""
    t = config.time
    processing = t.time_source is TimeSource.PROCESSING
    event = not processing
    scripted = t.follows_watermark_rows
    one_watermark = processing or scripted
    session = config.window.kind is WindowKind.SESSION
    # Bytewax's rules are for windows the clock closes by their ends alone (its TIME_FIELDS rows: tumbling, sliding,
    # cumulate); sessions and Kafka Streams' record-made windows have none of them
    fixed = config.window.kind in (WindowKind.TUMBLING, WindowKind.SLIDING, WindowKind.CUMULATE)
    per_key = t.scope is Scope.KEY and not one_watermark
    return Rules(
        processing=processing,
        one_watermark=one_watermark,
        strategy_min=t.strategy is Strategy.MIN,
        per_batch=t.strategy in (Strategy.MIN, Strategy.MAX),
        bounded=event and t.strategy is Strategy.BOUNDED,
        event_clock=event and t.strategy is Strategy.EVENT_CLOCK,
        scripted=scripted,
        bound=t.bound,
        watermark_unit=t.watermark_unit,
        delay=t.watermark_delay,
        per_key=per_key,
        merged=t.scope in (Scope.PARTITION_MIN, Scope.PARTITION_MAX) and not one_watermark,
        pick_min=t.scope is Scope.PARTITION_MIN,
        per_partition=t.scope is Scope.PARTITION and not one_watermark,
        backlog=t.schedule is Schedule.BACKLOG and event,
        source_idle_timeout=t.source_idle_timeout,
        source_idle_every=(config.batches.interval if t.source_idle_timeout is not None and config.batches is not None
                           and config.batches.kind is BatchKind.INTERVAL else None),
        session=session,
        gap=config.window.gap,
        end_inclusive=t.end_inclusive,
        from_zero=t.windows_from_zero and config.window.kind is WindowKind.SLIDING,
        strict=t.session_close_strict,
        on_merge=t.session_lateness_on_merge,
        overlap_only=t.session_merge_overlap_only,
        sessions_kept=t.session_state_kept and session,
        forget_when_empty=t.forget_clock_when_empty and per_key and fixed,
        live_wakeups=t.bytewax_live_wakeups and event and t.strategy is Strategy.EVENT_CLOCK and per_key and fixed,
        allowed=t.allowed_lateness,
        rule_window=t.lateness_rule is LatenessRule.WINDOW,
        refuse_every=t.refused_when is RefusedWhen.EVERY_WINDOW,
        kept_at_horizon=t.late_kept_at_horizon,
        idle_timeout=t.idle_timeout,
        idle_processing=t.idle_clock is TimeSource.PROCESSING,
        heartbeat=t.heartbeat,
        on_update=t.emit in (Emit.ON_UPDATE, Emit.ON_BATCH),  # on-batch: the same updates, coalesced after the run
        late_at_once=t.late_fires_per_element,
    )


RULE_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))

# The TimeConfig fields no decision depends on, and why. Every other field is read by :func:`derive`
# (tests/test_rules.py checks both).
NOT_RULES: dict[str, str] = {
    "late_policy": "what a refused event is called (dropped or side output); the tables name it",
    "panes": "what an emission carries, not when: core.panes cuts the windows table after any runner",
    "commit_interval": "which updates one emission coalesces, not any decision: core.coalesce groups the on-update "
                       "rows by it after any runner",
    "early_firings": "early panes are added, not decided: Beam's early firings change no drop, lateness or on-time "
                     "or late pane, so core.early adds them to the windows table after any runner",
    "early_aligned_to": "when the early panes fire, not any decision: core.early adds them after any runner",
    "continuous_event_time": "periodic panes are added, not decided: Flink's ContinuousEventTimeTrigger drops, "
                             "judges and fires at the end as EventTimeTrigger does, so core.continuous adds them",
    "continuous_processing_time": "the periodic panes replace the firings, not any drop or lateness: the "
                                  "WindowOperator drops and purges by the watermark as under EventTimeTrigger, so "
                                  "core.continuous_processing rewrites the windows table after any runner",
}


def as_ints(rules: Rules) -> dict[str, int]:
    """The rules as the kernel holds them: True/False as 1/0, off (None) as :data:`OFF`."""
    return {name: OFF if value is None else int(value)
            for name, value in ((name, getattr(rules, name)) for name in RULE_NAMES)}
