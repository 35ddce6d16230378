"""Window offsets: tumbling and sliding windows that start at offset + k × slide (Flink's window offset, Spark's
startTime, Beam's withOffset, Bytewax's align_to). The cases are the engines' own assigner tests, run through both
evaluations; the negative case is the same stream without the offset."""

from dataclasses import replace

import pandas as pd
import pytest

from explorer import preset
from explorer.config import WindowSpec
from explorer.core import run
from explorer.errors import InputError
from explorer.export import export
from explorer.streams import stream_from_frame

# (test, window, element time in ms, the windows the engine assigns it to, in ms)
ASSIGNERS = [
    # Flink's TumblingEventTimeWindowsTest
    ("testWindowAssignmentWithGlobalOffset", "tumbling:5000ms+100ms", 100, [(100, 5100)]),
    ("testWindowAssignmentWithGlobalOffset", "tumbling:5000ms+100ms", 5099, [(100, 5100)]),
    ("testWindowAssignmentWithGlobalOffset", "tumbling:5000ms+100ms", 5100, [(5100, 10100)]),
    ("testWindowAssignmentWithNegativeGlobalOffset", "tumbling:5000ms+-100ms", 0, [(-100, 4900)]),
    ("testWindowAssignmentWithNegativeGlobalOffset", "tumbling:5000ms+-100ms", 4900, [(4900, 9900)]),
    ("testTimeUnits", "tumbling:5s+1s", 5999, [(1000, 6000)]),
    # Flink's SlidingEventTimeWindowsTest
    ("testWindowAssignmentWithOffset", "sliding:5000ms:1000ms+100ms", 100,
     [(-3900, 1100), (-2900, 2100), (-1900, 3100), (-900, 4100), (100, 5100)]),
    ("testWindowAssignmentWithOffset", "sliding:5000ms:1000ms+100ms", 5100,
     [(1100, 6100), (2100, 7100), (3100, 8100), (4100, 9100), (5100, 10100)]),
    ("testWindowAssignmentWithNegativeOffset", "sliding:5000ms:1000ms+-100ms", 4899,
     [(-100, 4900), (900, 5900), (1900, 6900), (2900, 7900), (3900, 8900)]),
    ("testTimeUnits", "sliding:5s:1s+500ms", 100, [(-4500, 500), (-3500, 1500), (-2500, 2500), (-1500, 3500), (-500, 4500)]),
    # Beam's window_test.py (units as the test's: ms here)
    ("test_fixed_windows", "tumbling:5ms+2ms", 11, [(7, 12)]),
    ("test_fixed_windows", "tumbling:5ms+2ms", 12, [(12, 17)]),
    ("test_fixed_windows (offset out of range)", "tumbling:5ms+12ms", 11, [(7, 12)]),
    ("test_sliding_windows_assignment", "sliding:15ms:5ms+2ms", 8, [(-3, 12), (2, 17), (7, 22)]),
]
MS = 1000


def windows_of(times_ms: list[int], window: str, engine: str) -> list[tuple[int, int, tuple[str, ...]]]:
    frame = pd.DataFrame({"id": [f"e{t}" for t in times_ms], "key": "k", "event_time": times_ms})
    stream = stream_from_frame(frame, name="assigner", time_unit="ms")
    config = replace(preset("flink"), window=WindowSpec.parse(window))
    w = run(stream, config, engine=engine).windows
    return sorted((int(s) // MS, int(e) // MS, tuple(sorted(ids))) for s, e, ids in zip(w["start"], w["end"], w["ids"]))


@pytest.mark.parametrize("engine", ["reference", "compiled"])
@pytest.mark.parametrize("test, window, t, expected", ASSIGNERS)
def test_an_element_goes_to_the_windows_the_engines_own_assigner_tests_name(test, window, t, expected, engine):
    assert [(s, e) for s, e, _ in windows_of([t], window, engine)] == expected


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_beams_regrouped_offset_windows_hold_the_elements_its_test_names(engine):
    """Beam's test_rewindow_regroup: elements 0…4 in FixedWindows(5, offset=3) group as [0, 1, 2] in [-2, 3)
    and [3, 4] in [3, 8); without the offset they would all be in [0, 5)."""
    assert windows_of([0, 1, 2, 3, 4], "tumbling:5ms+3ms", engine) == [(-2, 3, ("e0", "e1", "e2")), (3, 8, ("e3", "e4"))]
    assert windows_of([0, 1, 2, 3, 4], "tumbling:5ms", engine) == [(0, 5, ("e0", "e1", "e2", "e3", "e4"))]


def test_an_offset_is_written_once_and_read_back():
    assert str(WindowSpec.parse("tumbling:1d+1h")) == "tumbling:24h+1h"
    assert WindowSpec.parse("tumbling:1d+25h") == WindowSpec.parse("tumbling:1d+1h")  # the same windows, one name
    assert WindowSpec.parse("tumbling:1d+-8h") == WindowSpec.parse("tumbling:1d+16h")  # Flink's docs: China's days
    assert WindowSpec.parse(str(WindowSpec.parse("sliding:1h:15m+5m"))) == WindowSpec.parse("sliding:1h:15m+5m")
    with pytest.raises(InputError, match="a session window has no offset"):
        WindowSpec.parse("session:30s+5s")


def test_exports_carry_the_offset_in_each_engines_words_or_say_they_cannot():
    config = replace(preset("spark", delay=10 * 10**6), window=WindowSpec.parse("tumbling:1h+15m"))
    assert "'3600000000 microseconds', '3600000000 microseconds', '900000000 microseconds'" in export(config, "pyspark")
    bytewax = replace(preset("bytewax"), window=WindowSpec.parse("sliding:1h:15m+5m"))
    program = export(bytewax, "bytewax")
    assert "OFFSET_US = 300000000" in program and "align_to=EPOCH + us(OFFSET_US)" in program
    beam = replace(preset("beam"), window=WindowSpec.parse("tumbling:10s+2s"))
    assert ".withOffset(" in export(beam, "beam-java") and "aligns its windows to the epoch" not in export(beam, "beam-java")
    kafka = replace(preset("kafka-streams"), window=WindowSpec.parse("tumbling:10s+2s"))
    assert "NOTE: Kafka Streams aligns its windows to the epoch; here they start 2s later" in export(kafka, "kafka-streams-java")


def test_an_offset_under_an_engine_without_one_is_a_what_if():
    """Kafka Streams' and VoltSP's windows start at the epoch: an offset there is a run those engines cannot make,
    and every front end says so (Flink, Spark, Beam and Bytewax have one)."""
    from explorer.config import what_if

    offset = WindowSpec.parse("tumbling:10s+2s")
    assert what_if(replace(preset("kafka-streams"), window=offset)) == ["--window tumbling:10s+2s"]
    assert what_if(replace(preset("voltsp"), window=offset)) == ["--window tumbling:10s+2s"]
    assert all(what_if(replace(preset(name), window=offset)) == [] for name in ("spark", "flink", "beam", "bytewax"))
    assert what_if(replace(preset("kafka-streams"), window=WindowSpec.parse("tumbling:10s"))) == []
