"""Memory a run will need, predicted before it starts, so a run too big for this machine is refused with the
figure and what to do instead, not ended by the kernel's OOM killer or a MemoryError half-way through.

The figures are peaks measured with tracemalloc on the compiled core (benchmarks: textbook streams, 100k
events): about 390 B per event for the per-event tables and 150–170 B per (event, window) assignment, which a
sliding window multiplies by size / slide. Partitions add arrays of their own length, not events × partitions.
A sweep holds one run's tables per evaluation in flight; a Spark run or sweep adds the local Spark session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from explorer.config import RunConfig, WindowKind
from explorer.errors import InputError
from explorer.timeutil import format_duration

BYTES_PER_EVENT = 400
BYTES_PER_ASSIGNMENT = 170
# a (record, window) join of Kafka's sliding windows: its node, its update's emission record and row (the Result
# lists every update before the record cache coalesces them) and its decision. Measured on the Kafka-like export
# (generate kafka-export, 50,052 records): D = 1, 2, 4, 8 min, 6.0M to 43.6M joins, `run` peaked at 1,403, 2,509,
# 4,441 and 8,767 MiB, ~205 B a join (benchmarks/RESULTS.md); 240 B puts each prediction above the run's own memory
BYTES_PER_KAFKA_JOIN = 240
# a periodic pane made in Python (a dict, then a table row) and each id it lists (a reference in its tuple)
BYTES_PER_PANE = 600
BYTES_PER_LISTED_ID = 8
BYTES_PER_LOADED_ROW = 600  # an Avro row read through Python objects and validated into a Stream
# Parquet and CSV are read by Arrow, a column at a time (streams/columnar.py): validate on 10M events peaked at
# 1.9 GB for Parquet and 2.0 GB for a 448 MB CSV, the interpreter included (benchmarks/RESULTS.md, issue 31)
BYTES_PER_ARROW_ROW = 250
BYTES_PER_CSV_BYTE = 5
BYTES_PER_TEXT_BYTE = 20  # JSON lines and arrays, and CSV that pandas reads: the parsed table is ~15-20 times the file
HEADROOM = 0.8  # of the memory available: the interpreter, the UI and the OS need the rest
SPARK_SESSION_BYTES = 1024**3  # a local SparkSession, JVM and Python workers, peaks near 1 GB (measured here)


def windows_per_event(config: RunConfig) -> int:
    """How many windows each event is assigned to (and so held in): size / slide for sliding windows; for cumulate
    windows, size / step at most (an event early in its cumulation is in every one), which the compiled kernel's
    table of (event, window) pairs holds for each."""
    window = config.window
    return -(-window.size // window.slide) if window.kind in (WindowKind.SLIDING, WindowKind.CUMULATE) else 1


def run_bytes(events: int, config: RunConfig, pairs: int | None = None) -> int:
    """Predicted peak memory of one run over ``events`` events, with ``pairs`` (event, window) pairs when the
    stream decides them (Kafka's sliding windows: ``core.kstreams_sliding.joins``), else as the window makes them."""
    if pairs is not None:
        return events * BYTES_PER_EVENT + BYTES_PER_KAFKA_JOIN * pairs
    return events * BYTES_PER_EVENT + BYTES_PER_ASSIGNMENT * events * windows_per_event(config)


def available_bytes() -> int | None:
    """Memory this process may still take: MemAvailable, or less when a cgroup (a container) caps it;
    None where neither can be read (then nothing is refused)."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        cap = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if cap != "max":
            found.append(int(cap) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def _fits(need: int) -> tuple[bool, int]:
    have = available_bytes()
    return have is None or need <= HEADROOM * have, have or 0


def check_load(name: str | Path, need: int, what: str) -> None:
    """Refuse a file (or an upload) whose parsed table would not fit, before reading it: a 330 MB Parquet file
    once took 9.8 GB. ``need`` is the prediction, from the row count where the format gives it, else from the
    size; ``what`` says which ("2,000,000 rows", "300 MiB of text")."""
    _refuse_unless_fits(need, f"{name}: reading its {what}", "sample it, or use the Spark sweep (curve --engine spark)")


def text_bytes(size: int) -> str:
    return f"{size / 1024**2:,.0f} MiB of text"


def check_run(events: int, config: RunConfig, pairs: int | None = None) -> None:
    """Refuse a run that would not fit, with the prediction and the ways out."""
    _refuse_unless_fits(run_bytes(events, config, pairs), f"this run ({_spread(events, config, pairs)})",
                        f"sample the stream, use {_coarser(config)}or --engine spark")


def check_sweep(events: int, configs: Sequence[RunConfig], in_flight: int, pairs: int | None = None) -> None:
    """A curve or tune evaluates ``in_flight`` configurations at once, each with a run's tables (``pairs``: the
    most (event, window) pairs one makes, when the stream decides them)."""
    if not configs:
        return
    widest = max(configs, key=windows_per_event)
    at_once = max(1, min(in_flight, len(configs)))
    _refuse_unless_fits(at_once * run_bytes(events, widest, pairs),
                        f"this sweep ({at_once} evaluation{'s' * (at_once > 1)} at once of "
                        f"{_spread(events, widest, pairs)})",
                        f"sample the stream, use {_coarser(widest)}or the Spark sweep (curve --engine spark)")


def check_spark_run(events: int, config: RunConfig) -> None:
    """Run on Spark: the local session, then the decisions read back to the driver and the Result made of them
    (each about a run's tables)."""
    _refuse_unless_fits(SPARK_SESSION_BYTES + 2 * run_bytes(events, config),
                        f"a Spark run here (the local session and the Result of {_spread(events, config)})",
                        f"sample the stream, use {_coarser(config)}or run on a cluster (--master)")


def check_spark_sweep(events: int, configs: Sequence[RunConfig], parallelism: int) -> None:
    """The Spark sweep: each of ``parallelism`` local Python workers holds a copy of the stream and runs one
    configuration at a time."""
    if not configs:
        return
    widest = max(configs, key=windows_per_event)
    per_worker = events * BYTES_PER_LOADED_ROW + run_bytes(events, widest)
    _refuse_unless_fits(SPARK_SESSION_BYTES + parallelism * per_worker,
                        f"a Spark sweep here ({parallelism} workers, each with {_spread(events, widest)})",
                        "sample the stream, or run on a cluster (--master)")


def check_panes(panes: int, listed: int, what: str, ways_out: str) -> None:
    """Periodic panes added after a run (Flink's continuous triggers): ``panes`` rows at most, listing ``listed``
    ids at most between them (an accumulating pane lists its whole window so far). Refused before any is made: an
    interval of 1 µs on 10 s windows would make ten million panes a window."""
    _refuse_unless_fits(panes * BYTES_PER_PANE + listed * BYTES_PER_LISTED_ID, what, ways_out)


def _spread(events: int, config: RunConfig, pairs: int | None = None) -> str:
    if pairs is not None:  # Kafka's sliding windows: a record joins a window per record of its key within D
        return (f"{events:,} events, up to {pairs:,} (event, window) pairs: Kafka's sliding windows make a window "
                f"per record, and a record joins those of its key's records within {format_duration(config.window.size)}"
                f", {-(-pairs // max(events, 1)):,} on average here")
    per = windows_per_event(config)
    return f"{events:,} events" + (f" × {per:,} windows each" if per > 1 else "")


def _coarser(config: RunConfig) -> str:
    if config.window.kind is WindowKind.KSTREAMS_SLIDING:
        return "a shorter time difference, "
    return f"a longer slide than {config.window}, " if windows_per_event(config) > 1 else ""


def _refuse_unless_fits(need: int, what: str, ways_out: str) -> None:
    fits, have = _fits(need)
    if not fits:
        raise InputError(f"{what} needs about {need / 1024**3:.1f} GiB but {have / 1024**3:.1f} GiB is available; "
                         f"{ways_out}")
