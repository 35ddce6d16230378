"""A live Bytewax 0.21.1 dataflow on the real system clock: when does it wake a key to close its windows?

Run from Bytewax's venv (``make engines``): ``.engines/bytewax/bin/python dev/bytewax_live_clock.py ITEMS WAIT SIZE
[SLIDE]``, ITEMS a JSON list of ``[id, key, t, arrival]`` (seconds from the run's start), WAIT the EventClock's
``wait_for_system_duration`` and SIZE the tumbling window's length, in seconds (with SLIDE: sliding windows, one
every SLIDE). Prints one JSON object: the windows emitted (key, start, item ids, and when, in seconds of system
time from the start), and the late item ids.

Unlike the exported job (``explorer/export/bytewax_job.py``), which drives the clock by hand and wakes every key
before each item, nothing here is faked: the EventClock keeps its default ``now_getter`` (the system clock) and its
default ``to_system_utc`` (the window's close time, as a system time), and the source hands each item over when the
system clock reaches its arrival (``next_awake``, so the worker is free to wake keys in between). Timestamps are the
run's start plus ``t``, so an item with ``t − WAIT > arrival`` is stamped ahead of the system clock, as a device
whose clock runs fast stamps it.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.inputs import DynamicSource, StatelessSourcePartition
from bytewax.operators.windowing import EventClock, SlidingWindower, TumblingWindower, collect_window
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from bytewax.testing import run_main

START = datetime.now(timezone.utc) + timedelta(seconds=1)  # the items' timeline: the source begins there


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


class _Paced(StatelessSourcePartition):
    """Each item once the system clock reaches its arrival; until then the worker runs other activations."""

    def __init__(self, items):
        self.items = sorted(items, key=lambda item: item[3])

    def next_batch(self):
        if not self.items:
            raise StopIteration()
        return [self.items.pop(0)]

    def next_awake(self):
        return at(self.items[0][3]) if self.items else None


class PacedSource(DynamicSource):
    def __init__(self, items):
        self.items = items

    def build(self, step_id, worker_index, worker_count):
        return _Paced(self.items)


class _Collect(StatelessSinkPartition):
    def __init__(self, out):
        self.out = out

    def write_batch(self, items):
        now = (datetime.now(timezone.utc) - START).total_seconds()
        self.out.extend((item, now) for item in items)


class Collect(DynamicSink):
    def __init__(self, out):
        self.out = out

    def build(self, step_id, worker_index, worker_count):
        return _Collect(self.out)


def main(items, wait: float, size: float, slide: float | None = None) -> dict:
    flow = Dataflow("live_clock")
    keyed = op.key_on("key", op.input("items", flow, PacedSource(items)), lambda item: item[1])
    clock = EventClock(lambda item: at(item[2]), wait_for_system_duration=timedelta(seconds=wait))
    windower = (TumblingWindower(length=timedelta(seconds=size), align_to=START) if slide is None else
                SlidingWindower(length=timedelta(seconds=size), offset=timedelta(seconds=slide), align_to=START))
    windows = collect_window("windows", keyed, clock, windower)
    emitted, late, meta = [], [], []
    op.output("emitted", windows.down, Collect(emitted))
    op.output("late", windows.late, Collect(late))
    op.output("meta", windows.meta, Collect(meta))
    run_main(flow)
    starts = {(key, window_id): (m.open_time - START).total_seconds() for (key, (window_id, m)), _ in meta}
    return {"windows": [{"key": key, "start": starts[key, window_id], "ids": sorted(i[0] for i in got), "at": now}
                        for (key, (window_id, got)), now in emitted],
            "late": sorted(item[0] for (_key, (_window_id, item)), _now in late)}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]), *map(float, sys.argv[2:5]))))
