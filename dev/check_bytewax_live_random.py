"""Dev check (not part of `make test`): --bytewax-live-wakeups against a live Bytewax 0.21.1 dataflow on the system
clock, on random streams where some devices' clocks run fast.

    .venv/bin/python dev/check_bytewax_live_random.py SEED [SEED ...]

Each seed draws 24 items over three keys arriving within 30 s, a third of them stamped up to 12 s ahead of their
arrival, and runs them through dev/bytewax_live_clock.py (Bytewax's venv, real time: about 35 s a seed; wait
1.25 s; windows of 10 s, tumbling for odd seeds, sliding every 5 s for even ones) and through the bytewax preset
with the option on and off. It prints, per seed, whether the windows (key, start, item ids) and the late items
agree. Times are on grids that keep every decision
250 ms from a tie (arrivals at k + 0.25 s, timestamps at k + 0.5 s, so a watermark read at an arrival is at
k + 0.25 s, never a timestamp or an end, and a window closes at an end, a timestamp or a whole second, never an
arrival), so a few ms of scheduling cannot reorder them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from explorer.config import WindowSpec, preset
from explorer.core import run
from explorer.streams import stream_from_frame
from explorer.verify.engines import ENGINES_DIR

S = 1_000_000
WAIT, SIZE = 1.25, 10
SCRIPT = Path(__file__).resolve().parent / "bytewax_live_clock.py"


def items(seed: int) -> list[list]:
    rng = random.Random(seed)
    out = []
    for n, second in enumerate(sorted(rng.sample(range(30), 24))):  # one item a second at most: no ties in arrival
        arrival = second + 0.25
        ahead = rng.random() < 1 / 3
        t = int(arrival) + (rng.randrange(2, 13) if ahead else -rng.randrange(0, 8)) + 0.5
        out.append([f"e{n}", rng.choice("abc"), max(t, 0.5), arrival])
    return out


def predicted(rows: list[list], live: bool, window: str) -> dict:
    frame = pd.DataFrame(rows, columns=["id", "key", "event_time", "arrival_time"])
    config = replace(preset("bytewax", delay=round(WAIT * S)), window=WindowSpec.parse(window))
    result = run(stream_from_frame(frame, name="live"), config.with_time(bytewax_live_wakeups=live))
    return {"windows": sorted((w.key, w.start / S, sorted(w.ids)) for w in result.windows.itertuples()),
            "late": sorted(result.events.loc[result.events["status"] != "on_time", "id"])}


def main(seeds: list[int]) -> None:
    python = ENGINES_DIR / "bytewax" / "bin" / "python"
    for seed in seeds:
        rows = items(seed)
        sliding = seed % 2 == 0  # even seeds: sliding windows of SIZE every SIZE / 2
        window = f"sliding:{SIZE}:{SIZE // 2}" if sliding else f"tumbling:{SIZE}"
        done = subprocess.run([str(python), str(SCRIPT), json.dumps(rows), str(WAIT), str(SIZE),
                               *([str(SIZE // 2)] if sliding else [])],
                              capture_output=True, text=True, timeout=300, check=True)
        live = json.loads(done.stdout)
        real = {"windows": sorted((w["key"], w["start"], w["ids"]) for w in live["windows"]),
                "late": sorted(set(live["late"]))}  # (Bytewax reports a late item once per sliding window it misses)
        on, off = predicted(rows, True, window), predicted(rows, False, window)
        print(f"seed {seed} ({window}): {len(real['windows'])} windows, {len(real['late'])} late on the real dataflow; "
              f"option on agrees: {on == real}; option off: {len(off['windows'])} windows, {len(off['late'])} late, "
              f"agrees: {off == real}", flush=True)
        if on != real:
            print(json.dumps({"items": rows, "real": real, "predicted": on}))


if __name__ == "__main__":
    main([int(seed) for seed in sys.argv[1:]])
