"""Work asked for faster than it is done runs once for the latest request: a slider moved in the page.

A user holding an arrow key, or dragging, sends the kernel a value every 50 ms or so. The kernel handles
messages one at a time, so computing and drawing each position in the message's handler (~50 ms for 20k
events when the frame was not computed ahead) puts every later value behind it: ten presses took the
kernel ten frames, each of which the page then drew, and the last position came last of all. Here the
handler only notes that the controls changed and returns; one thread of its own computes the position the
controls hold when it starts, and once more if they moved while it ran. The positions in between are never
computed or sent.

Changes made from Python (a notebook cell, a test, the explorer's own code) keep running in their handler,
so a script reads the new Result on the next line (``from_page`` tells them apart).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def from_page(change: dict[str, Any]) -> bool:
    """Whether a widget's value change came from the page: ipywidgets holds the page's state in the widget's
    ``_property_lock`` while it sets the traits and their observers run (``Widget.set_state``)."""
    return change.get("name") in getattr(change.get("owner"), "_property_lock", {})


class LatestOnly:
    """``request()`` returns at once; ``work()`` runs on a daemon thread, once for every run of requests that
    came while it was idle or busy. ``failed(exc)`` hears what ``work`` raised (the thread goes on)."""

    def __init__(self, work: Callable[[], None], failed: Callable[[Exception], None]):
        self._work, self._failed = work, failed
        self._changed = threading.Condition()
        self._asked = self._done = 0  # requests so far, and how many of them a finished run covered
        threading.Thread(target=self._loop, name="explorer-latest", daemon=True).start()

    def request(self) -> None:
        with self._changed:
            self._asked += 1
            self._changed.notify_all()

    def pending(self) -> bool:
        """Whether a request has not been worked on yet (its run may be under way)."""
        with self._changed:
            return self._done < self._asked

    def wait(self, timeout: float) -> bool:
        """Block until every request so far has been worked on (tests and scripts only); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done == self._asked, timeout)

    def _loop(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._done < self._asked)
                covered = self._asked  # a request from here on makes one more run, with the values of then
            try:
                self._work()
            except Exception as exc:  # the explorer says it in its status line; the next move tries again
                self._failed(exc)
            with self._changed:
                self._done = covered
                self._changed.notify_all()
