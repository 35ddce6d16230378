"""Where watermarks come from, in the reference engine: one generator per strategy, the partition merge with
Flink's ``withIdleness`` wrapped around it, and Spark's backlog schedule. The compiled evaluation has the
same parts as functions (``core/compiled/watermarks.py``).

A *source* is whoever owns a raw watermark: a key (one watermark per key), a partition (one per partition,
then merged) or ``GLOBAL``. Raw watermarks never move back.
"""

from __future__ import annotations

from explorer.config import Schedule, Scope, Strategy, TimeConfig, TimeSource
from explorer.core.rules import NONE, first_idle_check, idle_at_check
from explorer.timeutil import truncate_to_unit

GLOBAL = "*"


class Generator:
    """Raw watermarks per source. Subclasses say when they move: per element, after an admission, or with
    the batch's event times at commit. Event times enter a watermark in whole ``unit``s (``in_unit``)."""

    def __init__(self, bound: int, unit: int = 1):
        self.bound = bound
        self.unit = unit
        self.marks: dict[str, int] = {}

    def in_unit(self, t: int) -> int:
        """An event time as the watermark reads it: Spark's ms watermark reads t / 1000 (truncated)."""
        return truncate_to_unit(t, self.unit)

    def mark(self, source: str) -> int:
        return self.marks.get(source, NONE)

    def on_element(self, source: str, t: int) -> None:
        """An element with event time t arrives (before it is admitted)."""

    def on_admitted(self, source: str, t: int, eff: int) -> None:
        """An element was checked against effective watermark ``eff``."""

    def candidates(self, batch_min: dict[str, int], batch_max: dict[str, int]) -> dict[str, int]:
        """Where the batch's commit moves each source (before the schedule delays it)."""
        return {}

    def on_batch(self, scripted: int | None) -> None:
        """A batch begins; ``scripted`` is the largest scripted watermark it holds (None: none)."""

    def forget(self, source: str) -> None:
        """The source's state is gone (Bytewax discarding an emptied key): no watermark until it is set again."""
        self.marks.pop(source, None)

    def advance(self, candidates: dict[str, int]) -> None:
        for source, value in candidates.items():
            if value > self.marks.get(source, NONE):
                self.marks[source] = value


class PerBatch(Generator):
    """VoltSP's MIN_EVENT_TIME / MAX_EVENT_TIME: at commit, the batch's smallest (or largest) event time."""

    def __init__(self, bound: int, unit: int, smallest: bool):
        super().__init__(bound, unit)
        self.smallest = smallest

    def candidates(self, batch_min: dict[str, int], batch_max: dict[str, int]) -> dict[str, int]:
        return {source: self.in_unit(t) for source, t in (batch_min if self.smallest else batch_max).items()}


class BoundedOutOfOrderness(Generator):
    """003's T = t_max − L and Flink's forBoundedOutOfOrderness: moves with every element."""

    def on_element(self, source: str, t: int) -> None:
        mark = self.in_unit(t) - self.bound
        if mark > self.marks.get(source, NONE):
            self.marks[source] = mark


class EventClock(Generator):
    """Bytewax's EventClock: a timely item (t ≥ the effective watermark it met) whose t − L is ahead of the
    mark resets it to t − L; in between the mark moves with processing time (``now``)."""

    def __init__(self, bound: int, unit: int):
        super().__init__(bound, unit)
        self.set_at: dict[str, int] = {}  # processing time when each source's mark was set
        self.now = NONE  # the processing time marks are read at

    def mark(self, source: str) -> int:
        raw = self.marks.get(source, NONE)
        return raw if raw == NONE else raw + (self.now - self.set_at[source])

    def on_admitted(self, source: str, t: int, eff: int) -> None:
        mark = self.in_unit(t) - self.bound
        if t >= eff and mark > self.mark(source):
            self.marks[source] = mark
            self.set_at[source] = self.now

    def reaches(self, source: str, value: int) -> int:
        """The processing time at which the source's moving mark reaches ``value``."""
        return self.set_at[source] + (value - self.marks[source])


class Scripted(Generator):
    """The input's watermark rows: at commit, the largest the batch holds (one watermark for the stream)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.batch_mark: int | None = None

    def on_batch(self, scripted: int | None) -> None:
        self.batch_mark = scripted

    def candidates(self, batch_min: dict[str, int], batch_max: dict[str, int]) -> dict[str, int]:
        return {} if self.batch_mark is None else {GLOBAL: self.batch_mark}


class ProcessingClock(Generator):
    """Processing time: the watermark is the processing clock itself (last commit or heartbeat)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.now = NONE

    def mark(self, source: str) -> int:
        return self.now


def generator_for(time: TimeConfig, clock: ProcessingClock) -> Generator:
    """The generator a TimeConfig asks for; under processing time it is the processing clock itself."""
    if time.time_source is TimeSource.PROCESSING:
        return clock
    if time.strategy is Strategy.BOUNDED:
        return BoundedOutOfOrderness(time.bound, time.watermark_unit)
    if time.strategy is Strategy.EVENT_CLOCK:
        return EventClock(time.bound, time.watermark_unit)
    if time.strategy is Strategy.SCRIPTED:
        return Scripted()
    return PerBatch(time.bound, time.watermark_unit, smallest=time.strategy is Strategy.MIN)


def advances(effective_after: int, effective_before: int) -> bool:
    """Whether Spark runs its no-data micro-batch at the end of a backlog: only when the new watermark is past
    the one the last micro-batch evicted with (``shouldRunAnotherBatch``), its watermark starting at 0."""
    return effective_after != NONE and effective_after > (0 if effective_before == NONE else effective_before)


class CommitSchedule:
    """When a commit's candidates take effect: at once (live), or one micro-batch later (Spark replaying a
    backlog with availableNow: micro-batch N uses the watermark of the batches before it)."""

    def __init__(self, schedule: Schedule):
        self.delayed = schedule is Schedule.BACKLOG
        self.pending: dict[str, int] = {}

    def take(self, candidates: dict[str, int]) -> dict[str, int]:
        if not self.delayed:
            return candidates
        due, self.pending = self.pending, candidates
        return due

    def flush(self) -> dict[str, int]:
        """The input ran out: what is still pending takes effect in one more (no-data) micro-batch."""
        due, self.pending = self.pending, {}
        return due


class PartitionMerge:
    """One watermark per partition, merged by min (Flink, Storm, 003 §4) or max (Spark's
    multipleWatermarkPolicy=max)."""

    def __init__(self, generator: Generator, partitions: list[str], scope: Scope):
        self.generator = generator
        self.partitions = sorted(partitions)
        self.pick = min if scope is Scope.PARTITION_MIN else max

    def mark(self) -> int:
        return self.pick(self.generator.mark(p) for p in self.partitions)

    def observe(self, partition: str) -> None:
        """A record arrived from ``partition`` (only idleness cares)."""

    def check(self, now: int) -> None:
        """The periodic emit at a commit (only idleness cares)."""

    def next_silent_check(self, until: int) -> int | None:
        """The next periodic emit between commits, up to ``until``, that changes something (only idleness has one)."""
        return None


class WithIdleness(PartitionMerge):
    """Flink's ``withIdleness`` as a Kafka source runs it (2.3.0): each partition's generator wrapped in a
    ``WatermarksWithIdleness``, merged by the source's ``WatermarkOutputMultiplexer``. Everything happens on the
    periodic emit (a commit, and under ``--batches interval:T`` every interval of arrival time, the silent ones
    too), never on a record:

    - a partition's ``IdlenessTimer``: a record since the last emit stops its inactivity clock; the first emit
      after that sees none and starts the clock there; a later one declares it idle once strictly more than the
      timeout has passed (``rules.idle_at_check``). So a partition goes idle more than one and at most three
      intervals past the timeout after its last record (Flink's documented worst case), not the timeout after it;
    - an idle partition says so once and leaves the merge; its next record makes it emit again, so it rejoins at
      the next periodic emit, not at the record;
    - the merge: the min (max) over the partitions not idle, never going back; when every one is idle, the
      highest any of them reached (``CombinedWatermarkStatus``, FLINK-38454: all idle flushes the max, whatever
      the order they went idle in).

    The rule this replaces counted a partition idle the timeout after its last arrival, checked at commits only,
    and held the watermark when every partition was idle: it declared idleness up to two intervals early and late
    after a silent stretch, and on skewed-partitions (tumbling 10 s, delay 2 s, 1 s timeout) refused 566 events
    where Flink refuses 543."""

    def __init__(self, generator: Generator, partitions: list[str], scope: Scope, timeout: int, every: int | None):
        super().__init__(generator, partitions, scope)
        self.timeout = timeout
        self.every = every  # the periodic emits between commits (the auto-watermark interval), or None: none
        self.idle: set[str] = set()
        self.active: set[str] = set()  # a record since the last periodic emit (IdlenessTimer.activity)
        self.reset: set[str] = set(self.partitions)  # no inactivity clock: the next emit without a record starts it
        self.quiet_from: dict[str, int] = {}  # each running clock's start (startOfInactivityNanos)
        self.checked = NONE  # the last periodic emit
        self.floor = NONE  # the merged watermark so far

    def mark(self) -> int:
        marks = [self.generator.mark(p) for p in self.partitions if p not in self.idle]
        if not marks:  # every partition idle: the highest any reached
            marks = [max((self.generator.mark(p) for p in self.partitions), default=NONE)]
        self.floor = max(self.floor, self.pick(marks))  # what was merged is never taken back
        return self.floor

    def observe(self, partition: str) -> None:
        self.active.add(partition)

    def check(self, now: int) -> None:
        for p in self.reset - self.active:
            self.quiet_from[p] = now
        for p in self.active:
            self.quiet_from.pop(p, None)
            self.idle.discard(p)
        self.reset, self.active = self.active, set()
        self.idle |= {p for p, start in self.quiet_from.items() if idle_at_check(start, self.timeout, now)}
        self.checked = now
        self.mark()  # the multiplexer merges at every periodic emit

    def next_silent_check(self, until: int) -> int | None:
        """Only two kinds of emit between commits change anything (no record comes then): the first, which starts the
        clocks of the partitions the commit saw a record from, and those that declare a partition idle."""
        if self.every is None:
            return None
        tick = self.checked + self.every
        if not self.reset:
            due = [first_idle_check(start, self.timeout, self.every) for p, start in self.quiet_from.items()
                   if p not in self.idle]
            if not due:
                return None
            tick = max(tick, min(due))
        return tick if tick <= until else None


def merge_for(time: TimeConfig, generator: Generator, partitions: list[str], every: int | None) -> PartitionMerge:
    """The partition merge, with withIdleness when ``--source-idle-timeout`` is set (``every``: its periodic
    emits between commits, ``Rules.source_idle_every``)."""
    if time.source_idle_timeout is None:
        return PartitionMerge(generator, partitions, time.scope)
    return WithIdleness(generator, partitions, time.scope, time.source_idle_timeout, every)
