"""Dev check (not part of `make test`): the `bytewax` preset against a REAL Bytewax 0.21.1 dataflow.

dev/check_bytewax.py drives Bytewax's `_WindowLogic` for one key by hand, so it never sees what the runtime
does with a key's state between items. This script runs whole dataflows (`bytewax.testing.run_main`,
`TestingSource(batch_size=1)`, keyed by `key`, `collect_window` with `EventClock(wait_for_system_duration=L)`
and Tumbling / Sliding / Session windowers) on random multi-key streams, and the same streams through the
project's `bytewax` preset (delay = L), and compares per key:

* the emitted windows, as a multiset of (key, start, end, sorted item ids) (sessions: (key, start, ids),
  since Bytewax's session end is the last timestamp and the preset's is last + gap + 1 µs);
* the set of late item ids (Bytewax's `late` stream, the preset's events whose status is not on_time).

Time is deterministic: `now_getter` reads a `TimeTestingGetter` that a `map` step sets to each item's arrival
time just before the item reaches the window operator (checked: every `on_batch` gets exactly one item and
the clock reads that item's arrival), and `to_system_utc` returns None, so the runtime never wakes the
operator on the wall clock: windows close when the key's next item (or EOF) moves its watermark past them.
Window contents and lateness do not depend on *when* a close happens (an item for a window whose end is
≤ the watermark is late whenever it comes), so the only thing this can show apart from the preset is state
that the runtime drops.

What Bytewax does (source of 0.21.1; Rust: src/operators.rs at tag v0.21.1): `_WindowLogic.on_batch`,
`on_notify` and `on_eof` (bytewax/operators/windowing.py:1116-1151) each return `self._is_empty()` as their
"discard" flag (StatefulBatchLogic.DISCARD is True, operators/__init__.py:694-703); `_is_empty()` (:1110) is
"no window logics, empty queue, and `windower.is_empty()`"; the runtime drops the key's logic — clock,
windower and queue — right after the call that returned True (src/operators.rs:796-799 on_batch, 838-841
on_notify, 880-892 on_eof). The next item of the key builds a fresh `_WindowLogic` whose clock has
watermark_base = UTC_MIN (windowing.py:237-248), so that item is never late and resets the watermark to its
own timestamp − L. Sliding/tumbling windowers are empty when no window is open (:663); sessions never are
(:799, "Never discard state"), so sessions are not affected. `model_key` below is that rule written out;
it reproduces the dataflow exactly, and with the discard switched off it reproduces the preset exactly.

Run (the venv lives outside the project; pandas as in constraints.txt):

    python3 -m venv /tmp/bytewax-venv
    /tmp/bytewax-venv/bin/pip install bytewax==0.21.1 pandas==2.3.3 pyyaml pyarrow numpy numba
    PYTHONPATH=. /tmp/bytewax-venv/bin/python dev/check_bytewax_dataflow.py [--seeds 5] [--show 2]

Measured (5 seeds, 200-300 items, 3-5 keys, before any fix in the preset) — see the report printed at the
end of a run; figures as of writing:

    seed 0  wait 2.5  tumbling:10    windows common 104 / bytewax 108 / preset 104   late equal: no (19 vs 27)
    ...     (full table in the run's output; `model_key` with the discard = dataflow in every run, and
             `model_key` without the discard = preset in every run)
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import bytewax.operators as op
import pandas as pd
from bytewax.dataflow import Dataflow
from bytewax.operators.windowing import (EventClock, SessionWindower, SlidingWindower, TumblingWindower, _WindowLogic,
                                         collect_window)
from bytewax.testing import TestingSink, TestingSource, TimeTestingGetter, run_main

from explorer.config import WindowSpec, preset
from explorer.core import run
from explorer.streams import stream_from_frame

EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
S = 1_000_000
WINDOWS = {"tumbling:10": (10, 10), "sliding:20:5": (20, 5), "session:4": None}


def us(dt: datetime) -> int:
    return (dt - EPOCH) // timedelta(microseconds=1)


# --- random streams -----------------------------------------------------------------------------------------------
def make_stream(seed: int) -> tuple[list[dict], float]:
    """Items in arrival order (each {id, key, t, arrival}, seconds) and the wait L.

    Event times are on a 0.5 s grid; arrival = event time + a delay (mostly small, some stragglers of 10-40 s);
    most delays are 0-2 s, some 2-8 s, a few 10-40 s;
    each key has one or two silent spells of 30-80 s of arrival time. Arrivals are made distinct (ties get
    +1 ms steps) so both sides see one unambiguous order."""
    rng = random.Random(seed)
    n = rng.randint(200, 300)
    keys = [f"k{i}" for i in range(rng.randint(3, 5))]
    span = n * 1.2
    silent = {k: [(s, s + rng.uniform(30, 80)) for s in rng.sample(range(int(span)), rng.randint(1, 2))]
              for k in keys}
    items = []
    for i in range(n):
        arrival = rng.randint(0, int(span) * 2) / 2
        awake = [k for k in keys if not any(a <= arrival < b for a, b in silent[k])] or keys
        key = rng.choice(awake)
        r = rng.random()
        delay = rng.randint(0, 4) / 2 if r < 0.75 else rng.randint(4, 16) / 2 if r < 0.92 else rng.randint(20, 80) / 2
        t = max(0.0, arrival - delay)
        items.append({"id": f"e{i}", "key": key, "t": t, "arrival": arrival})
    items.sort(key=lambda i: (i["arrival"], i["t"], i["id"]))
    last = None
    for item in items:  # distinct arrivals, order kept
        if last is not None and item["arrival"] <= last:
            item["arrival"] = round(last + 0.001, 3)
        last = item["arrival"]
    return items, rng.choice([1, 2.5, 5, 8])


def windower_for(window: str):
    if window.startswith("session"):
        return SessionWindower(timedelta(seconds=WINDOWS[window] or 4))
    length, step = WINDOWS[window]
    if length == step:
        return TumblingWindower(timedelta(seconds=length), EPOCH)
    return SlidingWindower(timedelta(seconds=length), timedelta(seconds=step), EPOCH)


# --- the real dataflow --------------------------------------------------------------------------------------------
class Probe:
    """Records, per on_batch the runtime makes, the key, item, clock reading and the discard flag returned."""

    def __init__(self):
        self.calls: list[tuple] = []
        self._orig = _WindowLogic.on_batch

    def __enter__(self):
        calls, orig = self.calls, self._orig

        def on_batch(logic, values):
            now = logic.clock.now_getter()
            events, discard = orig(logic, values)
            calls.append((values[0]["key"], [v["id"] for v in values], now, discard))
            return events, discard

        _WindowLogic.on_batch = on_batch
        return self

    def __exit__(self, *exc):
        _WindowLogic.on_batch = self._orig


def bytewax_run(items: list[dict], window: str, wait: float) -> tuple[Counter, set, list]:
    """(windows multiset, late ids, discards as (key, id of the item after whose batch the key was dropped))."""
    getter = TimeTestingGetter(EPOCH)

    def stamp(item):
        getter.now = EPOCH + timedelta(seconds=item["arrival"])
        return item

    flow = Dataflow("check_bytewax_dataflow")
    stream = op.map("stamp", op.input("in", flow, TestingSource(items, batch_size=1)), stamp)
    keyed = op.key_on("key", stream, lambda i: i["key"])
    clock = EventClock(lambda i: EPOCH + timedelta(seconds=i["t"]), timedelta(seconds=wait),
                       now_getter=getter.get, to_system_utc=lambda _t: None)
    out = collect_window("win", keyed, clock, windower_for(window))
    down, late, meta = [], [], []
    op.output("down", out.down, TestingSink(down))
    op.output("late", out.late, TestingSink(late))
    op.output("meta", out.meta, TestingSink(meta))
    with Probe() as probe:
        run_main(flow)
    by_id = {i["id"]: i for i in items}
    for key, ids, now, _ in probe.calls:  # the deterministic-clock premise
        assert len(ids) == 1 and now == EPOCH + timedelta(seconds=by_id[ids[0]]["arrival"]), (key, ids, now)
    metas = defaultdict(list)
    for key, (wid, m) in meta:
        metas[key, wid].append(m)
    seen = Counter()
    windows = Counter()
    for key, (wid, values) in down:  # a window id can close twice for a key (after a discard): pair in order
        m = metas[key, wid][seen[key, wid]]
        seen[key, wid] += 1
        ids = tuple(sorted(v["id"] for v in values))
        if window.startswith("session"):
            windows[key, us(m.open_time), None, ids] += 1
        else:
            windows[key, us(m.open_time), us(m.close_time), ids] += 1
    late_ids = {v["id"] for _key, (_wid, v) in late}
    discards = [(key, ids[0]) for key, ids, _now, discard in probe.calls if discard]
    return windows, late_ids, discards


# --- the project's preset -----------------------------------------------------------------------------------------
def preset_run(items: list[dict], window: str, wait: float) -> tuple[Counter, set]:
    frame = pd.DataFrame({"id": [i["id"] for i in items], "key": [i["key"] for i in items],
                          "event_time": [i["t"] for i in items], "arrival_time": [i["arrival"] for i in items]})
    config = replace(preset("bytewax", delay=round(wait * S)), window=WindowSpec.parse(window))
    result = run(stream_from_frame(frame, name="case"), config)
    session = window.startswith("session")
    windows = Counter((w.key, int(w.start), None if session else int(w.end), tuple(sorted(w.ids)))
                      for w in result.windows.itertuples())
    late = set(result.events.loc[result.events["status"] != "on_time", "id"])
    return windows, late


# --- the rule, written out ----------------------------------------------------------------------------------------
def model_key(items: list[dict], window: str, wait: float, discard: bool = True) -> tuple[Counter, set, list]:
    """Bytewax's per-key windowing (tumbling/sliding, ordered, no wall-clock wake-ups), all keys, in µs.

    Per key: clock (base, sys_max), queue of timely items not yet due, open windows. For an item arriving at
    `now`: W = base + (now − sys_max) (−∞ for a fresh key); if t − L > W the clock resets (base = t − L,
    sys_max = now, W = t − L); the item is late iff t < W, else queued; then every queued item with t ≤ W is
    put into its windows (timestamp order), and every open window with end ≤ W closes. With `discard`, a key
    left with no open window and an empty queue is forgotten (clock included). At EOF W = +∞."""
    length, step = (v * S for v in WINDOWS[window])
    L = round(wait * S)
    state: dict[str, dict] = {}
    windows, late, discards = Counter(), set(), []

    def flush(st, key, W):
        due = sorted((q for q in st["queue"] if q[0] <= W), key=lambda q: q[0])
        st["queue"] = [q for q in st["queue"] if q[0] > W]
        for t, iid in due:
            for wid in range((t - length) // step + 1, t // step + 1):  # as SlidingWindowerLogic.intersects
                st["open"].setdefault(wid, []).append(iid)
        for wid in [w for w in st["open"] if wid_end(w) <= W]:
            windows[key, wid * step, wid_end(wid), tuple(sorted(st["open"].pop(wid)))] += 1

    def wid_end(wid):
        return wid * step + length

    for item in items:
        key, t, now = item["key"], round(item["t"] * S), round(item["arrival"] * S)
        st = state.get(key)
        if st is None:
            st = state[key] = {"base": None, "sys_max": now, "queue": [], "open": {}}
        W = None if st["base"] is None else st["base"] + (now - st["sys_max"])
        if W is None or t - L > W:
            st["base"], st["sys_max"], W = t - L, now, t - L
        if t < W:
            late.add(item["id"])
        else:
            st["queue"].append((t, item["id"]))
        flush(st, key, W)
        if discard and not st["queue"] and not st["open"]:
            del state[key]
            discards.append((key, item["id"]))
    for key, st in state.items():
        flush(st, key, float("inf"))
    return windows, late, discards


# --- report -------------------------------------------------------------------------------------------------------
def history(items, key, bw_late, pre_late, discards, involved: set) -> list[str]:
    """The key's items around its first disagreement: from just before the discard that led to it."""
    mine = [i for i in items if i["key"] == key]
    dropped = {iid for k, iid in discards if k == key}
    first = next((n for n, i in enumerate(mine) if i["id"] in involved), len(mine) - 1)
    cut = max((n for n, i in enumerate(mine[:first]) if i["id"] in dropped), default=first)
    rows = []
    for i in mine[max(0, cut - 3):first + 3]:
        flags = ("late(bytewax) " if i["id"] in bw_late else "") + ("late(preset) " if i["id"] in pre_late else "")
        flags += "<- key's state DISCARDED after this item" if i["id"] in dropped else ""
        rows.append(f"      {i['id']:>5} t={i['t']:7.3f} arrival={i['arrival']:8.3f} {flags}")
    return rows


def fmt(w) -> str:
    key, start, end, ids = w
    span = f"[{start / S:g}, {end / S:g})" if end is not None else f"start {start / S:g}"
    return f"{key} {span} {list(ids)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--show", type=int, default=1, help="disagreeing keys shown per stream and window")
    args = parser.parse_args()
    table = []
    for seed in range(args.seeds):
        items, wait = make_stream(seed)
        nkeys = len({i["key"] for i in items})
        print(f"== seed {seed}: {len(items)} items, {nkeys} keys, wait L = {wait} s")
        for window in WINDOWS:
            bw, bw_late, discards = bytewax_run(items, window, wait)
            pre, pre_late = preset_run(items, window, wait)
            common = sum((bw & pre).values())
            line = (f"seed {seed} L={wait:<3} {window:<13} windows common {common} / bytewax {sum(bw.values())} / "
                    f"preset {sum(pre.values())}; late equal: {'yes' if bw_late == pre_late else 'no'} "
                    f"({len(bw_late)} vs {len(pre_late)}); mid-stream discards {len(discards)}")
            if not window.startswith("session"):
                m, m_late, m_disc = model_key(items, window, wait, discard=True)
                n, n_late, _ = model_key(items, window, wait, discard=False)
                line += (f"; model+discard = dataflow: {m == bw and m_late == bw_late and m_disc == discards}"
                         f"; model-discard = preset: {n == pre and n_late == pre_late}")
            print("  " + line)
            table.append(line)
            bad = sorted({w[0] for w in (bw - pre) + (pre - bw)} | {i["key"] for i in items
                                                                     if i["id"] in bw_late ^ pre_late})
            for key in bad[:args.show]:
                print(f"    key {key}: windows only in bytewax: {[fmt(w) for w in sorted((bw - pre)) if w[0] == key]}")
                print(f"    key {key}: windows only in preset:  {[fmt(w) for w in sorted((pre - bw)) if w[0] == key]}")
                print(f"    key {key}: late only in bytewax {sorted(bw_late - pre_late & {i['id'] for i in items if i['key'] == key})}, "
                      f"only in preset {sorted(pre_late - bw_late & {i['id'] for i in items if i['key'] == key})}")
                involved = {iid for w in (bw - pre) + (pre - bw) if w[0] == key for iid in w[3]} | (bw_late ^ pre_late)
                print("\n".join(history(items, key, bw_late, pre_late, discards, involved)))
    print("\nSummary")
    print("\n".join("  " + line for line in table))


if __name__ == "__main__":
    main()
