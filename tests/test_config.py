"""One table of TimeConfig fields (config.TIME_FIELDS) behind the CLI, VoltSP's YAML, compare's overrides and
the explorer's controls, and one validation that all of them meet."""

import subprocess
import sys
from dataclasses import fields, replace

import pytest
import yaml
from hypothesis import given, settings

from explorer.cli import build_config, build_parser
from explorer.config import TIME_FIELDS, TimeConfig, WindowKind, WindowSpec, load_yaml_config, time_config_to_voltsp
from explorer.errors import InputError
from explorer.ui.controls import Controls

from strategies import configs, examples

S = 1_000_000


def test_every_time_config_field_has_one_row():
    assert sorted(spec.name for spec in TIME_FIELDS) == sorted(f.name for f in fields(TimeConfig))
    assert len({spec.option for spec in TIME_FIELDS}) == len(TIME_FIELDS)


@settings(max_examples=examples(200), deadline=None)
@given(configs())
def test_voltsp_yaml_round_trips_every_field(tmp_path_factory, config):
    path = tmp_path_factory.mktemp("yaml") / "config.yaml"
    path.write_text(yaml.safe_dump({"window": str(config.window), "preset": "voltsp",
                                    "timeConfig": time_config_to_voltsp(config.time, "ts")}))
    loaded = load_yaml_config(path)
    assert loaded.config.time == config.time
    assert loaded.event_time_column == ("ts" if config.time.time_source.value == "event" else None)


@settings(max_examples=examples(200), deadline=None)
@given(configs())
def test_the_command_line_sets_every_field(config):
    argv = ["run", "events.csv", "--window", str(config.window)]
    for spec in TIME_FIELDS:
        argv += [f"--{spec.option.replace('_', '-')}", spec.to_text(getattr(config.time, spec.name))]
    built, _ = build_config(build_parser().parse_args(argv))
    assert built.time == config.time and built.window == config.window


@settings(max_examples=examples(100), deadline=None)
@given(configs())
def test_the_controls_show_and_give_back_every_field(config):
    """What no control shows (heartbeat, schedule, Storm's and Bytewax's window rules) comes back from the
    config shown: Explorer(config=…) runs the configuration it was given."""
    if config.window.kind is WindowKind.SESSION:
        config = replace(config, window=WindowSpec(WindowKind.SESSION, gap=config.window.gap))
    config = replace(config, preset="voltsp")
    controls = Controls()
    controls.show(config)
    assert controls.config() == config


@pytest.mark.parametrize("where", ["flag", "yaml", "control"])
def test_a_negative_duration_gets_the_same_refusal_everywhere(tmp_path, where):
    if where == "flag":
        proc = subprocess.run([sys.executable, "-m", "explorer", "run", "--synthetic", "voltsp",
                               "--allowed-lateness=-5s"], capture_output=True, text=True)
        message = proc.stderr
        assert proc.returncode == 2 and message.count("\n") == 1
    elif where == "yaml":
        (tmp_path / "c.yaml").write_text("timeConfig:\n  eventTimeExtractor: t\n  allowedLateness: -5s\n")
        with pytest.raises(InputError) as refused:
            load_yaml_config(tmp_path / "c.yaml")
        message = str(refused.value)
    else:
        controls = Controls()
        controls.allowed.min = -10  # a slider cannot go there; a value typed into a box or set in code can
        controls.allowed.value = -5
        with pytest.raises(InputError) as refused:
            controls.config()
        message = str(refused.value)
    assert "--allowed-lateness (allowedLateness) must be ≥ 0, not -5s" in message


@pytest.mark.parametrize("changes, words", [
    ({"heartbeat": 0}, "--heartbeat (heartbeat) must be positive"),
    ({"idle_timeout": 0}, "--idle-timeout (idleTimeout) must be positive (or off)"),
    ({"delay": 10**20}, "the most it can be is 100 years"),
    ({"delay": 2.5}, "must be a duration"),
    ({"strategy": "max"}, "--strategy (watermarkStrategy) must be one of"),
])
def test_time_config_refuses_what_no_engine_means(changes, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        TimeConfig(**changes)


@pytest.mark.parametrize("spec, words", [
    ("sliding:1h:1us", "at most 1,000 are allowed"),
    ("session:0", "must be positive durations"),
    ("tumbling:99999999999999d", "up to 100 years"),
])
def test_windows_refuse_what_would_not_fit(spec, words):
    with pytest.raises(InputError, match=words):
        WindowSpec.parse(spec)


def test_a_batch_count_past_int64_is_one_line(capsys):
    """count:N divides event numbers: a count past int64 raised OverflowError deep in the batching."""
    from explorer.cli import main

    assert main(["run", "--synthetic", "voltsp", "--batches", "count:99999999999999999999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "count:N needs a whole number N from 1 to 1,000,000,000,000" in err
    assert main(["run", "--synthetic", "voltsp", "--batches", "count:1000000000000"]) == 0  # the most, and it runs
