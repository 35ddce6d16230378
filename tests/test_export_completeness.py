"""No export drops a setting silently: every TimeConfig field is either in the program, judged in the target's
own words, or compared with what the target's engine does and named in a NOTE when they differ."""

from dataclasses import fields, replace
from enum import Enum

import pytest

from explorer.config import PRESETS, TIME_FIELDS, RunConfig, TimeConfig, WindowSpec
from explorer.export import TARGETS, export
from explorer.export.common import ENGINE_OF_TARGET, JUDGED_IN_WORDS

ENGINE = {"voltsp-yaml": "voltsp", "voltsp-java": "voltsp", "flink-java": "flink", "pyflink": "flink",
          "pyspark": "spark", "bytewax": "bytewax", "beam-python": "beam", "beam-java": "beam",
          "kafka-streams-java": "kafka-streams"}
WINDOWS = {"tumbling": "tumbling:10", "sliding": "sliding:20:10", "session": "session:5"}


def other_value(spec, value):
    """A valid value of the field other than ``value``."""
    if spec.values is bool:
        return not value
    if spec.values is not None and issubclass(spec.values, Enum):
        return next(v for v in spec.values if v is not value)
    if spec.name == "watermark_unit":
        return 1000 if value == 1 else 1
    return 7_000_000 if value != 7_000_000 else 3_000_000


def test_every_target_has_an_engine_and_the_judged_fields_are_fields():
    assert set(ENGINE) == set(TARGETS) and set(ENGINE.values()) <= set(PRESETS)
    assert set(ENGINE_OF_TARGET.values()) <= set(PRESETS)
    assert JUDGED_IN_WORDS <= {f.name for f in fields(TimeConfig)}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("spec", [s for s in TIME_FIELDS if s.name not in JUDGED_IN_WORDS], ids=lambda s: s.name)
def test_a_setting_the_program_cannot_carry_is_named(target, spec):
    """Starting from the target engine's own rules, moving any other field off them must show: a field added to
    TimeConfig is covered here without a line of its own."""
    base = replace(PRESETS[ENGINE[target]].time)
    config_time = replace(base, **{spec.name: other_value(spec, getattr(base, spec.name))})
    config = RunConfig(window=WindowSpec.parse(WINDOWS[spec.windows[0]]), time=config_time, preset=ENGINE[target])
    text = export(config, target)
    assert f"--{spec.option.replace('_', '-')} is " in text, text
