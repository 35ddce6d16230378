"""The kernel's side of the page frames (page_frames.py): which frames it hands the page, and what it sends
(or not) when the page says it held, drew or missed a step. The page's side is in the browser test; here the
page's messages are the dicts page_frames.js sends, given to the widget's message handler."""

import numpy as np
import pytest

from explorer import generate
from explorer.ui import Explorer


@pytest.fixture
def explorer():
    explorer = Explorer(generate("textbook", events=8000), "textbook")  # over the light frame's 5,000
    explorer.controls.delay.value = 5.0
    explorer.wait_until_settled()
    return explorer


class Page:
    """Records what the kernel sends the page; answers as page_frames.js does."""

    def __init__(self, explorer):
        self.explorer = explorer
        self.frames: dict[tuple[str, float], tuple[dict, list]] = {}  # (slider, value) → the latest frame sent
        self.cleared = 0
        self.figure_messages = []
        widget = explorer.page_frames
        send = widget.send

        def recording_send(content, buffers=None):
            if content["kind"] == "frame":
                self.frames[self.name_of(content["slider"]), content["value"]] = (content, buffers)
            else:
                self.cleared += 1
            send(content, buffers)

        widget.send = recording_send
        explorer.clocks.observe(lambda change: change["new"] and self.figure_messages.append(change["new"]),
                                names=["_py2js_update", "_py2js_restyle", "_py2js_relayout"])

    def name_of(self, model_id: str) -> str:
        controls = self.explorer.controls
        return next(name for name in controls.SLIDERS if getattr(controls, name).model_id == model_id)

    def token(self, slider: str, value: float) -> int:
        return self.frames[slider, value][0]["token"]

    def say(self, **content):
        self.explorer.page_frames._on_page_message(None, content, [])

    def hold_everything(self):
        self.say(kind="held", tokens=[content["token"] for content, _ in self.frames.values()])

    def arrays(self, slider: str, value: float) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        content, buffers = self.frames[slider, value]
        decode = lambda spec: np.frombuffer(buffers[spec["buffer"]], dtype=spec["dtype"])  # noqa: E731
        return {i: (decode(x), decode(y)) for i, x, y in zip(content["traces"], content["x"], content["y"])}


def page_holding_delay_steps(explorer) -> Page:
    """A page that holds the delay's neighbouring frames, computed ahead (the delay moved last)."""
    page = Page(explorer)
    explorer.prefetch_neighbours()
    explorer.wait_for_prefetch()
    page.hold_everything()
    return page


def drawn(explorer) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    return {i: (np.asarray(t.x, dtype=float), np.asarray(t.y, dtype=float)) for i, t in enumerate(explorer.clocks.data)}


def same(a, b) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(np.asarray(a[i][k], dtype=float), np.asarray(b[i][k], dtype=float), equal_nan=True)
        for i in a for k in (0, 1))


def test_the_page_gets_the_delay_steps_computed_ahead_each_as_the_kernel_would_draw_it(explorer):
    page = Page(explorer)
    explorer.prefetch_neighbours()  # the delay moved last (up): one and two steps up, one down
    explorer.wait_for_prefetch()
    assert sorted(page.frames) == [("delay", 4.5), ("delay", 5.5), ("delay", 6.0)]
    content, _ = page.frames["delay", 5.5]
    watched = {model_id for model_id, _, _ in content["context"]}
    assert explorer.controls.delay.model_id not in watched  # the page compares every other control
    assert {explorer.controls.allowed.model_id, explorer.key.model_id, explorer.batch.model_id} <= watched
    held = page.arrays("delay", 5.5)
    explorer.page_frames.capacity = 0  # the page holds nothing: the kernel draws the step itself
    explorer.controls.delay.value = 5.5
    assert same(held, drawn(explorer))


def test_a_step_the_page_held_is_not_sent_and_is_mirrored_once_the_page_drew_it(explorer):
    page = page_holding_delay_steps(explorer)
    before = drawn(explorer)
    explorer.controls.delay.value = 5.5
    assert page.figure_messages == [] and same(drawn(explorer), before)  # the page draws it, not the kernel
    assert explorer.result.config.time.bound == 5_500_000  # the cards and the inspector follow the step
    page.say(kind="drew", token=page.token("delay", 5.5))
    assert same(drawn(explorer), page.arrays("delay", 5.5)) and page.figure_messages == []
    assert explorer.page_frames.drawn_in_page == 1
    explorer.wait_until_settled()  # every event once the slider rests, sent against what the page shows
    assert len(page.figure_messages) == 1
    assert sum(len(explorer.clocks.data[i].x) for i in range(2, 6)) == 8000


def test_a_step_the_page_could_not_draw_is_sent_by_the_kernel(explorer):
    page = page_holding_delay_steps(explorer)
    explorer.controls.delay.value = 5.5
    assert page.figure_messages == []
    page.say(kind="missed", token=page.token("delay", 5.5))
    assert len(page.figure_messages) == 1 and same(drawn(explorer), page.arrays("delay", 5.5))


def test_a_frame_computed_for_other_settings_is_not_counted_as_held(explorer):
    page = page_holding_delay_steps(explorer)
    explorer.controls.allowed.value = 2.0
    page.figure_messages.clear()
    explorer.controls.delay.value = 5.5  # the page holds 5.5, but for allowed lateness 0
    assert len(page.figure_messages) == 1


def test_a_new_stream_clears_the_page_and_its_frames_no_longer_count(explorer):
    page = page_holding_delay_steps(explorer)
    explorer._load_stream(generate("textbook", events=2000, seed=3), reset=True)
    assert page.cleared == 1
    page.hold_everything()  # a page that missed the clear still reports the old tokens
    page.figure_messages.clear()
    explorer.controls.delay.value = 5.5
    assert len(page.figure_messages) == 1


def test_the_other_sliders_steps_go_to_the_page_too_with_the_delays_neighbours(explorer):
    page = Page(explorer)
    explorer.controls.allowed.value = 1.0  # drawn by the kernel; its neighbours are computed once the page drew
    explorer.prefetch_neighbours()  # what the page's report of that drawing starts
    explorer.wait_for_prefetch()
    assert sorted(page.frames) == [("allowed", 0.5), ("allowed", 1.5), ("allowed", 2.0), ("delay", 4.5),
                                   ("delay", 5.5)]
    content, _ = page.frames["allowed", 1.5]
    context = {model_id: value for model_id, _, value in content["context"]}
    assert explorer.controls.allowed.model_id not in context and context[explorer.controls.delay.model_id] == 5.0
    explorer.wait_until_settled()  # the first step's settled redraw, which a slow machine reaches only now
    page.hold_everything()
    page.figure_messages.clear()
    explorer.controls.allowed.value = 1.5
    assert page.figure_messages == [] and explorer.result.config.time.allowed_lateness == 1_500_000
    page.say(kind="drew", token=page.token("allowed", 1.5))
    assert same(drawn(explorer), page.arrays("allowed", 1.5))


def move_in_page(explorer, slider: str, value: float) -> None:
    """The page moves ``slider`` (as ipywidgets hands over its message); the redraw runs on latest_only's thread."""
    getattr(explorer.controls, slider).set_state({"value": value})


def test_a_page_step_the_page_held_is_not_sent_even_when_the_redraw_runs_after_its_report(explorer):
    """Moves from the page are redrawn on a thread of their own: the page's "drew" can be handled first. It was
    then taken as a control changed in the kernel, and the previous position's frame was sent over the step."""
    page = page_holding_delay_steps(explorer)
    page.figure_messages.clear()
    with explorer._lock:  # the redraw of the move waits; the page's report is handled first
        move_in_page(explorer, "delay", 5.5)
    page.say(kind="drew", token=page.token("delay", 5.5), seen=explorer.clocks._last_trace_edit_id)
    explorer.wait_until_settled()
    assert explorer.result.config.time.bound == 5_500_000
    assert len(page.figure_messages) == 1  # the settled frame only: nothing sent for the step
    assert sum(len(explorer.clocks.data[i].x) for i in range(2, 6)) == 8000


def test_a_page_step_whose_frame_came_after_the_move_is_sent_by_the_kernel(explorer):
    """Whether the page drew the step is what it held when it moved: a frame it received after (its "held"
    report handled before the redraw) was never drawn."""
    page = Page(explorer)
    explorer.prefetch_neighbours()
    explorer.wait_for_prefetch()  # the frames are on their way; the page has not said it holds them
    page.figure_messages.clear()
    with explorer._lock:
        move_in_page(explorer, "delay", 5.5)  # the page holds nothing yet
        page.hold_everything()  # now it holds 5.5
    explorer.page_steps.wait(10)
    assert len(page.figure_messages) >= 1 and same(drawn(explorer), page.arrays("delay", 5.5))


def test_a_step_the_page_drew_under_a_kernel_frame_still_on_its_way_is_sent_again(explorer):
    """The kernel sent the frame of 6.5 (the page held none); before it arrived, the page drew 5.5 itself, and
    the frame of 6.5 then landed on top. The page says which kernel edit it had seen: the kernel sends 5.5."""
    page = page_holding_delay_steps(explorer)
    seen = explorer.clocks._last_trace_edit_id
    move_in_page(explorer, "delay", 6.5)
    explorer.page_steps.wait(10)
    assert explorer.clocks._last_trace_edit_id > seen  # 6.5's frame, sent by the kernel
    move_in_page(explorer, "delay", 5.5)
    explorer.page_steps.wait(10)
    page.figure_messages.clear()
    page.say(kind="drew", token=page.token("delay", 5.5), seen=seen)
    assert len(page.figure_messages) == 1 and same(drawn(explorer), page.arrays("delay", 5.5))


def test_a_light_frame_waits_while_the_page_draws_the_kernels_previous_one(explorer):
    """Frames the kernel sent faster than the page drew them (~100 ms each with software WebGL) queued up in the
    page, each keeping it busy while the keys waited. The page now says when it has shown a kernel frame, and
    the kernel sends a move's light frame only then: the latest, not each."""
    page = Page(explorer)  # it holds no frame: the kernel draws every move
    page.say(kind="shown", edit=explorer.clocks._last_trace_edit_id)  # a page that reports what it has shown
    move_in_page(explorer, "delay", 6.5)
    explorer.page_steps.wait(10)
    assert len(page.figure_messages) == 1  # sent at once: the page had shown everything before
    for value in (7.0, 7.5):
        move_in_page(explorer, "delay", value)
        explorer.page_steps.wait(10)
    assert len(page.figure_messages) == 1  # the page has not shown 6.5's frame yet
    page.say(kind="shown", edit=explorer.clocks._last_trace_edit_id)
    assert len(page.figure_messages) == 2  # 7.5's, and never 7.0's
    shown = np.asarray(explorer.clocks_view.trace("effective").y, dtype=float)
    light = explorer._shown.frame.light.effective[1]
    assert explorer.result.config.time.bound == 7_500_000
    np.testing.assert_allclose(shown, np.asarray(light, dtype=float), rtol=1e-6, equal_nan=True)


def test_a_page_that_stopped_saying_what_it_showed_is_not_waited_for(explorer):
    page = Page(explorer)
    page.say(kind="shown", edit=explorer.clocks._last_trace_edit_id)
    move_in_page(explorer, "delay", 6.5)
    explorer.page_steps.wait(10)
    explorer.page_frames._sent_at -= 1.5  # the page has not answered for a second and a half
    move_in_page(explorer, "delay", 7.0)
    explorer.page_steps.wait(10)
    assert len(page.figure_messages) == 2
