"""Bytewax's live wake-ups (``bytewax_live_wakeups``), in the reference engine; the compiled kernel has the same
rule in ``core/compiled/firing.py`` (``_due``).

A live Bytewax 0.21.1 dataflow on the system clock (EventClock's default ``to_system_utc``, the identity: an
event time read as a system time) runs a key's window logic only when an item of the key comes, or when the
system clock reaches the key's ``notify_at`` (``_WindowLogic.notify_at``), and again at every activation while
it stays there. ``notify_at`` is the earlier of:

- the close time of the key's first open window in the windower, which holds only *released* items: an item
  is held back in the key's queue until its watermark reaches its timestamp, then inserted (``_flush_queue``);
- the timestamp of the first item of that queue, in arrival order (``self.queue[0]``).

Both are functions of the watermark at the key's last run, ``flushed`` here: items with timestamps ≤ it are
released, a window is open in the windower once its earliest item is. So the key next runs at the earlier of
the two, or, when that system time has passed, as soon as its watermark reaches the next end or the first
held item (``max(notify, reaches(next change))``). A key stamped behind the system clock is thus run exactly
as its watermark reaches each end (the rule without this option); one stamped ahead of it is not, and keeps
its state (clock included) until the clock gets there or its next item comes.
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.core.watermarks import EventClock
from explorer.core.windows import Window


class LiveWakeups:
    """Per key: the items it took, in arrival order, and the effective watermark at its last run."""

    def __init__(self) -> None:
        self.held: dict[str, list[int]] = {}  # timestamps; those ≤ flushed are released (dropped lazily, in order)
        self.flushed: dict[str, int] = {}

    def taken(self, key: str, t: int) -> None:
        self.held.setdefault(key, []).append(t)

    def ran(self, key: str, eff: int) -> None:
        """The key's logic ran with effective watermark ``eff``: its items up to there are released."""
        self.flushed[key] = eff

    def forget(self, key: str) -> None:
        """Bytewax discarded the key's state (its queue is empty then: every window has fired)."""
        self.held.pop(key, None)
        self.flushed.pop(key, None)

    def next_run(self, key: str, windows: Iterable[Window], clock: EventClock, delay: int) -> int | None:
        """The processing time the key's logic next runs without an item of its own (None: never)."""
        flushed = self.flushed.get(key)
        if flushed is None:
            return None
        held = self.held.get(key, [])
        while held and held[0] <= flushed:
            held.pop(0)
        waiting = [w for w in windows if not w.fired]
        first_held = held[:1]
        notify = min([w.end for w in waiting if w.min_t <= flushed] + first_held, default=None)
        if notify is None:
            return None
        change = min([w.end for w in waiting] + first_held)
        return max(notify, clock.reaches(key, change + delay))
