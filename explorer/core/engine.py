"""The reference engine: one pass over the micro-batches, exactly as the rules are written.

It is composed of the parts every engine has, each in its own module and mirrored by the compiled
evaluation (``core/compiled/``):
  * the watermark generator (``watermarks``): per-batch MIN/MAX, bounded out-of-orderness, the event clock,
    the processing clock; the partition merge and Flink's ``withIdleness`` around it; Spark's backlog schedule;
  * the window assigner (``windows``): fixed windows, sessions that merge; the lateness rule and late policy;
  * idleness per key (``idleness``): an idle timeout on either clock.

Per batch:
  1. pipeline heartbeats that fall before the batch (the processing clock moves, idle keys flush); withIdleness's
     periodic emits in the silent intervals (a partition going idle moves the merge); the event clock's windows
     that close between batches;
  2. each event is checked against the effective watermark *before* the batch (bounded has already moved it
     for this element, as 003's code does), then admitted to its window(s) or refused;
  3. at commit MIN/MAX move the raw watermark to the batch's smallest/largest event time (never back), and
     withIdleness checks its partitions (the periodic emit);
  4. late updates re-emit their window, windows whose end ≤ effective watermark fire, idle keys flush,
     windows past end + allowed lateness leave the state.
With emit on-update (Kafka Streams' default) step 2 emits each window an event joins, at once, and closing,
re-emitting or flushing a window emits nothing more.
After the last batch the stream falls silent: heartbeats keep the processing clock going until nothing
more can fire; whatever is still open is reported as END_OF_STREAM.

The engine is deliberately plain: it is the specification that the compiled evaluation and Spark are
tested against. It is driven one batch at a time (:meth:`Engine.step`, then :meth:`Engine.finish`) and holds
no reference to the stream, so its whole state is plain data: the Spark runner keeps it in Spark's state store
as JSON (``snapshot``).
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.config import RunConfig
from explorer.core.idleness import KeyIdleness
from explorer.core.records import Assignment, BatchRows, Emission, EventDecision, StepOutput, TracePoint
from explorer.core.result import Reason
from explorer.core.rules import NONE, derive, effective_watermark
from explorer.core.wakeups import LiveWakeups
from explorer.core.watermarks import (GLOBAL, CommitSchedule, EventClock, ProcessingClock, advances, generator_for,
                                      merge_for)
from explorer.core.windows import Admission, Lateness, Replaced, Window, WindowStore, assigner_for


def separable_by_key(config: RunConfig) -> bool:
    """Whether keys never influence each other, so each key's state can live (and run) apart: one
    watermark per key on event time, no idle timeout (its heap and heartbeats span keys) and the live
    schedule (a backlog applies every key's pending watermark at every batch, touched or not)."""
    rules = derive(config)
    return (rules.per_key and rules.idle_timeout is None and not rules.backlog and not rules.event_clock
            and rules.source_idle_timeout is None)


def _known(value: int) -> int | None:
    """A time for the records: "no watermark yet" becomes None."""
    return None if value < NONE // 2 else value


class Engine:
    """The semantic state of one run (or of one key, when :func:`separable_by_key`)."""

    def __init__(self, config: RunConfig, partitions: list[str]):
        self.config = config
        time = self.time = config.time
        rules = self.rules = derive(config)  # the switches below, derived once for every runner (core.rules)
        self.processing = rules.processing
        self.one_watermark = rules.one_watermark  # the processing clock, or the scripted watermark rows
        self.clock = ProcessingClock()  # last commit or heartbeat
        self.generator = generator_for(time, self.clock)
        self.schedule = CommitSchedule(rules.schedule)
        self.merge = merge_for(time, self.generator, partitions, rules.source_idle_every) if rules.merged else None
        self.per_key = rules.per_key
        # Kafka Streams: each partition its own watermark; a key's windows close by its partition's
        self.per_partition = rules.per_partition
        self.partition_of: dict[str, str] = {}  # key → its partition (one each: core.check_inputs)
        # Bytewax: a key whose windows have all fired loses its clock (fixed windows; sessions keep theirs)
        self.forget_when_empty = rules.forget_when_empty
        self.wakeups = LiveWakeups() if rules.live_wakeups else None  # Bytewax on the system clock (core.wakeups)
        self.on_update = rules.on_update
        self.late_at_once = rules.late_at_once
        self.idleness = KeyIdleness(time)
        self.lateness = Lateness(time)
        self.store = WindowStore(time.allowed_lateness, self.lateness.within_horizon, self.group_of)
        self.assigner = assigner_for(config.window, time, self.store, self.lateness)
        self.max_seen: dict[str, int] = {}  # per group, for 003's event-time latency
        self.newest = NONE  # newest event time of the whole stream (event-clock idleness)
        self.out = StepOutput()
        self.batch_no = 0

    # --- whose watermark ----------------------------------------------------------------------------
    def source_of(self, key: str, partition: str) -> str:
        if self.per_key:
            return key
        return partition if self.merge or self.per_partition else GLOBAL

    def group_of(self, key: str) -> str:
        """Windows of one group share the watermark that closes them: per key, per partition, or all of them."""
        if self.per_partition:
            return self.partition_of[key]
        return key if self.per_key else GLOBAL

    def group_raw(self, group: str) -> int:
        """The raw watermark that closes the group's windows."""
        return self.merge.mark() if self.merge else self.generator.mark(group)

    def effective(self, raw: int) -> int:
        return effective_watermark(raw, self.rules.delay)

    # --- records -----------------------------------------------------------------------------------
    def emit(self, w: Window, reason: Reason, at: int, group_raw: int) -> None:
        """Emit the window's result. On-update, only an UPDATE emits, carrying the record just taken (the
        window's last); a session's close is kept apart (``settled``) for who ended up where."""
        if self.on_update and reason is not Reason.UPDATE:
            if self.rules.session:
                self.out.settled.append(self._emission(w, reason, at, group_raw, tuple(w.ids)))
            return
        w.revision += 1
        # an UPDATE carries the record just taken; a Kafka Streams sliding window's, its whole aggregate (copied
        # from another window or overwritten, it is not its updates' records)
        ids = (w.ids[-1],) if reason is Reason.UPDATE and not w.whole else tuple(w.ids)
        self.out.emissions.append(self._emission(w, reason, at, group_raw, ids))

    def _emission(self, w: Window, reason: Reason, at: int, group_raw: int, ids: tuple[str, ...]) -> Emission:
        max_seen = self.max_seen.get(self.group_of(w.key), NONE)
        return Emission(w.key, w.start, w.end, len(w.ids), ids, self.batch_no, at, _known(group_raw),
                        _known(self.effective(group_raw)), reason.value, w.revision,
                        max_seen - w.end if max_seen != NONE else None, at - w.end)

    def _tombstone(self, old: Replaced, at: int, group_raw: int) -> Emission:
        """Kafka Streams' null for a session a record replaced: its old span, no result."""
        max_seen = self.max_seen.get(self.group_of(old.key), NONE)
        return Emission(old.key, old.start, old.end, 0, (), self.batch_no, at, _known(group_raw),
                        _known(self.effective(group_raw)), Reason.TOMBSTONE.value, old.revision,
                        max_seen - old.end if max_seen != NONE else None, at - old.end)

    def fire(self, w: Window, reason: Reason, at: int, group_raw: int) -> None:
        """A window's first firing (or a firing after an idle flush re-opened it). One that only late elements
        filled, after the watermark had passed its end, fires because of them: LATE_UPDATE, at revision 1."""
        if reason is Reason.WATERMARK and w.late_only:
            reason = Reason.LATE_UPDATE
        w.fired = True
        self.emit(w, reason, at, group_raw)
        self.store.push_purge(w)
        if self.forget_when_empty and all(other.fired for other in self.store.by_key[w.key].values()):
            for other in list(self.store.by_key[w.key].values()):  # the key's whole state goes, clock included
                self.store.remove(other)
            self.generator.forget(w.key)
            if self.wakeups:
                self.wakeups.forget(w.key)

    def record_trace(self, sources: Iterable[str], at: int, kind: str) -> None:
        for source in sorted(sources):
            raw = self.generator.mark(source)
            self.out.trace.append(TracePoint(self.batch_no, at, source, _known(raw), _known(self.effective(raw)), kind))
        if self.merge:
            raw = self.merge.mark()
            self.out.trace.append(TracePoint(self.batch_no, at, GLOBAL, _known(raw), _known(self.effective(raw)), kind))

    # --- time passing ------------------------------------------------------------------------------
    def fire_ready(self, at: int, groups: Iterable[str]) -> None:
        for group in groups:
            if self.store.fire_heap.get(group):
                raw = self.group_raw(group)
                for w in self.store.ready(group, self.effective(raw)):
                    self.fire(w, Reason.WATERMARK, at, raw)

    def purge(self, groups: Iterable[str]) -> None:
        """Drop the fired windows past their end + allowed lateness; none with ``sessions_kept`` (Beam's Python
        runner keeps every fired session, so a later element can still merge into it)."""
        if self.rules.sessions_kept:
            return
        for group in groups:
            if self.store.purge_heap.get(group):
                self.store.purge(group, self.effective(self.group_raw(group)))

    def check_idle(self, now: int, at: int) -> None:
        """Flush the open windows of every key silent for the idle timeout by ``now``."""
        for key in self.idleness.silent(now):
            raw = self.group_raw(self.group_of(key))
            for w in sorted(self.store.by_key.get(key, {}).values(), key=lambda w: (w.start, w.end)):
                if not w.fired:
                    self.fire(w, Reason.IDLE_TIMEOUT, at, raw)

    def event_clock_passes(self, until: int) -> None:
        """Between batches an event clock keeps advancing: each window closes at the exact processing time its
        watermark reaches the end (Bytewax wakes the operator then), stamped with the batch before."""
        clock = self.generator
        assert isinstance(clock, EventClock), "only the event clock passes between batches"
        if self.wakeups:
            self._live_passes(clock, self.wakeups, until)
            return
        due = []
        for group, heap in self.store.fire_heap.items():
            if self.merge or clock.marks.get(group, NONE) == NONE:
                continue
            for end, _, w in heap:
                if w.alive and not w.fired and w.end == end:
                    at = clock.reaches(group, end + self.time.watermark_delay)
                    # woken before the next item, but one due exactly when it arrives closes after it is taken:
                    # Bytewax's runtime takes an activation's items before its notifications (that item then
                    # keeps the key's state, and its clock, alive)
                    if at < until:
                        due.append((at, w.key, w.start, w))
        for at, _, _, w in sorted(due, key=lambda d: d[:3]):
            clock.now = at
            self.fire_ready(at, [self.group_of(w.key)])
        clock.now = until

    def _live_passes(self, clock: EventClock, wakeups: LiveWakeups, until: int) -> None:
        """Bytewax on the system clock: each key runs only at its own next run (core.wakeups), before ``until``,
        the earliest first; what its watermark has reached then fires."""
        delay = self.time.watermark_delay
        while True:
            runs = [(at, key) for key in list(wakeups.flushed)
                    if (at := wakeups.next_run(key, self.store.by_key.get(key, {}).values(), clock, delay)) is not None
                    and at < until]
            if not runs:
                break
            at, key = min(runs)
            clock.now = at
            self.fire_ready(at, [key])
            self._ran(wakeups, key)
        clock.now = until

    def _ran(self, wakeups: LiveWakeups, key: str) -> None:
        if self.generator.marks.get(key, NONE) != NONE:  # (not when it has just been forgotten)
            wakeups.ran(key, self.effective(self.group_raw(key)))

    def next_deadline(self) -> int | None:
        """The earliest processing time at which a heartbeat could change something."""
        candidates = [self.idleness.next_deadline()]
        if self.processing:
            end = self.store.first_due(GLOBAL)
            candidates.append(None if end is None else end + self.time.watermark_delay)
        known = [c for c in candidates if c is not None]
        return min(known) if known else None

    def heartbeats(self, before: int | None) -> None:
        """Run the pipeline heartbeats that tick (on multiples of the interval) before ``before``."""
        every = self.time.heartbeat
        while (deadline := self.next_deadline()) is not None:
            tick = -(-deadline // every) * every
            if self.clock.now != NONE:
                tick = max(tick, (self.clock.now // every + 1) * every)
            if before is not None and tick >= before:
                return
            self.clock.now = tick
            if self.processing:
                self.fire_ready(tick, [GLOBAL])
                self.record_trace([GLOBAL], tick, "heartbeat")
            if self.idleness.on_processing_clock:
                self.check_idle(tick, tick)
            self.purge([GLOBAL] if self.processing else [])

    def silent_checks(self, until: int) -> None:
        """withIdleness's periodic emits in the silent intervals before the next batch: a partition going idle there
        moves the merged watermark before the batch's records meet it, and the trace shows the move there (the
        windows it fires are stamped with that emit's time)."""
        while self.merge and (tick := self.merge.next_silent_check(until)) is not None:
            before = self.merge.mark()
            self.merge.check(tick)
            if self.merge.mark() != before:
                self.record_trace((), tick, "idle check")
            groups = list(self.store.fire_heap)
            self.fire_ready(tick, groups)
            self.purge(groups)

    # --- the run, one batch at a time -------------------------------------------------------------
    def drain(self) -> StepOutput:
        out, self.out = self.out, StepOutput()
        return out

    def step(self, batch: BatchRows) -> StepOutput:
        """Admit one arrival batch and commit it; returns what it decided."""
        event_clock = self.generator if isinstance(self.generator, EventClock) else None
        commit = int(batch.commit)
        if self.batch_no > 0:
            self.heartbeats(before=batch.opens)
            self.silent_checks(until=batch.opens)
            if event_clock:
                self.event_clock_passes(until=batch.opens)
        self.batch_no = batch.number
        self.generator.on_batch(batch.scripted)
        batch_min: dict[str, int] = {}
        batch_max: dict[str, int] = {}
        touched_groups: set[str] = set()
        dirty: list[Window] = []
        times = batch.arrival_time if self.processing else batch.event_time
        for j in range(len(batch.rows)):
            row, t, key, arrival = int(batch.rows[j]), int(times[j]), batch.keys[j], int(batch.arrival_time[j])
            source = self.source_of(key, batch.partitions[j])
            if self.per_partition:
                self.partition_of.setdefault(key, source)
            group = self.group_of(key)
            touched_groups.add(group)
            if self.merge:
                self.merge.observe(batch.partitions[j])
            if t > self.max_seen.get(group, NONE):
                self.max_seen[group] = t
            self.generator.on_element(source, t)
            if event_clock:
                event_clock.now = arrival
            if source not in batch_min or t < batch_min[source]:
                batch_min[source] = t
            if source not in batch_max or t > batch_max[source]:
                batch_max[source] = t
            raw = self.group_raw(group)
            eff = self.effective(raw)
            admission = self.assigner.admit(t, key, batch.ids[j], eff)
            self.generator.on_admitted(source, t, eff)
            if self.on_update:
                for old in admission.replaced:
                    self.out.emissions.append(self._tombstone(old, commit, raw))
                for w in [*(w for w, _ in admission.admitted), *admission.forwarded]:
                    self.emit(w, Reason.UPDATE, commit, raw)
            if self.late_at_once:
                self._fire_on_element(admission, arrival, raw, eff)
            self.out.events.append(EventDecision(row, self.lateness.status(admission), _known(raw)))
            self._record_assignments(row, admission)
            if self.wakeups and admission.admitted:
                self.wakeups.taken(key, t)
            dirty.extend(w for w, _ in admission.admitted if w.late_dirty)
            self.newest = max(self.newest, t)
            if self.idleness.on:
                self.idleness.touch(key, arrival, t)
        self._commit(commit, batch_min, batch_max, touched_groups, dirty)
        return self.drain()

    def _fire_on_element(self, admission: Admission, at: int, raw: int, eff: int) -> None:
        """Flink's EventTimeTrigger.onElement: a window the watermark has already passed fires as the element
        lands in it (an emitted one re-fires, one nobody fired fires for the first time), so two late elements
        between the same two watermarks make two firings, not one at the commit."""
        for w, _ in admission.admitted:
            if w.late_dirty:
                w.late_dirty = False
                self.emit(w, Reason.LATE_UPDATE, at, raw)
            elif not w.fired and w.end <= eff:
                self.fire(w, Reason.WATERMARK, at, raw)

    def _record_assignments(self, row: int, admission: Admission) -> None:
        session = self.rules.session
        spans = {(None, None) if session else (w.start, w.end): late for w, late in admission.admitted}
        self.out.assignments.extend(Assignment(row, start, end, late, True) for (start, end), late in sorted(spans.items()))
        self.out.assignments.extend(Assignment(row, start, end, True, False) for start, end in sorted(admission.refused))

    def _commit(self, commit: int, batch_min: dict[str, int], batch_max: dict[str, int], touched_groups: set[str],
                dirty: list[Window]) -> None:
        self.clock.now = max(self.clock.now, commit)
        if isinstance(self.generator, EventClock):
            self.generator.now = commit
        moved: set[str] = set()
        if not self.processing:
            candidates = self.generator.candidates(batch_min, batch_max)
            moved = set(candidates)
            self.generator.advance(self.schedule.take(candidates))
        if self.merge:  # withIdleness: the periodic emit, before the merged watermark is read
            self.merge.check(commit)
        for w in dirty:
            if w.late_dirty and w.alive:
                w.late_dirty = False
                self.emit(w, Reason.LATE_UPDATE, commit, self.group_raw(self.group_of(w.key)))
        groups = list(self.store.fire_heap) if (self.merge or self.one_watermark) else touched_groups
        self.fire_ready(commit, groups)
        if self.wakeups:
            for group in touched_groups:
                self._ran(self.wakeups, group)
        if self.idleness.on:
            self.check_idle(commit if self.idleness.on_processing_clock else self.newest, commit)
        self.purge(groups)
        self.record_trace(set(batch_min) | moved if not self.processing else {GLOBAL}, commit, "commit")
        self.out.open_windows = self.store.alive_count

    def finish(self, last_batch: int, clock: int) -> StepOutput:
        """The input ran out after batch ``last_batch``, committed at ``clock``: the backlog's no-data
        micro-batch (only when the pending watermark moves past the one in effect, as Spark runs it), then heartbeats
        until nothing more can fire, then END_OF_STREAM for what is left.
        (A per-key state may not have seen the last batches; the two arguments bring it up to date.)"""
        self.batch_no = max(self.batch_no, last_batch)
        self.clock.now = max(self.clock.now, clock)
        pending = self.schedule.flush()
        if pending:
            closing = [GLOBAL] if self.merge else sorted(pending)  # the groups the pending sources close
            before = [self.effective(self.group_raw(g)) for g in closing]
            self.generator.advance(pending)
            if any(advances(self.effective(self.group_raw(g)), was) for g, was in zip(closing, before)):
                self.batch_no += 1
                groups = list(self.store.fire_heap)
                self.fire_ready(self.clock.now, groups)
                self.purge(groups)
                self.record_trace(set(pending), self.clock.now, "no-data batch")
        self.heartbeats(before=None)
        for w in sorted(self.store.waiting(), key=lambda w: (w.key, w.start, w.end)):
            self.fire(w, Reason.END_OF_STREAM, self.clock.now, self.group_raw(self.group_of(w.key)))
        return self.drain()
