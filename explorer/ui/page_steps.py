"""Moves made in the page, and the frames the page drew itself, held against what the kernel sent.

Two things meet here (``app.py`` wires them): a move in the page is redrawn by ``latest_only`` (a burst of moves
draws its last position), and the page may have drawn the step itself from a frame it held (``page_frames.py``).
The redraw runs after the page's message, so what the page held is asked when the message is handled (``moved``),
and the page's report that it drew may come before or after the redraw (``shown_by_page``). A frame the kernel
sent for an earlier position can land on top of the page's own (the report's ``stale``): the kernel then sends
the step's frame itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from explorer.ui.frames_ahead import Request
from explorer.ui.latest_only import LatestOnly


class PageSteps:
    """``moved(request, held)`` from the page's message; ``page_drew(request)`` in the redraw; ``shown_by_page``
    when the page reports a frame it drew or could not draw."""

    def __init__(self, redraw: Callable[[], None], failed: Callable[[Exception], None]):
        self.latest = LatestOnly(redraw, failed)
        self._step: tuple[Hashable, bool] | None = None  # the page's last move, and whether it held its frame
        self._send_anyway: Hashable | None = None  # the page drew it, but a frame of the kernel's lands on top

    def moved(self, step: tuple[Request, bool] | None) -> None:
        """The page moved a control to ``step`` (the request, and whether the page held its frame then; None when
        the settings do not make a request): redraw, once the redraws asked before are done."""
        self._step = step
        self.latest.request()

    def page_drew(self, request: Request) -> bool:
        """In the redraw of a move in the page: whether the page drew ``request``'s frame itself, and it stays."""
        drew = self._step == (request, True) and request != self._send_anyway
        self._send_anyway = None
        return drew

    def shown_by_page(self, request: Hashable, current: Any, stale: bool) -> bool:
        """The page drew ``request``'s frame (``stale``: under a kernel frame still on its way), or could not draw
        it (``stale`` True too). Whether the kernel should draw the position it shows now (``current``): it does
        when the page's step is not on screen, or the controls moved in the kernel since (a preset). When that
        step's redraw is still to come, it is told to send the frame instead."""
        if self.latest.pending() and request != current:
            if stale:
                self._send_anyway = request
            return False
        return request != current or stale

    def wait(self, timeout: float) -> bool:
        return self.latest.wait(timeout)
