"""A preset never runs a setting its engine lacks silently: the run is marked "what if" wherever its numbers
show (the CLI summary, the cards, the export), and each front end states the cadence the numbers assume."""

from dataclasses import fields

import pytest

from explorer import generate, preset
from explorer.cli import main
from explorer.config import PRESETS, TimeConfig, what_if
from explorer.config.presets import WINDOW_CUMULATE, WINDOW_KSTREAMS_SLIDING, WINDOW_OFFSET
from explorer.export import export
from explorer.ui.cards import cards_html
from explorer.core import run

S = 1_000_000


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_preset_as_it_comes_is_its_engine(name):
    windows = {WINDOW_OFFSET, WINDOW_CUMULATE, WINDOW_KSTREAMS_SLIDING}
    assert PRESETS[name].settings <= {f.name for f in fields(TimeConfig)} | windows
    assert what_if(preset(name)) == []
    assert what_if(preset(name, delay=7 * S)) == []  # the knob every engine has


def test_spark_has_no_allowed_lateness_and_no_idle_timeout_flink_has_the_first():
    assert what_if(preset("spark", allowed_lateness=300 * S, idle_timeout=S)) == ["--allowed-lateness 5m",
                                                                                  "--idle-timeout 1s"]
    assert what_if(preset("flink", allowed_lateness=300 * S)) == []
    assert what_if(preset("flink", session_lateness_on_merge=False)) == ["--session-lateness-on-merge false"]


def test_the_summary_the_export_and_the_cards_say_what_if(capsys):
    argv = ["run", "--synthetic", "voltsp", "--scenario", "3", "--preset", "spark", "--window", "tumbling:10"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert "cadence: one micro-batch per 1s of arrival time" in plain and "WHAT IF" not in plain
    assert main([*argv, "--allowed-lateness", "5"]) == 0
    marked = capsys.readouterr().out
    assert "WHAT IF: --allowed-lateness 5s is not a setting of spark" in marked
    config = preset("spark", allowed_lateness=5 * S)
    assert "NOTE: what if: --allowed-lateness 5s is not a setting of spark" in export(config, "flink-java")
    result = run(generate("voltsp", scenario=3), config)
    assert "what if: --allowed-lateness 5s" in cards_html(result.metrics, config)
    assert "what if" not in cards_html(result.metrics, preset("spark"))
