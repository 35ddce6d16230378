"""Dev check (not part of `make test`): the `bytewax` preset against a REAL Bytewax 0.21.1 dataflow.

Driving Bytewax's `_WindowLogic` for one key by hand (as an earlier script did) never sees what the runtime
does with a key's state between items. This script runs whole dataflows (`bytewax.testing.run_main`,
`TestingSource(batch_size=1)`, keyed by `key`, `collect_window` with `EventClock(wait_for_system_duration=L)`
and Tumbling / Sliding / Session windowers) on random multi-key streams, and the same streams through the
project's `bytewax` preset (delay = L), and compares:

* the emitted windows, as a multiset of (key, start, end, sorted item ids) (sessions: (key, start, ids),
  since Bytewax's session end is the last timestamp and the preset's is last + gap + 1 µs);
* the set of late item ids (Bytewax's `late` stream; the preset's events whose status is not on_time);
* `model_key` (the discard rule below, written out) against the dataflow, windows + late + discards, and
  `model_key` without the discard against the preset.

Time is deterministic: `now_getter` reads a `TimeTestingGetter` that a `map` step sets to each item's arrival
just before the item reaches the window operator (`check_premise` asserts that every `on_batch` gets one item
and reads that item's arrival). Two modes:

* items:   `to_system_utc` returns None, so the runtime never calls `on_notify`; windows close when the key's
           next item (or EOF) moves its watermark past them.
* wakeups: `to_system_utc` returns a time long past, so every key with something to close is notified at each
           activation, and an item of a separate key arrives 1 µs before each item to activate the operator
           then: every key is woken before any item is taken, as the preset assumes (`event_clock_passes`);
           `check_premise` asserts it happened so.

When a close happens does not change window contents or lateness, so without state being dropped both modes
would equal the preset (they do: "model w/o discard = preset: True" everywhere).

The rule (source of 0.21.1 — Python in site-packages/bytewax/operators, Rust src/operators.rs at v0.21.1):
`_WindowLogic.on_batch`, `on_notify` and `on_eof` (windowing.py:1116-1151) each return `self._is_empty()`
as the DISCARD flag (StatefulBatchLogic.DISCARD = True, operators/__init__.py:694-703). `_is_empty()`
(windowing.py:1110-1114) = no per-window logics, an empty queue, and `windower.is_empty()`: sliding/tumbling
"no window open" (:663-664), sessions never (:799-806, "Never discard state"). The queue holds timely items
(t ≥ watermark) whose t is still > the watermark (ordered mode inserts an item into its windows only once
watermark ≥ t, :1095-1108); late items (t < watermark, :1125) are never queued. The runtime drops the key's
logic — clock, windower, queue — right after the call that returned True (operators.rs:796-799 on_batch,
838-841 on_notify, 880-893 on_eof). The key's next item builds a fresh logic (operators.rs:772) whose clock
has watermark_base = UTC_MIN and system_time_of_max_event = now (windowing.py:237-248): that item is never
late and sets the watermark to its t − L (:264-284). Window ids are recomputed from align_to, so a window can
be emitted again under the same id. After on_batch of a timely item the key is never empty (the item is
queued, or with t = watermark sits in a window ending after it), so in mode items a key is dropped only right
after a late item whose watermark has passed everything pending; in mode wakeups mostly at a wake-up.

Run (the venv lives outside the project; pandas as in constraints.txt):

    python3 -m venv /tmp/bytewax-venv
    /tmp/bytewax-venv/bin/pip install bytewax==0.21.1 pandas==2.3.3 pyyaml pyarrow numpy numba
    PYTHONPATH=. /tmp/bytewax-venv/bin/python dev/check_bytewax_dataflow.py [--seeds 5] [--show 1] \
        [--modes items,wakeups]

about 7 s. Measured before any fix in the preset (tree at b4c1573) (windows: common / bytewax / preset; late: bytewax
vs preset; key-state discards mid-stream). Every run: model = dataflow, model w/o discard = preset.

    seed L    window        mode     windows          late       discards
    0    1    tumbling:10   items     54 /  82 /  68   96 vs 130  31
    0    1    tumbling:10   wakeups   48 /  98 /  68   70 vs 130  68
    0    1    sliding:20:5  items    167 / 186 / 183  125 vs 130   4
    0    1    sliding:20:5  wakeups  156 / 193 / 183  117 vs 130  10
    1    8    tumbling:10   items     89 /  90 /  89   12 vs 13    4
    1    8    tumbling:10   wakeups   89 /  93 /  89    8 vs 13   25
    1    8    sliding:20:5  items    222 / 222 / 222   13 vs 13    1
    1    8    sliding:20:5  wakeups  222 / 226 / 222   12 vs 13    8
    2    5    tumbling:10   items     56 /  56 /  56   28 vs 28    2
    2    5    tumbling:10   wakeups   56 /  58 /  56   26 vs 28   17
    2    5    sliding:20:5  items    128 / 128 / 128   28 vs 28    0
    2    5    sliding:20:5  wakeups  128 / 128 / 128   28 vs 28    4
    3    2.5  tumbling:10   items     81 /  84 /  82   42 vs 45    8
    3    2.5  tumbling:10   wakeups   79 /  89 /  82   34 vs 45   63
    3    2.5  sliding:20:5  items    212 / 216 / 212   44 vs 45    3
    3    2.5  sliding:20:5  wakeups  212 / 224 / 212   42 vs 45    9
    4    8    tumbling:10   items     78 /  79 /  78   15 vs 16    1
    4    8    tumbling:10   wakeups   78 /  80 /  78   14 vs 16   17
    4    8    sliding:20:5  items    193 / 193 / 193   16 vs 16    1
    4    8    sliding:20:5  wakeups  193 / 197 / 193   15 vs 16    6
    session:4, both modes, every seed: all windows and late sets equal, no discards.

After the fix (2026-11-23): the preset forgets an emptied key's state, clock included
(`forget_clock_when_empty`), and a window due exactly when an item arrives closes after that item is taken
(the runtime takes an activation's items before its notifications). Mode wakeups, which is what the preset
models (`event_clock_passes`), `--seeds 20`: **60 of 60 cases agree** (20 seeds × tumbling, sliding,
session): every window with its contents and every late set, through 931 key-state discards. Mode items
still differs where a key is dropped at a late item rather than at a wake-up: the preset does not model a
dataflow whose clock has no wake-ups.
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
TICK = "~tick"  # the key of the wake-up items (--wakeups)
TICK_BEFORE = 1e-6  # a wake-up item arrives this long (s) before each item


class Probe:
    """Records every on_batch / on_notify the runtime makes: (what, key, item ids, clock reading, DISCARD
    returned, whether the key is now unscheduled: discarded, or retained with nothing to be woken for)."""

    def __init__(self):
        self.calls: list[tuple] = []
        self._orig = (_WindowLogic.on_batch, _WindowLogic.on_notify)

    def __enter__(self):
        calls, (orig_batch, orig_notify) = self.calls, self._orig

        def on_batch(logic, values):
            logic.probe_key = values[0]["key"]  # a fresh logic always starts with on_batch
            now = logic.clock.now_getter()
            events, discard = orig_batch(logic, values)
            calls.append(("batch", logic.probe_key, [v["id"] for v in values], now, discard,
                          discard or logic.notify_at() is None))
            return events, discard

        def on_notify(logic):
            now = logic.clock.now_getter()
            events, discard = orig_notify(logic)
            calls.append(("notify", logic.probe_key, [], now, discard, discard or logic.notify_at() is None))
            return events, discard

        _WindowLogic.on_batch, _WindowLogic.on_notify = on_batch, on_notify
        return self

    def __exit__(self, *exc):
        _WindowLogic.on_batch, _WindowLogic.on_notify = self._orig


def with_ticks(items: list[dict]) -> list[dict]:
    """Before each item, an item of key TICK arriving TICK_BEFORE earlier: it activates the operator then."""
    out = []
    for n, item in enumerate(items):
        at = item["arrival"] - TICK_BEFORE
        out += [{"id": f"tick{n}", "key": TICK, "t": at, "arrival": at}, item]
    return out


def check_premise(calls: list[tuple], items: list[dict], wakeups: bool) -> None:
    """Every on_batch gets one item and the clock reads its arrival; with wake-ups, after each tick every key
    holding state is notified at the tick's time before the next item is taken."""
    by_id = {i["id"]: i for i in items}
    live: set = set()
    woken: set = set()
    expect_tick = None
    for what, key, ids, now, _discard, idle in calls:
        if what == "batch":
            assert len(ids) == 1 and now == EPOCH + timedelta(seconds=by_id[ids[0]]["arrival"]), (key, ids, now)
            if wakeups and key != TICK:
                assert live - {TICK} <= woken, ("not woken before", ids, live - woken)
            if key == TICK:
                expect_tick, woken = now, set()
        elif wakeups and now == expect_tick:
            woken.add(key)
        (live.discard if idle else live.add)(key)


def bytewax_run(items: list[dict], window: str, wait: float, wakeups: bool = False) -> tuple[Counter, set, list]:
    """(windows multiset, late ids, mid-stream discards as (key, the key's last item before, batch | notify)).

    Without wake-ups, `to_system_utc` returns None: the runtime never calls on_notify, windows close on the
    key's next item or at EOF. With `wakeups`, `to_system_utc` returns a time long past, so every key holding
    state is notified at every activation, and a TICK item just before each item activates the operator with
    the clock at that item's arrival − 1 µs: each key is woken (may close windows, may be dropped) before any
    item is taken, as the preset assumes (`event_clock_passes`)."""
    getter = TimeTestingGetter(EPOCH)
    source = with_ticks(items) if wakeups else items

    def stamp(item):
        getter.now = EPOCH + timedelta(seconds=item["arrival"])
        return item

    flow = Dataflow("check_bytewax_dataflow")
    stream = op.map("stamp", op.input("in", flow, TestingSource(source, batch_size=1)), stamp)
    keyed = op.key_on("key", stream, lambda i: i["key"])
    clock = EventClock(lambda i: EPOCH + timedelta(seconds=i["t"]), timedelta(seconds=wait), now_getter=getter.get,
                       to_system_utc=(lambda _t: EPOCH) if wakeups else (lambda _t: None))
    out = collect_window("win", keyed, clock, windower_for(window))
    down, late, meta = [], [], []
    op.output("down", out.down, TestingSink(down))
    op.output("late", out.late, TestingSink(late))
    op.output("meta", out.meta, TestingSink(meta))
    with Probe() as probe:
        run_main(flow)
    check_premise(probe.calls, source, wakeups)
    metas = defaultdict(list)
    for key, (wid, m) in meta:
        metas[key, wid].append(m)
    seen = Counter()
    windows = Counter()
    for key, (wid, values) in down:  # a window id can close twice for a key (after a discard): pair in order
        m = metas[key, wid][seen[key, wid]]
        seen[key, wid] += 1
        if key == TICK:
            continue
        ids = tuple(sorted(v["id"] for v in values))
        if window.startswith("session"):
            windows[key, us(m.open_time), None, ids] += 1
        else:
            windows[key, us(m.open_time), us(m.close_time), ids] += 1
    late_ids = {v["id"] for key, (_wid, v) in late if key != TICK}
    discards, last_of = [], {}
    for what, key, ids, _now, discard, _idle in probe.calls:
        if key == TICK:
            continue
        if what == "batch":
            last_of[key] = ids[0]
        if discard:  # named by the key's last item before the drop, and by the call that returned DISCARD
            discards.append((key, last_of[key], what))
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
def model_key(items: list[dict], window: str, wait: float, discard: bool = True,
              wakeups: bool = False) -> tuple[Counter, set, list]:
    """Bytewax's per-key windowing (tumbling/sliding, ordered), all keys, in µs: the rule this script found.

    Per key: clock (base, sys_max), queue of timely items not yet due, open windows. For an item arriving at
    `now`: W = base + (now − sys_max) (−∞ for a fresh key); if t − L > W the clock resets (base = t − L,
    sys_max = now, W = t − L); the item is late iff t < W, else queued; then every queued item with t ≤ W is
    put into its windows (timestamp order), and every open window with end ≤ W closes. With `wakeups`, every
    key is first woken at now − 1 µs (W = base + (that − sys_max), the same flush, no reset). With `discard`,
    a key left with no open window and an empty queue after any of these is forgotten, clock included.
    At EOF W = +∞."""
    length, step = (v * S for v in WINDOWS[window])
    L = round(wait * S)
    state: dict[str, dict] = {}
    windows, late, discards = Counter(), set(), []
    last_of: dict[str, str] = {}

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
        if wakeups:
            for other, st in list(state.items()):
                flush(st, other, st["base"] + (now - round(TICK_BEFORE * S) - st["sys_max"]))
                if discard and not st["queue"] and not st["open"]:
                    del state[other]
                    discards.append((other, last_of[other], "notify"))
        last_of[key] = item["id"]
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
            discards.append((key, item["id"], "batch"))
    for key, st in state.items():
        flush(st, key, float("inf"))
    return windows, late, discards


# --- report -------------------------------------------------------------------------------------------------------
def history(items, key, bw_late, pre_late, discards, involved: set) -> list[str]:
    """The key's items around its first disagreement: from just before the discard that led to it."""
    mine = [i for i in items if i["key"] == key]
    dropped = {iid: what for k, iid, what in discards if k == key}
    first = next((n for n, i in enumerate(mine) if i["id"] in involved), len(mine) - 1)
    cut = max((n for n, i in enumerate(mine[:first]) if i["id"] in dropped), default=first)
    rows = []
    for i in mine[max(0, cut - 3):first + 3]:
        flags = ("late(bytewax) " if i["id"] in bw_late else "") + ("late(preset) " if i["id"] in pre_late else "")
        flags += {"batch": "<- key's state DISCARDED after this item",
                  "notify": "<- key's state DISCARDED at a wake-up after this item"}.get(dropped.get(i["id"]), "")
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
    parser.add_argument("--modes", default="items,wakeups",
                        help="items: closes only on items/EOF (to_system_utc None); wakeups: woken before each item")
    args = parser.parse_args()
    table = []
    for seed in range(args.seeds):
        items, wait = make_stream(seed)
        nkeys = len({i["key"] for i in items})
        print(f"== seed {seed}: {len(items)} items, {nkeys} keys, wait L = {wait} s")
        for window in WINDOWS:
            pre, pre_late = preset_run(items, window, wait)
            for mode in args.modes.split(","):
                wakeups = mode == "wakeups"
                bw, bw_late, discards = bytewax_run(items, window, wait, wakeups)
                common = sum((bw & pre).values())
                line = (f"seed {seed} L={wait:<3} {window:<13} {mode:<7} windows common {common} / bytewax "
                        f"{sum(bw.values())} / preset {sum(pre.values())}; late equal: "
                        f"{'yes' if bw_late == pre_late else 'no'} ({len(bw_late)} vs {len(pre_late)}); "
                        f"discards {len(discards)}")
                if not window.startswith("session"):
                    m, m_late, m_disc = model_key(items, window, wait, True, wakeups)
                    n, n_late, _ = model_key(items, window, wait, False, wakeups)
                    same = m == bw and m_late == bw_late and Counter(m_disc) == Counter(discards)
                    line += f"; model = dataflow: {same}; model w/o discard = preset: {n == pre and n_late == pre_late}"
                print("  " + line)
                table.append(line)
                bad = sorted({w[0] for w in (bw - pre) + (pre - bw)} | {i["key"] for i in items
                                                                         if i["id"] in bw_late ^ pre_late})
                for key in bad[:args.show]:
                    mine = {i["id"] for i in items if i["key"] == key}
                    only_bw = [fmt(w) for w in sorted(bw - pre) if w[0] == key]
                    only_pre = [fmt(w) for w in sorted(pre - bw) if w[0] == key]
                    print(f"    key {key}: windows only in bytewax: {only_bw}")
                    print(f"    key {key}: windows only in preset:  {only_pre}")
                    print(f"    key {key}: late only in bytewax {sorted((bw_late - pre_late) & mine)}, "
                          f"only in preset {sorted((pre_late - bw_late) & mine)}")
                    involved = {iid for w in (bw - pre) + (pre - bw) if w[0] == key for iid in w[3]}
                    involved |= bw_late ^ pre_late
                    print("\n".join(history(items, key, bw_late, pre_late, discards, involved)))
    print("\nSummary")
    print("\n".join("  " + line for line in table))


if __name__ == "__main__":
    main()
