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
from explorer.errors import InputError
from explorer.streams import Stream
from explorer.ui.clocks import View
from explorer.ui.controls import Controls, ControlValues, config_of
from explorer.ui.figures import TwoClocks
from explorer.ui.frame import FRAME_BYTES, Frame, make_frame
from explorer.ui.inspector import Subject
from explorer.ui.page_frames import ClocksUpdate, PageFrames
from explorer.ui.prefetch import Prefetcher

# Frames kept when the explorer computes ahead: the one shown, two steps ahead and one back along the slider
# that moved, and the delay's two neighbours.
FRAMES_AHEAD = 6
# What a Result holds per event (112 MB at 1M events, measured with tracemalloc), and what computing one takes at
# its peak (5.3 GB peak RSS for 10M events, 1.2 GB of them the stream).
RESULT_BYTES_PER_EVENT = 120
COMPUTE_BYTES_PER_EVENT = 400

Request = tuple[int, RunConfig, str]  # the stream's generation, the settings and the key: what a frame is for


def _free() -> int:
    return available_bytes() or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def frames_to_keep(events: int) -> int:
    """FRAMES_AHEAD when they (each at most FRAME_BYTES, its Result left out) and a run computed ahead fit in half the
    memory free now, else only the frame shown. What computing ahead adds is those frames and, at worst, its run
    beside a step's own (the other half is for the Result shown and that step's run). A frame is a few MB at any
    size, so the run decides: 4 GB at 10M events, of the 17 GB free on this project's machine with the file open."""
    needed = FRAMES_AHEAD * FRAME_BYTES + events * COMPUTE_BYTES_PER_EVENT
    return FRAMES_AHEAD if needed <= _free() / 2 else 1


def results_fit(events: int) -> bool:
    """Whether the frames kept may keep their Results too (a click on a frame computed ahead then needs no run):
    when FRAMES_AHEAD Results and one being computed fit in a quarter of the memory free now, about 0.8 GB of
    23 GB free at 1M events; not at 10M (11 GB)."""
    return events * (FRAMES_AHEAD * RESULT_BYTES_PER_EVENT + COMPUTE_BYTES_PER_EVENT) <= _free() / 4


def background_workers(events: int) -> int:
    """Threads for the curve's sweep: one per core when that many runs fit in a quarter of the memory free now
    (1M events here), else one, so that the background leaves a core and memory to the slider's steps. At 10M
    events two at once held ~7 GB (the explorer's peak 14 GB, against 7.2 GB with no curve)."""
    cores = os.cpu_count() or 1
    return cores if cores * events * COMPUTE_BYTES_PER_EVENT <= _free() / 4 else 1


@dataclass(frozen=True)
class Position:
    """Where the controls are, as the explorer's handlers last posted it: what a frame computed ahead is held against."""

    generation: int
    stream: Stream
    controls: ControlValues
    key: str
    at_last_batch: bool  # the stepper shows every batch (the only state a slider frame is drawn in)
    synced: tuple[tuple[str, str, Any], ...]  # every watched control as the page has it (PageFrames.synced)
    subject: Subject | None = None  # what the inspector explains: a frame computed ahead explains it too


class FramesAhead:
    """``get`` the frame of a position (computed ahead if it was); ``prefetch_neighbours`` computes those next to
    the controls and pushes each to the page when ready. ``update(view, light)`` makes a frame's page message."""

    def __init__(self, controls: Controls, page: PageFrames, update: Callable[[View, TwoClocks], ClocksUpdate]):
        self._controls, self._page, self._update = controls, page, update
        self._lock = threading.Lock()
        self._position: Position | None = None
        self._results = True  # whether the frames kept keep their Results (results_fit)
        self.frames: Prefetcher[tuple[RunConfig, str], Frame] | None = None

    def start(self, stream: Stream) -> None:
        """A new stream: every frame kept is wrong. Computing ahead keeps the frame shown, two ahead and one
        back, and the delay's two neighbours when another slider moved last; without the memory, only the
        frame shown. Where their Results would not fit, the frames computed ahead leave them out, and a frame
        computed in a step (which has no settled data to draw without its Result) is not kept."""
        if self.frames is not None:
            self.frames.clear()
        events = len(stream.events)
        self._results = results = results_fit(events)
        self.frames = Prefetcher(partial(make_frame, stream), size=frames_to_keep(events),
                                 ahead=partial(self._ahead, stream, results),
                                 keep=lambda frame: frame if results else None)

    def _ahead(self, stream: Stream, keep_result: bool, request: tuple[RunConfig, str]) -> Frame:
        """A frame computed ahead (on the prefetch thread), following the inspector's subject posted last."""
        with self._lock:
            subject = None if self._position is None else self._position.subject
        return make_frame(stream, request, ahead=True, keep_result=keep_result, subject=subject)

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
            view = View(position.stream, frame.result, frame.key, frame=frame)
            self._page.push(request, getattr(self._controls, slider), value, self._update(view, frame.light),
                            synced=position.synced)

    def follow_subject(self, moving: tuple[str, int], generation: int, key: str) -> None:
        """The inspector explains something else now (posted already): frames kept without their Result cannot
        explain it, and each step onto one would run its Result, so they are computed again, following it."""
        if self.computes_ahead() and not self._results:
            self._prefetcher().clear()
            self.prefetch_neighbours(moving, generation, key)

    def wait(self, timeout: float = 30.0) -> None:
        """Block until the frames computed ahead are ready (tests and benchmarks only)."""
        self._prefetcher().wait(timeout)
