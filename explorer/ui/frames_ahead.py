"""The frames of each control position: the one shown, and those next to it computed ahead and handed to the page.

A slider moves one step at a time, so while the user looks at a frame the frames one and two steps away are
computed on the prefetch thread (``prefetch.py``) and each is handed to the page as soon as it is ready
(``page_frames.py``), if the controls are still one step from it. That check runs on the prefetch thread, so
it reads no widget: the explorer's handlers post a ``Position`` (every control's value, the key, the stream and
its generation) each time the controls change, under this part's lock, and the check reads the last one posted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from explorer.budget import available_bytes
from explorer.config import RunConfig
from explorer.core import Result, run
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.ui.clocks import INTERACTIVE_BUDGET, INTERACTIVE_WINDOWS, View
from explorer.ui.controls import Controls, ControlValues, config_of
from explorer.ui.figures import TwoClocks, two_clocks
from explorer.ui.page_frames import ClocksUpdate, PageFrames
from explorer.ui.prefetch import Prefetcher

# Frames kept when the explorer computes ahead: the one shown, two steps ahead and one back along the slider
# that moved, and the delay's two neighbours.
FRAMES_AHEAD = 6
# What one kept frame holds per event (a Result and its light two-clocks frame): 112 MB at 1M events, measured
# with tracemalloc; computing one peaks near 380 bytes per event.
FRAME_BYTES_PER_EVENT = 120
COMPUTE_BYTES_PER_EVENT = 400

Request = tuple[int, RunConfig, str]  # the stream's generation, the settings and the key: what a frame is for


def frames_to_keep(events: int) -> int:
    """FRAMES_AHEAD when they (and one being computed) fit in a quarter of the memory free now, else only the
    frame shown: a million events takes about 0.8 GB of 23 GB free on this project's machine."""
    needed = events * (FRAMES_AHEAD * FRAME_BYTES_PER_EVENT + COMPUTE_BYTES_PER_EVENT)
    free = available_bytes() or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return FRAMES_AHEAD if needed <= free / 4 else 1


@dataclass
class Frame:
    """A Result and its light two-clocks frame for one key filter: what a slider step draws."""

    result: Result
    light: TwoClocks
    key: str


def make_frame(stream: Stream, request: tuple[RunConfig, str]) -> Frame:
    """The frame of ``request`` (settings, key) on ``stream``: what the Prefetcher computes."""
    config, key = request
    result = run(stream, config)
    light = two_clocks(result, key=key, budget=INTERACTIVE_BUDGET, hover=False, windows=INTERACTIVE_WINDOWS)
    return Frame(result, light, key)


@dataclass(frozen=True)
class Position:
    """Where the controls are, as the explorer's handlers last posted it: what a frame computed ahead is held against."""

    generation: int
    stream: Stream
    controls: ControlValues
    key: str
    at_last_batch: bool  # the stepper shows every batch (the only state a slider frame is drawn in)
    synced: tuple[tuple[str, str, Any], ...]  # every watched control as the page has it (PageFrames.synced)


class FramesAhead:
    """``get`` the frame of a position (computed ahead if it was); ``prefetch_neighbours`` computes those next to
    the controls and pushes each to the page when ready. ``update(view, light)`` makes a frame's page message."""

    def __init__(self, controls: Controls, page: PageFrames, update: Callable[[View, TwoClocks], ClocksUpdate]):
        self._controls, self._page, self._update = controls, page, update
        self._lock = threading.Lock()
        self._position: Position | None = None
        self.frames: Prefetcher[tuple[RunConfig, str], Frame] | None = None

    def start(self, stream: Stream) -> None:
        """A new stream: every frame kept is wrong. Computing ahead keeps the frame shown, two ahead and one
        back, and the delay's two neighbours when another slider moved last; without the memory, only the
        frame shown."""
        if self.frames is not None:
            self.frames.clear()
        self.frames = Prefetcher(partial(make_frame, stream), size=frames_to_keep(len(stream.events)))

    def _prefetcher(self) -> Prefetcher[tuple[RunConfig, str], Frame]:
        if self.frames is None:
            raise RuntimeError("no stream yet: FramesAhead.start(stream) first")
        return self.frames

    def get(self, config: RunConfig, key: str) -> Frame:
        return self._prefetcher().get((config, key))

    def post(self, position: Position) -> None:
        """The controls are at ``position`` now (the explorer's handlers, whenever they change)."""
        with self._lock:
            self._position = position

    def computes_ahead(self) -> bool:
        return self._prefetcher().size > 1

    def prefetch_neighbours(self, moving: tuple[str, int], generation: int, key: str) -> None:
        """Start computing where ``moving`` (the slider that moved last, and its direction) goes next, and the
        delay's neighbours if it is another slider (the explorer's handlers)."""
        if not self.computes_ahead():
            return
        slider, direction = moving
        steps = [(slider, value) for value in self._controls.neighbours(slider, direction)]
        if slider != "delay":  # and the delay's neighbours, the slider most moved
            steps += [("delay", value) for value in self._controls.neighbours("delay", steps=(1, -1))]
        try:
            requests = [(name, value, (generation, self._controls.config(**{name: value}), key))
                        for name, value in steps]
        except InputError:
            return
        frames = self._prefetcher()
        frames.prefetch((config, key) for _, _, (_, config, _) in requests)
        for name, value, request in requests:  # each to the page once computed (page_frames.py)
            frames.when_ready((request[1], key), partial(self._push, name, value, request))

    def _push(self, slider: str, value: float, request: Request, frame: Frame) -> None:
        """Hand a frame computed ahead to the page if it is still one slider step from the controls. This runs on
        the prefetch thread: the controls are read from the Position posted last, never from the widgets."""
        with self._lock:
            position = self._position
        if position is None:
            return
        try:
            still_near = request == (position.generation, config_of(position.controls, **{slider: value}), position.key)
        except InputError:
            return
        if still_near and position.at_last_batch and not self._page.holds(request):
            view = View(position.stream, frame.result, frame.key, light=frame.light)
            self._page.push(request, getattr(self._controls, slider), value, self._update(view, frame.light),
                            synced=position.synced)

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the frames computed ahead are ready (tests and benchmarks only)."""
        self._prefetcher().wait(timeout)
