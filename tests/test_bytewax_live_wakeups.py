"""--bytewax-live-wakeups (core/wakeups.py) on random streams where devices' clocks run fast: both engines agree,
and where no item is stamped ahead of its arrival the option changes nothing (such a key is woken, again and
again, until its watermark reaches each end: the rule without it). The real dataflow's cases are in
tests/scenarios/bytewax_live_clock.yaml and tests/test_bytewax_live_clock.py."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.config import Scope, Strategy, TimeSource, WindowSpec, preset
from explorer.core import run
from explorer.errors import InputError
from explorer.export import TARGETS, export
from explorer.streams import stream_from_frame
from explorer.verify.engines import ENGINE_JOBS

from strategies import NO_TRIGGERS, configs, examples, frames
from test_compiled import assert_same, check


@st.composite
def live_cases(draw, fast_clocks: bool = True):
    """A stream (items up to 20 s ahead of their arrival with ``fast_clocks``) and a drawn configuration on
    Bytewax's per-key event clock with live wake-ups."""
    frame = draw(frames(fast_clocks=fast_clocks))
    config = draw(configs(has_batch="batch" in frame.columns)).with_time(
        strategy=Strategy.EVENT_CLOCK, scope=Scope.KEY, time_source=TimeSource.EVENT, bytewax_live_wakeups=True,
        **NO_TRIGGERS)
    return stream_from_frame(frame, name="fast clocks"), config


@settings(max_examples=examples(300), deadline=None)
@given(live_cases())
def test_compiled_equals_reference_with_fast_clocks(case):
    check(*case)


@settings(max_examples=examples(100), deadline=None)
@given(live_cases(fast_clocks=False))
def test_live_wakeups_change_nothing_for_keys_behind_the_clock(case):
    stream, config = case
    assert_same(run(stream, config.with_time(bytewax_live_wakeups=False), engine="reference"),
                run(stream, config, engine="reference"))


LIVE = replace(preset("bytewax"), window=WindowSpec.parse("tumbling:10")).with_time(bytewax_live_wakeups=True)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_export_says_what_it_does_with_live_wakeups(target):
    """No program reproduces them (Bytewax's drives its clock by hand), so each says so in a NOTE."""
    notes = [line for line in export(LIVE, target).splitlines() if "NOTE" in line]
    assert any("--bytewax-live-wakeups" in line for line in notes), notes


def test_verify_refuses_live_wakeups_in_one_line():
    """The exported job wakes every key before each item: verify would hold it against a prediction it cannot make."""
    with pytest.raises(InputError, match="--bytewax-live-wakeups models a live dataflow"):
        ENGINE_JOBS["bytewax"].check(LIVE)
    ENGINE_JOBS["bytewax"].check(LIVE.with_time(bytewax_live_wakeups=False))
