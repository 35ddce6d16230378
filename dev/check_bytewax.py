"""Dev check (not part of `make test`): the `bytewax` preset against Bytewax's own windowing code.

Bytewax (0.21, from PyPI, in a separate venv) is driven the way its runtime drives one key of a windowing
operator: one item per batch with the injected clock (`now_getter`) reading the item's arrival time, and
`on_notify` whenever the clock has passed the next close (the runtime wakes the operator then), then
`on_eof`. Both sides must agree on every window's contents, on which items are late, and on how many items
had arrived when each window closed.

    python3 -m venv /tmp/bwx && /tmp/bwx/bin/pip install bytewax==0.21.1 pandas pyyaml pyarrow
    PYTHONPATH=. /tmp/bwx/bin/python dev/check_bytewax.py [--cases 300]
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pandas as pd
from bytewax.operators.windowing import (EventClock, SessionWindower, SlidingWindower, TumblingWindower, WindowLogic,
                                         _WindowLogic)

from explorer.config import WindowSpec, preset
from explorer.core import run
from explorer.streams import stream_from_frame

EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
S = 1_000_000


class Collect(WindowLogic):
    def __init__(self, _state=None):
        self.items: list = []

    def on_value(self, value):
        self.items.append(value)
        return []

    def on_merge(self, original):
        self.items.extend(original.items)
        return []

    def on_close(self):
        return [tuple(sorted(v["id"] for v in self.items))]

    def snapshot(self):
        return list(self.items)


def bytewax_key(items: list[dict], windower, wait: float) -> tuple[list, set]:
    """(closed windows as (items arrived before the close, ids), late ids) for one key's items in arrival order."""
    now = [EPOCH]
    clock = EventClock(lambda v: EPOCH + timedelta(seconds=v["t"]), timedelta(seconds=wait), now_getter=lambda: now[0])
    logic = _WindowLogic(clock.build(None), windower.build(None), Collect, True)
    closed, late = [], set()

    def take(events, arrived: int) -> None:
        for _window_id, kind, value in events:
            if kind == "E":
                closed.append((arrived, value))
            elif kind == "L":
                late.add(value["id"])

    for n, item in enumerate(items):
        now[0] = EPOCH + timedelta(seconds=item["arrival"])
        if n:  # the runtime wakes the operator once the clock has passed a due close
            due = logic.notify_at()
            if due is not None and due <= now[0]:
                take(logic.on_notify()[0], n)
        take(logic.on_batch([item])[0], n + 1)
    take(logic.on_eof()[0], len(items))
    return closed, late


def explorer_key(items: list[dict], window: str, wait: float) -> tuple[list, set]:
    frame = pd.DataFrame({"id": [i["id"] for i in items], "event_time": [i["t"] for i in items],
                          "arrival_time": [i["arrival"] for i in items]})
    config = replace(preset("bytewax", delay=round(wait * S)), window=WindowSpec.parse(window))
    result = run(stream_from_frame(frame, name="case"), config)
    closed = [(int(w.emit_batch) if w.reason != "END_OF_STREAM" else len(items), tuple(sorted(w.ids)))
              for w in result.windows.itertuples()]
    late = set(result.events.loc[result.events["status"] != "on_time", "id"])
    return closed, late


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(4)
    kinds = {"tumbling:10": TumblingWindower(timedelta(seconds=10), EPOCH),
             "sliding:20:5": SlidingWindower(timedelta(seconds=20), timedelta(seconds=5), EPOCH),
             "session:4": SessionWindower(timedelta(seconds=4))}
    failures = 0
    for case in range(args.cases):
        n = rng.randint(1, 25)
        ts = [rng.randint(0, 120) / 2 for _ in range(n)]
        items = sorted(({"id": f"e{i}", "t": t, "arrival": t + rng.randint(0, 30) / 2} for i, t in enumerate(ts)),
                       key=lambda i: (i["arrival"], i["t"], i["id"]))
        wait = rng.choice([0, 1, 2.5, 5, 10])
        for window, windower in kinds.items():
            ours = explorer_key(items, window, wait)
            theirs = bytewax_key(items, windower, wait)
            ours_closed, theirs_closed = sorted(ours[0]), sorted(theirs[0])
            if ours_closed != theirs_closed or ours[1] != theirs[1]:
                failures += 1
                if failures <= 5:
                    print(f"case {case} {window} wait {wait}: items {items}\n  explorer {ours}\n  bytewax  {theirs}")
    print(f"{args.cases} random streams x {len(kinds)} windowers: {failures} disagreement(s)")


if __name__ == "__main__":
    main()
