"""The vectorised engine gives the reference engine's Result, table for table, on random streams."""

import pandas as pd
from hypothesis import given, settings

from explorer import generate, preset
from explorer.config import LatenessRule, Scope, Strategy, WindowSpec
from explorer.core import run, supports

from strategies import examples, stream_and_config

S = 1_000_000


def assert_same(a, b):
    for table in ("events", "assignments", "windows", "watermarks"):
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_dtype=False, obj=table)
    assert a.metrics == b.metrics


@settings(max_examples=examples(300), deadline=None)
@given(stream_and_config(fast_only=True))
def test_fast_equals_reference(case):
    stream, config = case
    assert supports(config, stream)
    assert_same(run(stream, config, engine="reference"), run(stream, config, engine="fast"))


def test_fast_equals_reference_on_the_sample_streams():
    from dataclasses import replace
    cases = [
        ("textbook", {"events": 3000}, preset("textbook", delay=3 * S)),
        ("mobile-bursts", {"devices": 5}, preset("voltsp", delay=2 * S, allowed_lateness=10 * S)),
        ("skewed-partitions", {}, preset("voltsp", scope=Scope.PARTITION_MIN, strategy=Strategy.BOUNDED, bound=S)),
        ("future-outliers", {}, preset("voltsp", strategy=Strategy.MAX, lateness_rule=LatenessRule.TIMESTAMP)),
    ]
    for name, options, config in cases:
        stream = generate(name, **options)
        for window in ("tumbling:10", "sliding:20:5"):
            config = replace(config, window=WindowSpec.parse(window))
            assert_same(run(stream, config, engine="reference"), run(stream, config, engine="fast"))
