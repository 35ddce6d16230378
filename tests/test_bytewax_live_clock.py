"""Bytewax's live wake-up, on a real Bytewax 0.21.1 dataflow (``make engines``) run on the system clock
(dev/bytewax_live_clock.py: the EventClock's default ``now_getter`` and ``to_system_utc``, items handed over at a
real pace; about 26 s).

The bytewax preset wakes every key whose windows are due before the next item is taken (the exported job makes
Bytewax do so); with --bytewax-live-wakeups it wakes them as the live dataflow does (core/wakeups.py). A live
dataflow wakes a key only when the system clock reaches what ``to_system_utc`` returns for the key's
``notify_at``: by default the earliest close time of its open windows, or the timestamp of the first item it
holds back until the watermark reaches it, read as a system time. A key whose items are stamped behind the
system clock is woken, again and again, until its watermark reaches the end: the preset's rule. A key stamped
ahead of it (timestamp − wait > arrival, a device whose clock runs fast) has a watermark past the end before the
system clock gets there: it is not woken then, its state (clock included) is kept, and its next item meets the
old clock.

Timings are margins of seconds (a loaded machine only delays a wake-up): j's window is due at 11.5 s, j2 comes at
16 s; k's and q's windows are due at 11 s by their watermarks, but they are woken at 20 s (their item's
timestamp); b comes at 15 s, q2 at 25 s.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from explorer.config import WindowSpec, preset
from explorer.core import run
from explorer.streams import stream_from_frame
from explorer.verify.engines import ENGINES_DIR

S = 1_000_000
SCRIPT = Path(__file__).resolve().parents[1] / "dev" / "bytewax_live_clock.py"
# [id, key, timestamp, arrival], seconds from the run's start; wait 1 s, tumbling windows of 10 s
ITEMS = [["a", "k", 20, 0], ["q1", "q", 20, 0], ["j1", "j", 0.5, 1], ["b", "k", 20.5, 15], ["j2", "j", 1.5, 16],
         ["q2", "q", 25, 25]]
WAIT, SIZE = 1, 10


@pytest.fixture(scope="module")
def live() -> dict:
    python = ENGINES_DIR / "bytewax" / "bin" / "python"
    assert python.exists(), f"{python} is missing: run `make engines` once"
    done = subprocess.run([str(python), str(SCRIPT), json.dumps(ITEMS), str(WAIT), str(SIZE)], capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout)


def predicted(live_wakeups: bool = False) -> dict:
    """The bytewax preset on the same items, in the live run's terms (``live_wakeups``: --bytewax-live-wakeups)."""
    frame = pd.DataFrame(ITEMS, columns=["id", "key", "event_time", "arrival_time"]).astype(
        {"event_time": float, "arrival_time": float})
    config = replace(preset("bytewax", delay=WAIT * S), window=WindowSpec.parse(f"tumbling:{SIZE}"))
    result = run(stream_from_frame(frame, name="live clock"), config.with_time(bytewax_live_wakeups=live_wakeups))
    return {"windows": sorted((w.key, w.start / S, sorted(w.ids)) for w in result.windows.itertuples()),
            "late": sorted(result.events.loc[result.events["status"] != "on_time", "id"])}


def _windows(live: dict, key: str | None = None) -> list:
    return sorted((w["key"], w["start"], w["ids"]) for w in live["windows"] if key in (None, w["key"]))


@pytest.mark.engines
def test_a_key_behind_the_system_clock_is_woken_when_its_watermark_reaches_the_end(live):
    """j1 (0.5 s, arriving at 1 s): the watermark reaches [0, 10)'s end at 1 + 10 − (0.5 − 1) = 11.5 s, and
    Bytewax closes it then; j's state goes with it, so j2 starts a fresh clock: on time, in a window of its own."""
    assert _windows(live, "j") == [("j", 0.0, ["j1"]), ("j", 0.0, ["j2"])]
    closed = next(w["at"] for w in live["windows"] if w["ids"] == ["j1"])
    assert 11.0 < closed < 15.5, closed
    assert [w for w in predicted()["windows"] if w[0] == "j"] == _windows(live, "j")


@pytest.mark.engines
def test_a_key_stamped_ahead_of_the_system_clock_is_not_woken_when_its_watermark_passes_the_end(live):
    """a (20 s, arriving at 0 s) sets k's watermark to 19 s: [20, 30) is due at 11 s of system time, but the
    runtime wakes k only at to_system_utc(20 s) = 20 s (a is held back until the watermark reaches it; its window
    closes at 30 s). So b (15 s) meets k's old clock, at 34 s: late; a's window closes at b. q, the same but with
    no item before 20 s, is woken then (not at its window's close, 30 s): q2 (25 s) starts afresh."""
    assert live["late"] == ["b"]
    assert _windows(live, "k") == [("k", 20.0, ["a"])]
    assert next(w["at"] for w in live["windows"] if w["key"] == "k") > 14.5
    assert _windows(live, "q") == [("q", 20.0, ["q1"]), ("q", 20.0, ["q2"])]
    assert 19.5 < next(w["at"] for w in live["windows"] if w["ids"] == ["q1"]) < 24.5


@pytest.mark.engines
def test_the_preset_with_live_wakeups_wakes_keys_as_the_live_dataflow_does(live):
    """--bytewax-live-wakeups models the live operator: every window and late item agree. The preset's default,
    the operator woken as each watermark reaches an end (what the exported job and verify run), forgets k at
    11 s and takes b on time."""
    assert predicted(live_wakeups=True) == {"windows": _windows(live), "late": live["late"]}
    assert predicted() != predicted(live_wakeups=True)
