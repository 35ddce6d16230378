"""A slider step's frame: what it draws, small enough to keep several of at 10M events.

A frame used to be a Result with its light two-clocks data. A Result holds ~120 bytes an event, so six frames
computed ahead of a 10M-event stream needed 7 GB and only the frame shown was kept: every step was a whole run
(benchmarks/RESULTS.md). What a step draws is bounded by the figure's budgets instead: the light frame
(INTERACTIVE_BUDGET points), the settled one (POINT_BUDGET), the cards, the batch the stepper reaches, the metrics
the curve marks and what the inspector says of its subject then: a few MB at any size. A frame computed ahead
keeps its Result as well only where every kept frame's Result fits (``frames_ahead.py``); the frame shown without
one recomputes it when something asks (a click in the inspector, another key or batch, Spark's comparison).
``run`` is deterministic, and the frame keeps the stream and settings it was made from, so the Result recomputed
has the rows the frame drew, never a newer stream's.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

import numpy as np

from explorer.config import RunConfig
from explorer.core import Metrics, Result, run
from explorer.streams import Stream
from explorer.ui.cards import cards_html
from explorer.ui.figures import INTERACTIVE_BUDGET, INTERACTIVE_WINDOWS, POINT_BUDGET, TwoClocks, two_clocks
from explorer.ui.inspector import Followed, Subject, follow_subject

# What one frame without its Result holds at most: the settled frame's 40k points and 4,000 markers with their
# hover text, the light frame's 5,000 points, the watermark lines (50 points a key when each key has its own) and
# the cards; ``frame_bytes`` measures a real one (tests/test_ui_frames.py holds it under this).
FRAME_BYTES = 8_000_000
DROP_AFTER_SECONDS = 2.0  # after the settled redraw (SETTLE_SECONDS) of the step that replaced a frame


@dataclass(frozen=True)
class Frame:
    """What a slider step draws for one (settings, key), with the stream and settings it was computed from."""

    stream: Stream
    config: RunConfig
    key: str
    light: TwoClocks  # drawn while a control moves
    cards: str  # the cards' HTML
    last_batch: int  # where the stepper's range ends
    metrics: Metrics  # what the curve marks
    engine: str
    full: TwoClocks | None = None  # every point, drawn once the controls rest: computed ahead, else from ``result``
    result: Result | None = None  # None when it was computed ahead and the kept Results would not fit
    followed: Followed | None = None  # the inspector's subject when it was computed ahead, explained under it

    def recompute(self) -> Result:
        """Its Result: kept, or run again on the stream and settings it was made from."""
        return self.result if self.result is not None else run(self.stream, self.config)


class Shown:
    """The preview's frame shown, and its Result once something asked for it where the frame came without one."""

    def __init__(self) -> None:
        self.frame: Frame | None = None
        self.recomputed: Result | None = None  # the frame's Result, run again: it goes with the frame (3 GB at 10M)

    def show(self, frame: Frame) -> None:
        if frame is not self.frame:
            drop_later(self.frame, self.recomputed)
            self.frame, self.recomputed = frame, None

    def result(self, compute: bool = True) -> Result | None:
        """The frame's Result: kept with it, run again before, or (``compute``) run again now; else None."""
        frame = self.frame
        if frame is None or frame.result is not None:
            return None if frame is None else frame.result
        if self.recomputed is None and compute:
            self.recomputed = frame.recompute()
        return self.recomputed


def drop_later(*held: object) -> None:
    """Let go of ``held`` (the frame replaced, and its Result) on a timer thread once the step that replaced it
    has drawn and settled, and the views that held it have gone: freeing a 10M-event Result took the step that let
    go of it 0.4-2.7 s (its windows' lists of ids are millions of Python objects), at 3M 0.1 s."""
    timer = threading.Timer(DROP_AFTER_SECONDS, list(held).clear)
    timer.daemon = True
    timer.start()


def make_frame(stream: Stream, request: tuple[RunConfig, str], ahead: bool = False, keep_result: bool = True,
               subject: Subject | None = None) -> Frame:
    """The frame of ``request`` (settings, key) on ``stream``. ``ahead``: computed before it is asked for, so its
    settled two-clocks data too (a frame shown without its Result must draw it); ``keep_result``: with its Result;
    ``subject``: what the inspector explains, followed under it (the step shows that without a run)."""
    config, key = request
    result = run(stream, config)
    light = two_clocks(result, key=key, budget=INTERACTIVE_BUDGET, hover=False, windows=INTERACTIVE_WINDOWS)
    full = two_clocks(result, key=key, budget=POINT_BUDGET) if ahead else None
    return Frame(stream, config, key, light, cards_html(result.metrics, result.config, result.windows),
                 int(result.events["batch"].max()) if len(result.events) else 1, result.metrics, result.engine, full,
                 result if keep_result else None, None if subject is None else follow_subject(result, subject))


def frame_bytes(frame: Frame) -> int:
    """The bytes a frame holds besides its stream, settings and Result: its two-clocks arrays, the hover text and
    the cards."""
    return sys.getsizeof(frame.cards) + sum(_data_bytes(data) for data in (frame.light, frame.full) if data)


def _data_bytes(data: TwoClocks) -> int:
    arrays = [array for points in data.events.values() for array in (points.x, points.y, points.rows)]
    arrays += [*data.watermark, *data.effective, *data.bands, data.watermark_owners]
    arrays += [array for markers in data.emissions.values() for array in (markers.x, markers.y, markers.rows)]
    text = sum(sys.getsizeof(line) for markers in data.emissions.values() for line in markers.text or [])
    return sum(np.asarray(array).nbytes for array in arrays) + text
