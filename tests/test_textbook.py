"""003's latency–completeness table, digit for digit, and agreement with an independent oracle elsewhere."""

import random
import subprocess
import sys

import pytest

from explorer import generate, preset, run
from explorer.metrics import curve
from explorer.timeutil import MICROS
from textbook_loop import textbook_loop

S = MICROS["s"]
# Output 9.4.1 of 003: L, completeness, dropped, avg emit latency
BOOK_TABLE = [(0, "65.84%", 6832, "0.87"), (2, "75.39%", 4923, "2.90"), (5, "85.00%", 2999, "5.79"),
              (10, "93.47%", 1307, "10.87"), (20, "99.48%", 105, "20.87"), (40, "100.00%", 0, "40.87")]


def oracle(seed, n, spacing, mean_delay, max_delay, width, bound):
    """003's stream rebuilt with its own random calls, fed to the independent loop."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        t = i * spacing
        pairs.append((t, t + min(rng.expovariate(1 / mean_delay), max_delay)))
    pairs.sort(key=lambda p: p[1])
    return textbook_loop(pairs, width, bound)


def test_cli_prints_output_9_4_1():
    out = subprocess.run([sys.executable, "-m", "explorer", "curve", "--synthetic", "textbook", "--preset", "textbook",
                          "--window", "tumbling:10", "--delays", "0,2,5,10,20,40"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines()[2:]]
    assert len(rows) == len(BOOK_TABLE)
    for cells, (delay, completeness, dropped, latency) in zip(rows, BOOK_TABLE):
        assert [c.strip() for c in cells[:4]] == [str(delay), completeness, str(dropped), latency]


@pytest.mark.parametrize("seed,n,spacing,mean_delay,max_delay,width,bound", [
    (1, 3000, 0.5, 6, 25, 10, 3),
    (42, 5000, 0.25, 3, 12, 5, 0.75),
    (7, 2000, 1.0, 10, 40, 20, 15),
])
def test_other_seeds_match_the_oracle(seed, n, spacing, mean_delay, max_delay, width, bound):
    stream = generate("textbook", seed=seed, events=n, spacing=spacing, mean_delay=mean_delay, max_delay=max_delay)
    from dataclasses import replace
    from explorer.config import WindowSpec
    config = replace(preset("textbook", delay=round(bound * S)), window=WindowSpec.parse(f"tumbling:{width}"))
    got = run(stream, config).metrics
    completeness, dropped, latency = oracle(seed, n, spacing, mean_delay, max_delay, width, bound)
    assert got.completeness == pytest.approx(completeness, abs=1e-12)
    assert got.dropped == dropped
    assert got.latency_event.mean == pytest.approx(latency, abs=1e-9)


def test_curve_rows_follow_the_run():
    stream = generate("textbook", events=2000)
    rows = curve(stream, preset("textbook"), [0, 5 * S])
    assert rows[0].completeness < rows[1].completeness
    assert rows[0].dropped > rows[1].dropped
    assert rows[0].avg_emit_latency < rows[1].avg_emit_latency
