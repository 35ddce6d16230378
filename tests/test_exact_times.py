"""Times are exact integers end to end (issue: hostile corpus, cases 3 and 4): ISO with up to 9 fractional digits,
epoch ns, int64 and decimal Parquet read without a float, rounded to the µs half to even (as
``timeutil.parse_duration``); whole-number columns (batch, offset) read as exact int64."""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import InputError, load_events
from explorer.streams import stream_from_frame

from strategies import examples

MIDNIGHT = 1_767_225_600  # 2026-01-01T00:00:00Z in s


def half_even_micros(ns: int) -> int:
    return int((Decimal(ns) / 1000).to_integral_value(ROUND_HALF_EVEN))


def times(text: str, tmp_path, name: str = "t.csv") -> list[int]:
    path = tmp_path / name
    path.write_text(text)
    return load_events(path).events["event_time"].tolist()


def test_iso_nanoseconds_round_half_to_even_not_cut(tmp_path):
    got = times("id,event_time\n"
                "a,2026-01-01T00:00:09.9999996Z\n"   # 9.9999996 s → 10.000000 s (was cut to 9.999999)
                "b,2026-01-01T00:00:20.0000005Z\n"   # a tie: 0.5 µs → 0 (even)
                "c,2026-01-01T00:00:30.0000015Z\n"   # a tie: 1.5 µs → 2 (even)
                "d,2026-01-01T00:00:40.0000025Z\n"   # a tie: 2.5 µs → 2 (even)
                "e,2026-01-01T00:00:50.000000501Z\n", tmp_path)  # just past the tie → 1
    base = MIDNIGHT * 10**6
    assert got == [base + 10_000_000, base + 20_000_000, base + 30_000_002, base + 40_000_002, base + 50_000_001]


def test_more_than_nine_fractional_digits_are_refused(tmp_path):
    with pytest.raises(InputError, match=r"row 1: .* more than 9 fractional digits"):
        times("id,event_time\na,2026-01-01T00:00:09.1234567891Z\n", tmp_path)


def test_epoch_nanoseconds_in_a_csv_are_exact(tmp_path):
    ns = [MIDNIGHT * 10**9 + off for off in (504, 1_500, 2_500, 999_999_999, 3_501, 7_511)]  # 504, 7511: float64 erred
    got = times("id,event_time\n" + "".join(f"e{i},{v}\n" for i, v in enumerate(ns)), tmp_path)
    assert got == [half_even_micros(v) for v in ns] == [MIDNIGHT * 10**6 + us for us in (1, 2, 2, 1_000_000, 4, 8)]


@pytest.mark.parametrize("arrow_type", [pa.int64(), pa.decimal128(19, 0), pa.timestamp("ns", tz="UTC")])
def test_parquet_nanoseconds_are_exact(tmp_path, arrow_type):
    ns = [MIDNIGHT * 10**9 + 1_500, MIDNIGHT * 10**9 + 2_501, MIDNIGHT * 10**9 + 7_499]
    values = [Decimal(v) for v in ns] if pa.types.is_decimal(arrow_type) else ns
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"event_time": pa.array(values, arrow_type)}), path)
    assert load_events(path).events["event_time"].tolist() == [half_even_micros(v) for v in ns]


def test_float_seconds_with_fractions_still_work():
    for values in ([0, 1.5, 2.25], ["0", "1.5", "2.25"], ["1e0", "0.0000005", "0.0000015"]):
        got = stream_from_frame(pd.DataFrame({"event_time": values})).events["event_time"].tolist()
        assert got == [round(Decimal(str(v)) * 10**6) for v in values]  # Decimal's round is half to even
    epoch = stream_from_frame(pd.DataFrame({"event_time": [MIDNIGHT + 0.5, MIDNIGHT + 1.25]}))
    assert epoch.events["event_time"].tolist() == [MIDNIGHT * 10**6 + 500_000, MIDNIGHT * 10**6 + 1_250_000]


def test_batch_labels_above_2_to_the_53_stay_distinct(tmp_path):
    """Commit times in ns as batch labels: 6 labels once collapsed into 1 batch through float64."""
    labels = [1_763_888_400_000_000_000 + i for i in range(6)]
    path = tmp_path / "b.csv"
    path.write_text("id,event_time,arrival_time,batch\n" + "".join(f"e{i},{i},{i + 1},{b}\n"
                                                                   for i, b in enumerate(labels)))
    stream = load_events(path)
    assert stream.events["batch"].tolist() == labels
    from explorer.streams import assign_batches
    assert len(assign_batches(stream, None).starts) - 1 == 6


@pytest.mark.parametrize("values, words", [
    (["1", "inf"], "row 2: 'inf' is not a whole number"),
    (["1", "18446744073709551616"], "row 2: '18446744073709551616' is beyond the 64-bit integer range"),
    (["1", "1e400"], "row 2: '1e400' is beyond the 64-bit integer range"),
    (["1", "2.5"], "row 2: '2.5' is not a whole number"),
])
def test_a_batch_column_holds_int64_whole_numbers(values, words):
    frame = pd.DataFrame({"event_time": [1, 2], "batch": values})
    with pytest.raises(InputError, match=words):
        stream_from_frame(frame, name="b.csv")


def test_offsets_are_exact_and_beyond_int64_is_not_called_negative():
    frame = pd.DataFrame({"event_time": [1, 2], "partition": ["0", "0"],
                          "offset": ["9007199254740992", "9007199254740993"]})  # 2^53, 2^53 + 1
    assert stream_from_frame(frame).events["offset"].tolist() == [2**53, 2**53 + 1]
    frame["offset"] = ["1", "18446744073709551615"]
    with pytest.raises(InputError) as refused:
        stream_from_frame(frame, name="o.csv")
    assert "row 2" in str(refused.value) and "64-bit" in str(refused.value)
    assert "negative" not in str(refused.value)


@pytest.mark.parametrize("year", [20000, -1000])
def test_parquet_timestamps_outside_years_1_to_9999_are_refused(tmp_path, year):
    seconds = int((dt.datetime(2000, 1, 1) - dt.datetime(1970, 1, 1)).total_seconds()) + (year - 2000) * 31_556_952
    path = tmp_path / "far.parquet"
    pq.write_table(pa.table({"event_time": pa.array([0, seconds * 10**6], pa.timestamp("us"))}), path)
    with pytest.raises(InputError, match=r"column 'event_time' row 2: .* outside the years 1–9999"):
        load_events(path)


def test_epoch_numbers_of_two_magnitudes_are_refused_unless_the_unit_is_given():
    ms = [MIDNIGHT * 1000 + i * 1000 for i in range(10)] + [MIDNIGHT + 11, MIDNIGHT + 12]
    frame = pd.DataFrame({"event_time": [str(v) for v in ms]})
    with pytest.raises(InputError) as refused:
        stream_from_frame(frame, name="m.csv")
    assert "rows 1 and 11" in str(refused.value) and "--time-unit" in str(refused.value)
    stream = stream_from_frame(frame, name="m.csv", time_unit="ms")  # the user says so: taken as written
    assert stream.events["event_time"].tolist()[-1] == (MIDNIGHT + 12) * 1000


NS = st.integers(-9 * 10**18, 9 * 10**18)  # pandas' ns timestamps: 1677–2262


@settings(max_examples=examples(60), deadline=None, database=None)
@given(ns=st.lists(st.one_of(NS.map(lambda v: v - v % 1000 + 500), NS), min_size=1, max_size=8))
def test_fuzz_nanosecond_ties_read_exactly_in_every_form(ns):
    """Any ns instant, half-µs ties included, is the same µs from epoch-ns text, int64 and ISO with 9 digits."""
    expected = [half_even_micros(v) for v in ns]
    as_text = stream_from_frame(pd.DataFrame({"event_time": [str(v) for v in ns]}), time_unit="ns")
    assert as_text.events["event_time"].tolist() == expected
    as_ints = stream_from_frame(pd.DataFrame({"event_time": np.array(ns, dtype=np.int64)}), time_unit="ns")
    assert as_ints.events["event_time"].tolist() == expected
    iso = [pd.Timestamp(v, unit="ns", tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.") + f"{v % 10**9:09d}Z" for v in ns]
    assert stream_from_frame(pd.DataFrame({"event_time": iso})).events["event_time"].tolist() == expected


@settings(max_examples=examples(60), deadline=None, database=None)
@given(values=st.lists(st.tuples(st.integers(-10**9, 10**9), st.integers(0, 10**7 - 1), st.integers(0, 7)),
                       min_size=1, max_size=8), unit=st.sampled_from(["s", "ms", "us"]))
def test_fuzz_decimal_text_is_the_exact_decimal(values, unit):
    """Decimal text, with few fractional digits (the float shortcut) or many (the decimal path), is read as
    Decimal arithmetic rounds it, half to even."""
    text = [f"{whole}.{fraction:07d}"[:len(str(whole)) + 1 + digits].rstrip(".") for whole, fraction, digits in values]
    stream = stream_from_frame(pd.DataFrame({"event_time": text}), time_unit=unit)
    factor = {"s": 10**6, "ms": 10**3, "us": 1}[unit]
    expected = [int((Decimal(t) * factor).to_integral_value(ROUND_HALF_EVEN)) for t in text]
    assert stream.events["event_time"].tolist() == expected
