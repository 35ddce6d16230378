"""What the explorer's background threads read: each is handed what it needs by the kernel's thread, never the
widgets or the explorer's attributes as they are when the thread gets to them; and the two clocks' traces are
found by the name they were made as."""

import threading

import pytest

from explorer import generate
from explorer.config import delay_of
from explorer.ui import Explorer
from explorer.ui.clocks import PREVIEW_LINE, View
from explorer.ui.controls import Controls
from explorer.ui.figures import STATUS_LABELS, two_clocks
from explorer.ui.page_frames import PageFrames
from explorer.ui.page_steps import PageSteps


def events_drawn(explorer) -> int:
    return sum(len(t.x) for t in explorer.clocks.data if t.name in STATUS_LABELS.values())


@pytest.fixture
def moved():
    """An explorer whose delay just moved: a light frame drawn (5,000 of 8,000 events), the full one due."""
    explorer = Explorer(generate("textbook", events=8000), "textbook")
    explorer.controls.delay.value = 5.0
    assert events_drawn(explorer) <= 5_000
    return explorer


def test_the_settled_redraw_draws_what_it_was_handed_while_the_kernel_changes_the_stepper(moved):
    """The settle timer used to read the stepper's widgets when it fired: a value the kernel's thread had set but
    not yet handled was drawn by the timer, and the frame did not match what the explorer had posted."""
    with moved.batch.hold_trait_notifications():  # the kernel's thread is mid-change: the value moved, no handler yet
        moved.batch.value = 2
        moved.wait_until_settled()
        assert events_drawn(moved) == 8_000  # every event of the View handed over, not "up to batch 2"
    assert events_drawn(moved) == int((moved.result.events["batch"] <= 2).sum())  # then the handler draws batch 2


def test_the_settled_redraw_is_made_while_the_kernel_sets_the_controls_itself(moved):
    """``_quiet`` (the kernel's thread is setting controls itself, e.g. a preset) was read by the timer's draw,
    which then drew nothing: the light frame stayed, with its "showing 5,000 of 8,000" note, until the next move."""
    moved._quiet = True  # (this test's thread is the kernel's)
    try:
        moved.wait_until_settled()
    finally:
        moved._quiet = False
    assert events_drawn(moved) == 8_000 and "events" not in moved.figure_note


def test_frames_computed_ahead_are_checked_without_reading_a_control_off_the_kernels_thread(monkeypatch):
    """The prefetch thread held each frame against the controls by reading the widgets (controls.config and the
    page's context) while the kernel's thread could be setting them; it now reads the Position posted."""
    explorer = Explorer(generate("textbook", events=2000), "textbook")
    explorer.controls.delay.value = 3.0
    readers: set[str] = set()

    def recording(method):
        def read(self, *args, **kwargs):
            readers.add(threading.current_thread().name)
            return method(self, *args, **kwargs)
        return read

    monkeypatch.setattr(Controls, "config", recording(Controls.config))
    if hasattr(PageFrames, "synced"):
        monkeypatch.setattr(PageFrames, "synced", recording(PageFrames.synced))
    pushed: list[str] = []
    push = explorer.page_frames.push
    monkeypatch.setattr(explorer.page_frames, "push",
                        lambda *args, **kwargs: (pushed.append(threading.current_thread().name), push(*args, **kwargs)))
    explorer.prefetch_neighbours()
    explorer.wait_for_prefetch()
    # each pushed from the prefetch thread, or from the kernel's when its frame was ready before the kernel asked
    # to be told (Future.add_done_callback then calls back at once: a race on a loaded machine, harmless)
    kernel = threading.current_thread().name
    assert len(pushed) == 3 and all(name.startswith("explorer-prefetch") or name == kernel for name in pushed)
    assert readers == {threading.current_thread().name}
    explorer.wait_for_curve()


def test_a_trace_is_found_by_the_name_it_was_made_as_and_a_missing_name_fails_loudly():
    explorer = Explorer(generate("voltsp", scenario=3), "voltsp")
    clocks = explorer.clocks_view
    assert clocks.trace("on_time").name == "on time" and clocks.trace("preview").name == PREVIEW_LINE
    assert clocks.trace("WATERMARK").name == "emitted: watermark" and clocks.trace("effective").name == "effective watermark"
    with pytest.raises(KeyError, match="no trace 'late'"):
        clocks.trace("late")
    # every array of a frame goes to the trace of its name
    update = clocks.update(View(explorer.stream, explorer.result, explorer.key.value), two_clocks(explorer.result))
    events = explorer.result.events
    for status, label in STATUS_LABELS.items():
        assert explorer.clocks.data[clocks.index(status)].name == label
        assert len(update.traces[clocks.index(status)]["x"]) == int((events["status"] == status).sum())
    assert sorted(update.traces) == list(range(len(explorer.clocks.data)))


def test_a_burst_of_moves_from_the_page_is_drawn_at_its_last_position_only():
    """Each value the page sent was computed and drawn in its own message handler, one after the other, so ten
    quick presses cost ten frames and the last position came last of all (issue 30's bursts). Moves from the page
    now only ask ``latest_only`` for a redraw; what runs computes the position the controls hold then."""
    explorer = Explorer(generate("textbook", events=2000), "textbook")
    explorer.controls.delay.value = 3.0  # from Python: drawn before the setter returns
    assert delay_of(explorer.result.config) == 3_000_000
    computed: list[int] = []
    get = explorer.ahead.get
    explorer.ahead.get = lambda config, key: (computed.append(delay_of(config)), get(config, key))[1]
    with explorer._lock:  # the explorer is busy (a redraw under way): the page's messages keep coming
        for value in (3.5, 4.0, 4.5, 5.0, 5.5, 6.0):
            explorer.controls.delay.set_state({"value": value})  # as ipywidgets hands over the page's message
        assert delay_of(explorer.result.config) == 3_000_000  # nothing computed in the handlers
    explorer.wait_until_settled()
    assert delay_of(explorer.result.config) == 6_000_000
    assert set(computed) == {6_000_000}


def test_a_redraw_that_fails_off_the_kernels_thread_is_said_in_the_status_line():
    explorer = Explorer(generate("textbook", events=500), "textbook")
    explorer.page_steps = PageSteps(lambda: 1 / 0, explorer.page_steps.latest._failed)  # a redraw that fails
    explorer.controls.delay.set_state({"value": 4.0})
    explorer.wait_until_settled()
    assert "could not redraw: ZeroDivisionError" in explorer.status_line.html.value
