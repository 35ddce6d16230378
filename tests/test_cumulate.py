"""Cumulate windows (Flink SQL's CUMULATE): windows that share a start and grow by a step up to their size. The
windows an element goes to, and when each fires and what a late row does, are Flink's own tests
(tests/scenarios/flink_cumulate.yaml, run by test_engine_suites.py); here: the spec as it is written and refused,
the engines' agreement on every pair, and which presets have it."""

from dataclasses import replace

import pandas as pd
import pytest

from explorer import preset
from explorer.config import PRESETS, WindowKind, WindowSpec, what_if
from explorer.core import run
from explorer.errors import InputError
from explorer.streams import stream_from_frame

MS = 1000


def windows_of(times_ms: list[int], window: str, engine: str) -> list[tuple[int, int, tuple[str, ...]]]:
    frame = pd.DataFrame({"id": [f"e{t}" for t in times_ms], "key": "k", "event_time": times_ms})
    stream = stream_from_frame(frame, name="assigner", time_unit="ms")
    w = run(stream, replace(preset("flink"), window=WindowSpec.parse(window)), engine=engine).windows
    return sorted((int(s) // MS, int(e) // MS, tuple(sorted(ids))) for s, e, ids in zip(w["start"], w["end"], w["ids"]))


def test_a_cumulate_window_is_written_once_and_read_back():
    spec = WindowSpec.parse("cumulate:1h:15m+5m")
    assert (spec.kind, spec.size, spec.slide, spec.offset) == (WindowKind.CUMULATE, 3600 * 10**6, 900 * 10**6,
                                                                300 * 10**6)
    assert str(spec) == "cumulate:1h:15m+5m" and WindowSpec.parse(str(spec)) == spec
    # an offset names the same windows modulo the size (Flink's getWindowStartWithOffset(t, offset, size)), not the
    # step: +20m is a later start than +5m
    assert WindowSpec.parse("cumulate:1h:15m+65m") == spec
    assert WindowSpec.parse("cumulate:1h:15m+20m").offset == 1200 * 10**6


def test_a_size_that_is_not_a_whole_number_of_steps_is_refused_in_one_line():
    """Flink's CumulativeWindowAssignerTest.testInvalidParameters3: "size must be an integral multiple of step"."""
    with pytest.raises(InputError, match=r"^window cumulate: the size \(5s\) must be a whole number of steps \(2s\)"):
        WindowSpec.parse("cumulate:5s:2s")
    with pytest.raises(InputError, match="needs 2 duration"):
        WindowSpec.parse("cumulate:5s")


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_windows_that_share_a_start_are_told_apart_by_their_end(engine):
    """Every cumulate window of a start holds the elements before its end: [0, 2000) holds e0 and e1999, not e2000.
    The negative case: sliding windows of the same size and step put e2000 elsewhere (starts before 0, no shared
    start)."""
    times = [0, 1999, 2000, 2999]
    assert windows_of(times, "cumulate:3s:1s", engine) == [
        (0, 1000, ("e0",)), (0, 2000, ("e0", "e1999")), (0, 3000, ("e0", "e1999", "e2000", "e2999"))]
    assert windows_of(times, "sliding:3s:1s", engine) != windows_of(times, "cumulate:3s:1s", engine)


def test_cumulate_is_flinks_only_elsewhere_a_what_if():
    """Only Flink has CUMULATE windows (its SQL's window TVF); under any other preset they are a run that engine
    cannot make, and every front end says so."""
    cumulate = WindowSpec.parse("cumulate:10s:2s")
    assert what_if(replace(preset("flink"), window=cumulate)) == []
    others = sorted(name for name in PRESETS if name != "flink")
    assert all(what_if(replace(preset(name), window=cumulate)) == ["--window cumulate:10s:2s"] for name in others)
    assert what_if(replace(preset("spark"), window=WindowSpec.parse("sliding:10s:2s"))) == []


def test_the_window_control_offers_cumulate_with_the_slide_box_as_its_step():
    """The explorer's window kind takes cumulate: the size box is its size, the slide box its step; a size that is
    not a whole number of steps gets the one-line refusal; the offset of the config shown stays (no control moves
    it)."""
    from explorer.ui.controls import Controls

    controls = Controls()
    controls.show(replace(preset("flink"), window=WindowSpec.parse("cumulate:60s:20s+5s")))
    assert controls.window_kind.value == "cumulate" and (controls.size.value, controls.slide.value) == (60, 20)
    assert controls.config().window == WindowSpec.parse("cumulate:60s:20s+5s")
    controls.slide.value = 15
    assert controls.config().window == WindowSpec.parse("cumulate:60s:15s+5s")
    controls.slide.value = 25
    with pytest.raises(InputError, match="must be a whole number of steps"):
        controls.config()


@pytest.mark.parametrize("engine", ["reference", "compiled"])
def test_each_window_of_a_shared_start_is_outlined_from_its_own_first_arrival(engine):
    """The figure's outline of a window runs from the arrival of its first event: [0, 1000) opens with e500, which
    arrives last; [0, 2000) and [0, 3000) with e1500. Keyed by start alone, all three would open at e1500's arrival."""
    from explorer.ui.figures import first_arrivals

    frame = pd.DataFrame({"id": ["e1500", "e500"], "key": "k", "event_time": [1500, 500], "arrival_time": [0, 9000]})
    stream = stream_from_frame(frame, name="outlines", time_unit="ms")
    result = run(stream, replace(preset("flink", delay=2 * 10**6), window=WindowSpec.parse("cumulate:3s:1s")), engine=engine)
    windows = result.windows.drop_duplicates(["key", "start", "end"]).sort_values("end")
    assert (first_arrivals(result, windows) // 10**6).tolist() == [9, 0, 0]


def test_the_flink_exports_assign_cumulate_windows_and_the_others_say_they_cannot():
    """Flink's programs carry a DataStream assigner of CUMULATE windows (Flink SQL has the only one); every other
    target runs the cumulations' last, whole windows and says so in a NOTE first."""
    from explorer.export import TARGETS, export

    config = replace(preset("flink", delay=20 * 10**6), window=WindowSpec.parse("cumulate:1h:15m+5m"))
    pyflink, java = export(config, "pyflink"), export(config, "flink-java")
    compile(pyflink, "job.py", "exec")
    assert "class CumulativeEventTimeWindows(WindowAssigner)" in pyflink
    assert ".window(CumulativeEventTimeWindows.of(Time.milliseconds(SIZE_MS), Time.milliseconds(SLIDE_MS)" in pyflink
    assert "SLIDE_MS = 900000" in pyflink and "OFFSET_MS = 300000" in pyflink
    assert ("CumulativeEventTimeWindows.of(Duration.ofHours(1), Duration.ofMinutes(15), Duration.ofMinutes(5))" in java
            and "extends WindowAssigner<Object, TimeWindow>" in java)
    assert "NOTE" not in pyflink + java
    assert "CumulativeEventTimeWindows" not in export(replace(config, window=WindowSpec.parse("tumbling:1h")), "pyflink")
    for target in sorted(set(TARGETS) - {"pyflink", "flink-java"}):
        program = export(config, target)
        assert "has no CUMULATE windows" in program.splitlines()[0], target
        assert "the program runs tumbling:1h+5m" in program, target


@pytest.mark.engines
@pytest.mark.parametrize("engine", ["flink-java", "flink"])
def test_real_flink_fires_the_cumulate_windows_the_prediction_names(engine, tmp_path):
    """The exported job on Flink 2.3 (Flink's own WindowOperator in Java, PyFlink's port in Python) with the
    cumulative assigner, on a random stream of devices that go offline and flush: the same firings, each with the
    same events, and the same late side output. Among them, events the earlier windows of their cumulation refused
    and a later one took (Flink SQL's "late, but accumulated into" the windows still open). The negative check: the
    engine's run held against sliding windows of the same size and step is told apart."""
    from explorer import generate
    from explorer.verify import held_against, report, verify

    stream = generate("mobile-bursts", seed=11)
    config = replace(preset("flink", delay=8 * 10**6, allowed_lateness=0), window=WindowSpec.parse("cumulate:20:5+2"))
    verdict = verify(stream, config, engine, tmp_path)
    assert verdict.identical, "\n".join(report(verdict))
    assert len(verdict.engine_emitted) > 500 and verdict.engine_refused
    prediction = run(stream, config)
    a = prediction.assignments
    partly = set(a.loc[~a["admitted"], "event"]) & set(a.loc[a["admitted"], "event"])
    taken_by_engine = {i for w in verdict.engine_emitted for i in w.ids}
    assert partly and set(prediction.events["id"].iloc[sorted(partly)]) <= taken_by_engine
    sliding = run(stream, replace(config, window=WindowSpec.parse("sliding:20:5+2")))
    assert not held_against(verdict, sliding).identical


def test_sparks_own_query_refuses_cumulate_windows_in_one_line():
    """--engine spark-native runs Spark's own window(): it would run sliding windows of the size and step instead."""
    from explorer.spark.native_result import native_query

    with pytest.raises(InputError, match=r"^--engine spark-native: Spark has no CUMULATE windows"):
        native_query(replace(preset("spark"), window=WindowSpec.parse("cumulate:20s:5s")))
    assert native_query(replace(preset("spark"), window=WindowSpec.parse("sliding:20s:5s")))


def test_the_memory_budget_counts_every_window_of_a_cumulation():
    from explorer.budget import windows_per_event

    assert windows_per_event(replace(preset("flink"), window=WindowSpec.parse("cumulate:1h:15m"))) == 4
    assert windows_per_event(replace(preset("flink"), window=WindowSpec.parse("tumbling:1h"))) == 1
