"""--bytewax-live-wakeups (core/wakeups.py) on random streams where devices' clocks run fast: both engines agree,
and where no item is stamped ahead of its arrival the option changes nothing (such a key is woken, again and
again, until its watermark reaches each end: the rule without it). The real dataflow's cases are in
tests/scenarios/bytewax_live_clock.yaml and tests/test_bytewax_live_clock.py."""

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.config import Scope, Strategy, TimeSource
from explorer.core import run
from explorer.streams import stream_from_frame

from strategies import configs, examples, frames
from test_compiled import assert_same, check


@st.composite
def live_cases(draw, fast_clocks: bool = True):
    """A stream (items up to 20 s ahead of their arrival with ``fast_clocks``) and a drawn configuration on
    Bytewax's per-key event clock with live wake-ups."""
    frame = draw(frames(fast_clocks=fast_clocks))
    config = draw(configs(has_batch="batch" in frame.columns)).with_time(
        strategy=Strategy.EVENT_CLOCK, scope=Scope.KEY, time_source=TimeSource.EVENT, bytewax_live_wakeups=True,
        early_firings=None, continuous_event_time=None)
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
