"""The rules a configuration implies are derived in one place (core.rules), and every engine reads them there:
a rule added to one place only fails here."""

import ast
from dataclasses import fields, replace
from pathlib import Path

import pytest

from explorer import preset
from explorer.config import PRESETS, TimeConfig
from explorer.core.compiled.plan import State, kernel_config
from explorer.core.rules import NOT_RULES, OFF, RULE_NAMES, derive

CORE = Path(__file__).parent.parent / "explorer" / "core"
# TimeConfig's properties, as the fields they are computed from
PROPERTIES = {"watermark_delay": {"delay", "watermark_unit"}, "follows_watermark_rows": {"strategy", "time_source"}}


class _Recorder:
    """A TimeConfig that notes every field read from it."""

    def __init__(self, time: TimeConfig, seen: set[str]):
        self._time, self._seen = time, seen

    def __getattr__(self, name):
        self._seen.update(PROPERTIES.get(name, {name}))
        return getattr(self._time, name)


def fields_read(config, rule_maker=derive) -> set[str]:
    seen: set[str] = set()
    rule_maker(replace(config, time=_Recorder(config.time, seen)))
    return seen


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_derive_reads_every_time_config_field_but_those_no_decision_depends_on(name):
    """A TimeConfig field added without a rule in derive() (or a reason in NOT_RULES) would be ignored by every
    engine alike, and no comparison between them could find it."""
    every = {f.name for f in fields(TimeConfig)}
    assert set(NOT_RULES) <= every
    assert fields_read(preset(name)) == every - set(NOT_RULES)


class _Forgetting:
    """A TimeConfig whose heartbeat is never read: what a derive() that forgot the field would see."""

    def __init__(self, time):
        self._time = time

    def __getattr__(self, name):
        return TimeConfig().heartbeat if name == "heartbeat" else getattr(self._time, name)


def test_the_check_fails_on_a_derive_that_forgets_a_field():
    def forgetful(config):
        return derive(replace(config, time=_Forgetting(config.time)))

    assert fields_read(preset("flink"), forgetful) == fields_read(preset("flink")) - {"heartbeat"}


def test_the_kernel_state_holds_every_rule_as_an_int():
    """The kernel's settings are the rules, generated from them: none can be added to one and not the other."""
    assert list(State._fields[1:1 + len(RULE_NAMES)]) == list(RULE_NAMES)
    settings = kernel_config(preset("bytewax"))
    assert set(settings) == set(RULE_NAMES) and all(type(v) is int for v in settings.values())
    assert settings["idle_timeout"] == OFF and derive(preset("bytewax")).idle_timeout is None


def _attributes_read(paths: list[Path]) -> set[str]:
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                names.add(str(node.slice.value))  # settings["session"]
    return names


def test_the_compiled_kernel_reads_every_rule():
    """A rule in the record that the kernel never reads is a rule one engine forgot."""
    read = _attributes_read(sorted((CORE / "compiled").glob("*.py")))
    assert set(RULE_NAMES) - read == set()


# Where the reference engine reads each rule: from the record (engine.py's ``self.rules`` and the switches it
# copies), or, for a setting passed through unchanged, the TimeConfig field its component reads.
REFERENCE_READS = {
    "processing": "processing", "one_watermark": "one_watermark", "strategy_min": "strategy",
    "per_batch": "strategy", "bounded": "strategy", "event_clock": "strategy", "scripted": "one_watermark",
    "bound": "bound", "watermark_unit": "watermark_unit", "delay": "delay", "per_key": "per_key",
    "merged": "merge", "pick_min": "scope", "per_partition": "per_partition", "backlog": "schedule",
    "source_idle_timeout": "source_idle_timeout", "source_idle_every": "source_idle_every", "session": "session",
    "gap": "gap", "end_inclusive": "end_inclusive", "from_zero": "windows_from_zero", "strict": "session_close_strict",
    "on_merge": "session_lateness_on_merge", "overlap_only": "session_merge_overlap_only", "sessions_kept": "sessions_kept",
    "forget_when_empty": "forget_when_empty", "live_wakeups": "live_wakeups", "allowed": "allowed_lateness",
    "rule_window": "lateness_rule",
    "refuse_every": "refused_when", "kept_at_horizon": "late_kept_at_horizon", "idle_timeout": "idle_timeout",
    "idle_processing": "idle_clock", "heartbeat": "heartbeat", "on_update": "on_update",
    "late_at_once": "late_at_once",
}


def test_the_reference_engine_reads_every_rule():
    """Adding a rule means saying where the reference engine applies it, and it must be read there."""
    assert set(REFERENCE_READS) == set(RULE_NAMES)
    read = _attributes_read([p for p in CORE.glob("*.py") if p.name != "rules.py"])
    assert {rule for rule, attribute in REFERENCE_READS.items() if attribute not in read} == set()
