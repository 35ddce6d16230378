"""The ``delays`` generator: steady events whose delays follow a named distribution, scaled to the p99 the user
gives ("what if my delays were log-normal with p99 = 30 s?"). notebooks/delay-distributions.ipynb reproduces
Waterpark's two published figures with it."""

import numpy as np
import pytest

from explorer import generate
from explorer.cli import main
from explorer.errors import InputError
from explorer.streams.delays import DISTRIBUTIONS, delay_sample

S = 1_000_000


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("shape", [0.5, 2.0])
def test_each_distributions_99th_percentile_is_the_p99_asked_for(dist, shape):
    sample = delay_sample(np.random.default_rng(0), dist, 30.0, shape, 1_000_000)
    assert sample.min() >= 0
    assert np.percentile(sample, 99) == pytest.approx(30.0, rel=0.04)  # (Pareto with α = 0.5: a heavy sample tail)


def test_a_stream_has_rate_times_duration_events_per_key_in_arrival_order():
    stream = generate("delays", dist="exponential", p99=5.0, rate=20.0, duration=30.0, keys=3, seed=4)
    ev = stream.events
    assert len(ev) == 20 * 30 * 3 and sorted(stream.keys) == ["k0", "k1", "k2"]
    assert (np.diff(ev["arrival_time"].to_numpy()) >= 0).all()
    late = (ev["arrival_time"] - ev["event_time"]).to_numpy() / S
    assert late.min() >= 0 and np.percentile(late, 99) == pytest.approx(5.0, rel=0.15)
    # each key steady: one event every 1/rate s of event time
    for _, times in ev.groupby("key")["event_time"]:
        assert set(np.diff(np.sort(times.to_numpy()))) == {S // 20}


def test_a_device_that_goes_offline_delivers_what_it_recorded_when_it_is_back():
    calm = generate("delays", dist="uniform", p99=1.0, rate=10.0, duration=600.0, seed=5)
    offline = generate("delays", dist="uniform", p99=1.0, rate=10.0, duration=600.0, seed=5, offline_prob=0.002,
                       mean_offline=60.0)
    late = {name: ((s.events["arrival_time"] - s.events["event_time"]) / S).max() for name, s in
            (("calm", calm), ("offline", offline))}
    assert late["calm"] < 1.02 and late["offline"] > 20  # a backlog flushed minutes later


def test_the_command_line_writes_a_stream_and_refuses_an_unknown_distribution(tmp_path, capsys):
    out = tmp_path / "lognormal.csv"
    assert main(["generate", "delays", "--dist", "lognormal", "--p99", "30", "--rate", "5", "--duration", "60",
                 "--out", str(out)]) == 0
    assert set(out.read_text().splitlines()[0].split(",")) == {"id", "key", "event_time", "arrival_time"}
    assert main(["generate", "delays", "--dist", "normal", "--out", str(tmp_path / "x.csv")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(InputError, match="--p99 must be > 0"):
        generate("delays", p99=0.0)
