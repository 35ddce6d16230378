"""The Bytewax export: a whole dataflow that replays the user's file through ``collect_window`` with the tuned
``EventClock`` and windower, and writes what Bytewax emitted and what it called late.

Why a replay with a driven clock: an ``EventClock`` advances its watermark with system time since the newest item,
so a dataflow fed a file at full speed would see no time pass, and one fed live would depend on the machine's
pace. The program sets the clock (``now_getter``, a ``TimeTestingGetter``) to each item's arrival time just before
the item reaches the window operator, one item per batch, and wakes every key just before each arrival (an item of
a key of its own, 1 µs earlier, with ``to_system_utc`` in the past so that Bytewax notifies every key that has a
window due): the preset's cadence, one item at a time with every key's due windows closed before the next is
taken. Windows still open at the end of input close there (Bytewax's ``on_eof``).

Output contract (docs/export.md): ``python job.py EVENTS OUTDIR`` (in a venv with bytewax 0.21.1 and pandas)
writes ``OUTDIR/emissions.jsonl`` (``key``, ``window_start``, ``window_end`` in µs, ``ids``, ``seq``: Bytewax's
order) and ``OUTDIR/refused.jsonl`` (``id``, ``key``: the ``late`` stream).
"""

from __future__ import annotations

from explorer.config import RunConfig, WindowKind
from explorer.core.rules import derive
from explorer.export.common import ExportSource, unsupported
from explorer.export.replay import program_head, source_settings
from explorer.timeutil import format_duration


def bytewax_job(config: RunConfig, source: ExportSource) -> str:
    """The program's text (see the module's docstring)."""
    window = config.window
    if window.kind is WindowKind.SESSION:
        windower = "SessionWindower(gap=us(GAP_US))"
        shape = {"GAP_US": window.gap}
    elif window.kind is WindowKind.SLIDING:
        windower = "SlidingWindower(length=us(SIZE_US), offset=us(SLIDE_US), align_to=EPOCH + us(OFFSET_US))"
        shape = {"SIZE_US": window.size, "SLIDE_US": window.slide, "OFFSET_US": window.offset}
    else:
        windower = "TumblingWindower(length=us(SIZE_US), align_to=EPOCH + us(OFFSET_US))"
        shape = {"SIZE_US": window.size, "OFFSET_US": window.offset}
    wait = config.time.bound + config.time.delay
    settings = source_settings(source) | {"WAIT_US": wait} | shape
    notes = unsupported(config, "Bytewax", {"side_output", "event_clock", "scope", "timestamp_rule", "offset",
                                            "live_wakeups"})
    if derive(config).live_wakeups:
        notes.append("--bytewax-live-wakeups: this program drives the EventClock by hand and wakes every key before "
                     "each item, so it closes windows as the option's off; deployed on the system clock (drop "
                     "now_getter and to_system_utc, see To deploy) Bytewax wakes keys as predicted here")
    header = [f"# NOTE: {n}" for n in notes]
    header.append("# cadence: one item at a time, every key woken before each arrival")
    header.append(f"# clock: EventClock(wait_for_system_duration={format_duration(wait)}); window: {window}")
    body = _PROGRAM.replace("{WINDOWER}", windower).replace("{SETTINGS}", program_head(settings))
    return "\n".join(header) + "\n" + body


_PROGRAM = '''"""A Bytewax dataflow exported by the Watermark Explorer.

    python job.py EVENTS OUTDIR

replays EVENTS in arrival order through collect_window with the EventClock and windower below, its clock driven by
each event's arrival time, and writes every window Bytewax emits to OUTDIR/emissions.jsonl (key, window_start,
window_end in µs, ids, seq), every item it calls late to OUTDIR/refused.jsonl (id, key), and where its time went
to OUTDIR/timing.json (read_s, engine_start_s, run_s).
To deploy: keep the clock and windower; use your own source, and drop now_getter and to_system_utc (Bytewax then
reads the system clock, and wakes a key whose items are stamped ahead of it only when the system clock reaches
their timestamps: its windows close later than predicted here, and its next item can be late; see the explorer's
docs/engines.md, "Bytewax's live wake-ups").
"""

import json
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import bytewax.operators as op
import numpy as np
import pandas as pd
from bytewax.dataflow import Dataflow
from bytewax.operators.windowing import (EventClock, SessionWindower, SlidingWindower, TumblingWindower,
                                         collect_window)
from bytewax.testing import TestingSink, TestingSource, TimeTestingGetter, run_main

{SETTINGS}
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)  # event times are µs since it (or since the stream's zero)
WAKE = "\\x00wake"  # the key of the items that wake every key before an arrival; never a key of the file's


def us(micros):
    return timedelta(microseconds=micros)


def micros(moment):
    return (moment - EPOCH) // us(1)


def with_wake_ups(events):
    """Before each event that arrives later than the one before, an item of key WAKE 1 µs earlier: its activation
    lets Bytewax notify every key with a window due, before the event is taken."""
    out, last = [], None
    for n, event in enumerate(events):
        if last is None or event["arrival"] > last:
            at = event["arrival"] - 1
            out.append({"id": f"wake{n}", "key": WAKE, "t": at, "arrival": at})
        out.append(event)
        last = event["arrival"]
    return out


def main(events, outdir):
    began = time.perf_counter()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    items = with_wake_ups(events_in_arrival_order(read_events(events)))
    read = time.perf_counter()
    clock_now = TimeTestingGetter(EPOCH)

    def arrive(item):
        clock_now.now = EPOCH + us(item["arrival"])
        return item

    flow = Dataflow("watermark_explorer_export")
    stream = op.map("arrive", op.input("events", flow, TestingSource(items, batch_size=1)), arrive)
    keyed = op.key_on("key", stream, lambda item: item["key"])
    clock = EventClock(lambda item: EPOCH + us(item["t"]), us(WAIT_US), now_getter=clock_now.get,
                       to_system_utc=lambda _t: EPOCH)
    windows = collect_window("windows", keyed, clock, {WINDOWER})
    emitted, late, meta = [], [], []
    op.output("emitted", windows.down, TestingSink(emitted))
    op.output("late", windows.late, TestingSink(late))
    op.output("meta", windows.meta, TestingSink(meta))
    started = time.perf_counter()  # (a dataflow starts inside run_main: its start is counted in run_s)
    run_main(flow)
    ran = time.perf_counter()
    spans = {}
    for key, (window_id, m) in meta:  # a window's metadata, in the order its key closed it
        spans.setdefault((key, window_id), []).append(m)
    seq = 0
    with (out / "emissions.jsonl").open("w") as sink:
        for key, (window_id, values) in emitted:
            m = spans[key, window_id].pop(0)
            if key == WAKE:
                continue
            seq += 1
            sink.write(json.dumps({"key": key, "window_start": micros(m.open_time), "window_end": micros(m.close_time),
                                   "ids": sorted(v["id"] for v in values), "seq": seq}) + "\\n")
    with (out / "refused.jsonl").open("w") as sink:
        for key, (_window_id, item) in late:
            if key != WAKE:
                sink.write(json.dumps({"id": item["id"], "key": key}) + "\\n")
    (out / "timing.json").write_text(json.dumps({"read_s": read - began, "engine_start_s": started - read,
                                                 "run_s": ran - started}))
    print(f"{seq} windows emitted, {sum(k != WAKE for k, _ in late)} items late; written to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python job.py EVENTS OUTDIR")
    main(sys.argv[1], sys.argv[2])
'''
