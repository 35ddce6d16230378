"""Frames computed ahead without their Result, as at 10M events where six Results do not fit in memory: a step
draws, reads and explains them exactly as a frame computed in the step, and runs nothing until a click asks."""

import time
import weakref

import numpy as np
import pytest

from explorer import generate
from explorer.ui import Explorer, frames_ahead
from explorer.ui.figures import ALL_KEYS
from explorer.ui.frame import DROP_AFTER_SECONDS, FRAME_BYTES, frame_bytes, make_frame

STREAM = generate("textbook", events=50_000)  # more events than either budget: both frames are samples


@pytest.fixture
def no_room_for_results(monkeypatch):
    """The memory of a 10M-event stream at test size: six frames fit, their Results do not."""
    monkeypatch.setattr(frames_ahead, "results_fit", lambda events: False)


def stepped_onto_a_frame_computed_ahead() -> Explorer:
    explorer = Explorer(STREAM, "textbook")
    explorer.controls.delay.value = 4.0
    explorer.prefetch_neighbours()  # what the page's "frame drawn" report does
    explorer.wait_for_prefetch()
    assert explorer.ahead.frames.was_prefetched((explorer.controls.config(delay=4.5), ALL_KEYS))
    explorer.controls.delay.value = 4.5
    explorer.wait_until_settled()
    assert explorer._shown.frame.result is None  # drawn from what the frame keeps
    return explorer


def computed_in_the_step() -> Explorer:
    explorer = Explorer(STREAM, "textbook")
    explorer.controls.delay.value = 4.5
    explorer.wait_until_settled()
    return explorer


def same_traces(a, b):
    for x, y in zip(a.clocks.data, b.clocks.data, strict=True):
        assert x.name == y.name
        for axis in ("x", "y"):
            assert np.array_equal(np.asarray(x[axis], dtype=float), np.asarray(y[axis], dtype=float), equal_nan=True)
        assert (None if x.text is None else list(x.text)) == (None if y.text is None else list(y.text)), x.name


def test_a_frame_computed_ahead_draws_the_same_figure_and_cards_and_runs_nothing(no_room_for_results):
    warm, cold = stepped_onto_a_frame_computed_ahead(), computed_in_the_step()
    same_traces(warm, cold)  # the settled frame: every point the budget allows, with hover text
    assert warm.clocks.layout.title.text == cold.clocks.layout.title.text
    assert warm.figure_note == cold.figure_note and "showing 40,000 of 50,000 events" in warm.figure_note
    assert warm.clocks_view.rows.keys() == cold.clocks_view.rows.keys()
    for name, rows in cold.clocks_view.rows.items():
        assert np.array_equal(warm.clocks_view.rows[name], rows), name
    assert warm.cards.value == cold.cards.value
    assert warm.batch.max == cold.batch.max
    for side in ("x", "y"):  # the light frame drawn while the slider moved
        for name, points in cold._shown.frame.light.events.items():
            assert np.array_equal(getattr(warm._shown.frame.light.events[name], side), getattr(points, side))
    assert warm._shown.recomputed is None  # the step, its settled frame and the side figures ran no Result


def test_a_click_on_a_frame_computed_ahead_explains_what_a_cold_one_does(no_room_for_results):
    warm, cold = stepped_onto_a_frame_computed_ahead(), computed_in_the_step()
    rows = warm.clocks_view.rows
    events = [int(rows[status][0]) for status in ("late_updated", "side_output", "dropped", "on_time")
              if len(rows[status])]
    windows = [int(rows[reason][-1]) for reason in ("WATERMARK", "LATE_UPDATE") if len(rows[reason])]
    assert len(events) >= 2 and windows
    for row in events:
        assert warm.inspect_event(row) == cold.inspect_event(row)
    for row in windows:
        assert warm.inspect_window(row) == cold.inspect_window(row)
    assert warm._shown.recomputed is not None  # run once, for the frame shown (and dropped with it)
    assert warm.result.config == warm._shown.frame.config == cold.result.config
    warm.prefetch_neighbours()  # one step on, onto another frame computed ahead: its own Result, not the last one
    warm.wait_for_prefetch()
    warm.controls.delay.value = cold.controls.delay.value = 5.0
    assert warm._shown.frame.result is None
    for row in events:
        assert warm.inspect_event(row) == cold.inspect_event(row)
    for row in windows:
        assert warm.inspect_window(row) == cold.inspect_window(row)


def test_replaying_up_to_a_batch_on_a_frame_computed_ahead_draws_from_its_result(no_room_for_results):
    warm, cold = stepped_onto_a_frame_computed_ahead(), computed_in_the_step()
    warm.batch.value = cold.batch.value = warm.batch.max // 2  # the frame has no data for it: its Result does
    assert warm._shown.recomputed is not None and "up to batch" in warm.clocks.layout.title.text
    same_traces(warm, cold)
    assert warm.clocks.layout.title.text == cold.clocks.layout.title.text


def test_ten_million_events_keep_six_frames_but_not_their_results(monkeypatch):
    """With the 17 GB free this project's machine has with a 10M-event file open: the old rule (six Results of
    120 bytes an event) kept one frame, so every step was a whole run."""
    monkeypatch.setattr(frames_ahead, "_free", lambda: 17_000_000_000)
    assert frames_ahead.frames_to_keep(10_000_000) == frames_ahead.FRAMES_AHEAD
    assert not frames_ahead.results_fit(10_000_000) and frames_ahead.results_fit(1_000_000)
    assert frames_ahead.frames_to_keep(40_000_000) == 1


def test_at_ten_million_events_the_curve_sweeps_on_one_thread(monkeypatch):
    """The background curve leaves a core and memory to the steps where its runs would not fit twice over in a
    quarter of the memory free (17 GB with a 10M-event file open): measured, a cold step 13 s with one thread
    against 13-20 s with two, the explorer's peak 10.1 GB against 14.1 GB. At 1M it keeps one thread per core, and
    the explorer's sweep asks for what the rule gives."""
    monkeypatch.setattr(frames_ahead, "_free", lambda: 17_000_000_000)
    monkeypatch.setattr(frames_ahead.os, "cpu_count", lambda: 2)
    assert frames_ahead.background_workers(10_000_000) == 1 and frames_ahead.background_workers(1_000_000) == 2
    asked = []
    monkeypatch.setattr("explorer.ui.sweep.background_workers", lambda events: asked.append(events) or 1)
    explorer = Explorer(STREAM, "textbook")
    explorer.wait_for_curve(120)
    assert len(STREAM.events) in asked and len(explorer.sweep.rows) == 41  # (other tests' explorers may sweep too)


def test_a_frame_without_its_result_is_as_small_as_its_budgets_say():
    config = Explorer(STREAM, "textbook").controls.config()
    frame = make_frame(STREAM, (config, ALL_KEYS), ahead=True, keep_result=False)
    assert frame.result is None and frame.full is not None and frame.full.shown == 40_000
    assert 1_000_000 < frame_bytes(frame) <= FRAME_BYTES


def test_the_inspector_follows_its_subject_onto_a_frame_computed_ahead_without_a_run(no_room_for_results):
    warm, cold = stepped_onto_a_frame_computed_ahead(), computed_in_the_step()
    row = int(warm.clocks_view.rows["dropped"][0])
    before = warm.inspect_event(row)
    assert cold.inspect_event(row) == before
    warm.wait_for_prefetch()  # the frames kept are computed again, following the event clicked
    warm.controls.delay.value = cold.controls.delay.value = 5.5
    assert warm._shown.frame.result is None and warm._shown.recomputed is None  # said without running the Result
    assert warm.inspector.value == cold.inspector.value != before


def test_the_result_of_the_frame_replaced_is_freed_after_the_step_not_in_it(no_room_for_results):
    """Freeing a 10M-event Result took the step that let go of it 0.4-2.7 s (benchmarks/RESULTS.md)."""
    explorer = Explorer(STREAM, "textbook")
    result = weakref.ref(explorer._shown.frame.result)  # the frame opened with was computed in the step
    explorer.prefetch_neighbours()
    explorer.wait_for_prefetch()
    explorer.controls.delay.value = explorer.controls.delay.value + explorer.controls.delay.step
    assert explorer._shown.frame.result is None and result() is not None
    explorer.wait_until_settled()
    time.sleep(DROP_AFTER_SECONDS + 0.5)
    assert result() is None
