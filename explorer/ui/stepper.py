"""The stepper under the two clocks: replay the stream up to a micro-batch (a slider and its play button), and
pick the key whose events are drawn.

A part of its own because it sets its own widgets (a new Result moves the last batch; a new stream brings new
keys) and those changes must not read as the user's: it calls ``on_change`` only for the user's, deciding so
under the explorer's lock, which whoever sets them (a refresh, on whatever thread) holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import ipywidgets as W

from explorer.ui.figures import ALL_KEYS


class Stepper:
    """``key`` (a dropdown), ``batch`` (the slider) and ``play``; ``on_change()`` when the user moves one."""

    def __init__(self, on_change: Callable[[], None], lock: threading.RLock):
        self._on_change, self._lock = on_change, lock
        self._quiet = False
        self.key = W.Dropdown(options=[ALL_KEYS], value=ALL_KEYS, description="key", layout=W.Layout(width="22em"))
        self.batch = W.IntSlider(value=1, min=1, max=1, description="up to batch", continuous_update=True,
                                 layout=W.Layout(width="36em"))
        self.play = W.Play(value=1, min=1, max=1, interval=400, description="replay")
        W.jslink((self.play, "value"), (self.batch, "value"))
        self.key.observe(self._changed, names="value")
        self.batch.observe(self._changed, names="value")

    def _changed(self, _change: object = None) -> None:
        with self._lock:
            if not self._quiet:
                self._on_change()

    @contextmanager
    def _setting(self) -> Iterator[None]:
        with self._lock:
            self._quiet = True
            try:
                yield
            finally:
                self._quiet = False

    def show_keys(self, keys: list[str]) -> None:
        """A new stream's keys (none to pick when it has one, unnamed), all of them shown."""
        with self._setting():
            self.key.options = [ALL_KEYS] + (keys if len(keys) > 1 or keys != [""] else [])
            self.key.value = ALL_KEYS

    def follow(self, last_batch: int, reset: bool) -> None:
        """A new Result ends at ``last_batch``: the stepper's range follows, and so does its value if it showed the
        last batch (or ``reset``)."""
        with self._setting():
            follow = reset or self.batch.value >= self.batch.max
            self.batch.max = self.play.max = last_batch
            if follow:
                # the play button too: a page that connects later (Voilà, a reload) links the two by copying the
                # play button's value to the slider, and a play button left at 1 drew "up to batch 1"
                self.batch.value = self.play.value = last_batch

    @property
    def at_last_batch(self) -> bool:
        return bool(self.batch.value >= self.batch.max)

    @property
    def upto(self) -> int | None:
        """The batch to draw up to; None at the last one (everything)."""
        return None if self.at_last_batch else int(self.batch.value)

    def box(self) -> W.HBox:
        return W.HBox([self.play, self.batch, self.key], layout=W.Layout(flex_flow="row wrap"))
