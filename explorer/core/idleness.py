"""idleTimeout, in the reference engine: a key silent this long, on the processing clock or the event clock,
has its open windows fire (IDLE_TIMEOUT), at a commit or at a pipeline heartbeat. The compiled evaluation
has the same part (``touch_key``, ``check_idle`` in ``core/compiled/firing.py``).
"""

from __future__ import annotations

import heapq

from explorer.config import TimeConfig, TimeSource
from explorer.core.rules import NONE


class KeyIdleness:
    def __init__(self, time: TimeConfig):
        self.timeout = time.idle_timeout
        self.on_processing_clock = time.idle_clock is TimeSource.PROCESSING
        self.heap: list[tuple[int, str]] = []  # (deadline, key), lazily: only a key's latest counts
        self.deadline: dict[str, int] = {}
        self.newest: dict[str, int] = {}  # per key, its newest time on the idle clock

    @property
    def on(self) -> bool:
        return self.timeout is not None

    def touch(self, key: str, arrival: int, t: int) -> None:
        """The key sent an element (arriving at ``arrival``, with event time ``t``)."""
        assert self.timeout is not None, "a key is touched only while idleness is on"
        newest = max(arrival if self.on_processing_clock else t, self.newest.get(key, NONE))
        self.newest[key] = newest
        self.deadline[key] = newest + self.timeout
        heapq.heappush(self.heap, (newest + self.timeout, key))

    def silent(self, now: int) -> list[str]:
        """Keys silent for the timeout by ``now`` (each once, until it sends again)."""
        out = []
        while self.heap and self.heap[0][0] <= now:
            deadline, key = heapq.heappop(self.heap)
            if self.deadline.get(key) == deadline:
                del self.deadline[key]
                out.append(key)
        return out

    def next_deadline(self) -> int | None:
        """When the next key falls silent on the processing clock (what a heartbeat waits for)."""
        if not (self.on and self.on_processing_clock):
            return None
        while self.heap and self.deadline.get(self.heap[0][1]) != self.heap[0][0]:
            heapq.heappop(self.heap)
        return self.heap[0][0] if self.heap else None
