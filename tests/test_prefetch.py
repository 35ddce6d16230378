"""Computing ahead: the Prefetcher's contract, and the explorer drawing a prefetched frame exactly as a cold one."""

import threading

import numpy as np
import pytest

from explorer import generate
from explorer.core import run
from explorer.ui import Explorer
from explorer.ui.prefetch import Prefetcher


class Recorder:
    """make(): the key doubled, noting which thread computed it; "slow" waits for ``release``."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.release = threading.Event()

    def __call__(self, key):
        self.calls.append((key, threading.current_thread().name))
        if key == "slow":
            assert self.release.wait(10)
        if key == "bad":
            raise ValueError("bad key")
        return key * 2


def test_a_prefetched_key_is_computed_on_the_worker_once():
    make = Recorder()
    cache = Prefetcher(make)
    cache.prefetch(["a", "b"])
    cache.wait(10)
    assert cache.was_prefetched("a") and cache.get("a") == "aa" and cache.get("b") == "bb"
    assert all(thread.startswith("explorer-prefetch") for _, thread in make.calls)
    assert [key for key, _ in make.calls] == ["a", "b"]
    assert cache.get("c") == "cc" and make.calls[-1] == ("c", threading.current_thread().name)


def test_a_queued_key_asked_for_is_computed_at_once_not_behind_the_guesses():
    make = Recorder()
    cache = Prefetcher(make)
    cache.prefetch(["slow", "b"])  # the worker is stuck on "slow"; "b" waits in the queue
    assert cache.get("b") == "bb"
    assert ("b", threading.current_thread().name) in make.calls
    make.release.set()
    cache.wait(10)
    assert [key for key, _ in make.calls].count("b") == 1  # the queued copy was cancelled


def test_errors_are_raised_by_get_and_old_keys_are_dropped():
    make = Recorder()
    cache = Prefetcher(make, size=2)
    cache.prefetch(["bad"])
    cache.wait(10)
    with pytest.raises(ValueError, match="bad key"):
        cache.get("bad")
    cache.get("x"), cache.get("y")  # "bad" is now the least recently used of three
    assert not cache.was_prefetched("bad") and cache.was_prefetched("x") and cache.was_prefetched("y")
    cache.clear()
    assert not cache.was_prefetched("x")


def test_keys_asked_for_again_are_kept_before_new_guesses_evict_them():
    make = Recorder()
    cache = Prefetcher(make, size=4)
    cache.get("shown")
    cache.prefetch(["next", "after", "back"])
    cache.wait(10)
    cache.get("next")  # one step: "next" is shown, "after" is now one ahead and "shown" one back
    cache.prefetch(["after", "beyond", "shown"])
    cache.wait(10)
    assert [cache.was_prefetched(key) for key in ("after", "beyond", "shown", "next")] == [True] * 4
    assert not cache.was_prefetched("back")


def test_the_explorer_draws_a_prefetched_step_exactly_like_a_computed_one():
    stream = generate("textbook", events=3_000)
    warm = Explorer(stream, "textbook")
    warm.controls.delay.value = 4.0
    warm.prefetch_neighbours()  # what the page's "frame drawn" report does
    warm.wait_for_prefetch()
    ahead = warm.controls.config(delay=4.5)
    assert warm.ahead.frames.was_prefetched((ahead, warm.key.value))
    assert not warm.ahead.frames.was_prefetched((warm.controls.config(delay=5.5), warm.key.value))  # two steps, not three
    warm.controls.delay.value = 4.5
    cold = Explorer(stream, "textbook")
    cold.controls.delay.value = 4.5
    assert warm.result.config == cold.result.config == ahead
    expected = run(stream, ahead)
    assert warm.result.events["status"].tolist() == expected.events["status"].tolist()
    for a, b in zip(warm.clocks.data, cold.clocks.data):
        assert a.name == b.name
        for axis in ("x", "y"):
            assert np.array_equal(np.asarray(a[axis], dtype=float), np.asarray(b[axis], dtype=float), equal_nan=True)


def test_every_step_of_a_slider_moved_again_and_again_finds_its_frame_ready():
    explorer = Explorer(generate("textbook", events=2_000), "textbook")
    explorer.controls.delay.value = 3.0
    ready = []
    for _ in range(6):  # the page reports each drawn frame; the explorer then computes ahead
        explorer.prefetch_neighbours()
        explorer.wait_for_prefetch()
        value = explorer.controls.delay.value + explorer.controls.delay.step
        ready.append(explorer.ahead.frames.was_prefetched((explorer.controls.config(delay=value), explorer.key.value)))
        explorer.controls.delay.value = value
    assert ready == [True] * 6
    explorer.wait_for_curve()


def test_moving_a_slider_down_computes_the_values_below_it():
    explorer = Explorer(generate("textbook", events=2_000), "textbook")
    explorer.controls.allowed.value = 5.0
    explorer.controls.allowed.value = 4.0  # moving down
    explorer.prefetch_neighbours()
    explorer.wait_for_prefetch()
    key = explorer.key.value
    assert explorer.ahead.frames.was_prefetched((explorer.controls.config(allowed=3.5), key))
    assert explorer.ahead.frames.was_prefetched((explorer.controls.config(allowed=3.0), key))
    assert not explorer.ahead.frames.was_prefetched((explorer.controls.config(allowed=2.5), key))
    explorer.wait_for_curve()  # a sweep thread still running at interpreter exit aborts the process


def test_when_ready_hands_over_each_computed_value_and_skips_failures_and_keys_not_kept():
    make = Recorder()
    cache = Prefetcher(make, size=2)
    got = []
    cache.prefetch(["slow", "a", "bad"])  # a cache of two: "slow" (already running) is no longer kept
    for key in ("slow", "a", "bad", "never asked"):
        cache.when_ready(key, got.append)
    make.release.set()
    cache.wait(10)
    assert got == ["aa"]  # on the worker, once "a" was computed; "bad" raised, the others are not kept
    cache.when_ready("a", got.append)  # already computed: called at once, here
    assert got == ["aa", "aa"]


def test_a_guess_is_computed_by_ahead_and_a_value_keep_refuses_is_returned_but_not_kept():
    """The explorer's frames at 10M events: a frame computed ahead leaves out its Result (``ahead``), and one
    computed in a step, which still has it, is not kept at all (``keep``)."""
    make = Recorder()
    cache = Prefetcher(make, ahead=lambda key: key * 3, keep=lambda value: None if value == "cc" else value)
    cache.prefetch(["a"])
    cache.wait(10)
    assert cache.get("a") == "aaa" and make.calls == []
    assert cache.get("c") == "cc" and not cache.was_prefetched("c")
    assert cache.get("d") == "dd" and cache.was_prefetched("d")
