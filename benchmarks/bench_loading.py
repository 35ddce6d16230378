"""Loading at the speed of the format (issue 31): the whole CLI process, ``validate`` and ``run``, on Parquet and
CSV files of N events, against the format's own reader, and where one process's time goes.

    .venv/bin/python benchmarks/bench_loading.py --events 1000000 10000000
    .venv/bin/python benchmarks/bench_loading.py --events 1000000 --baseline /tmp/wx-base   # an older checkout
    .venv/bin/python benchmarks/bench_loading.py --events 10000000 --split                  # read, validate, …

The goals: 10M events ``validate`` ≤ 5 s and ``run --window tumbling:1m`` ≤ 15 s at ≤ 3 GB peak RSS, and
≤ 250 bytes an event. Whole processes are timed (``/usr/bin/time``: wall, user + sys CPU, peak RSS), because the
interpreter's start, the imports and the printing are part of what a user waits for. On a shared machine the
wall clock stretches with the load, so the CPU seconds and the ratios against the floor measured in the same run
(pyarrow reading the same file in a process of its own) are the stable figures.

The files are a Kafka topic's export as a sink writes it: string ids (``ev0``…), 1,000 device keys, epoch-ms
event and arrival times (arrival = event + an exponential delay, mean 2 s), rows in arrival (offset) order; the
CSV also comes with ISO-8601 times (``…-iso.csv``). ``--split`` runs one process per file that times each phase
with ``time.perf_counter`` and ``time.process_time`` and reads the peak RSS after each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
FLOOR = {
    "parquet": "import pyarrow.parquet as pq, sys; pq.read_table(sys.argv[1])",
    "csv": "import pyarrow.csv as c, sys; c.read_csv(sys.argv[1])",
}


def make_files(events: int, folder: Path) -> list[Path]:
    """The three files of ``events`` rows (written once, then reused)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    paths = [folder / f"events-{events}.parquet", folder / f"events-{events}.csv", folder / f"events-{events}-iso.csv"]
    if all(p.exists() for p in paths):
        return paths
    rng = np.random.default_rng(1)
    event = 1_767_225_600_000 + np.arange(events, dtype=np.int64) * 10 + rng.integers(0, 50, events)
    arrival = event + rng.exponential(2000, events).astype(np.int64)
    order = np.argsort(arrival, kind="stable")  # as a topic holds them: by offset, i.e. arrival
    event, arrival = event[order], arrival[order]
    numbers = pa.array(np.arange(events)).cast(pa.string())
    ids = pc.binary_join_element_wise("ev", numbers, "")
    keys = pc.binary_join_element_wise("dev", pa.array(rng.integers(0, 1000, events)).cast(pa.string()), "")
    table = pa.table({"id": ids, "key": keys, "event_time": event, "arrival_time": arrival})
    pq.write_table(table, paths[0])
    plain = pcsv.WriteOptions(quoting_style="none")
    pcsv.write_csv(table, paths[1], plain)

    def iso(ms: np.ndarray) -> pa.Array:
        return pc.strftime(pa.array(ms.astype("datetime64[ms]")), "%Y-%m-%dT%H:%M:%SZ")

    pcsv.write_csv(table.set_column(2, "event_time", iso(event)).set_column(3, "arrival_time", iso(arrival)),
                   paths[2], plain)
    return paths


def timed(argv: list[str], pythonpath: Path = ROOT) -> dict[str, float]:
    """One process under /usr/bin/time: wall s, CPU s (user + sys), of which sys, peak RSS MB."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        env = dict(os.environ, PYTHONPATH=str(pythonpath))
        done = subprocess.run(["/usr/bin/time", "-o", out.name, "-f", "%e %U %S %M", *argv], env=env, cwd=pythonpath,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
        wall, user, system, rss = map(float, out.read().split()[-4:])
    return {"wall": wall, "cpu": user + system, "sys": system, "rss": rss / 1024}


def whole(events: int, folder: Path, baseline: Path | None) -> None:
    """The table of whole processes: the floor, then validate and run (and the baseline's, when given)."""
    python = sys.executable
    print(f"\n| file ({events:,} events) | command | wall s | CPU s (of it sys) | peak RSS MB | B/event | CPU × floor |")
    print("|---|---|---|---|---|---|---|")
    for path in make_files(events, folder):
        fmt = "parquet" if path.suffix == ".parquet" else "csv"
        floor = timed([python, "-c", FLOOR[fmt], str(path)])
        _row(path, "pyarrow reads it (floor)", floor, floor, events)
        checkouts = [("", ROOT)] + ([("baseline ", baseline)] if baseline else [])
        for label, checkout in checkouts:
            for command in (["validate"], ["run", "--window", "tumbling:1m"]):
                got = timed([python, "-m", "explorer", command[0], str(path), *command[1:]], checkout)
                _row(path, label + " ".join(command), got, floor, events)


def _row(path: Path, what: str, got: dict[str, float], floor: dict[str, float], events: int) -> None:
    print(f"| {path.name} | {what} | {got['wall']:.1f} | {got['cpu']:.1f} ({got['sys']:.1f}) | {got['rss']:,.0f} | "
          f"{got['rss'] * 1024**2 / events:.0f} | {got['cpu'] / floor['cpu']:.1f} |", flush=True)


def split(path: Path, run: bool) -> None:
    """One process's phases (in this process: call it through --phases, so the imports are counted)."""
    import contextlib
    import io
    import resource
    import time

    marks: list[tuple[str, float, float, float]] = []
    clock = [time.perf_counter(), time.process_time()]

    def mark(name: str) -> None:
        now = [time.perf_counter(), time.process_time()]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        marks.append((name, now[0] - clock[0], now[1] - clock[1], peak))
        clock[:] = now

    from explorer.cli.parser import build_config, build_parser
    from explorer.cli.text import print_run_table, print_validation
    from explorer.core.compiled import plan, tables
    from explorer.streams.files import MAX_FILE_BYTES, read_checked
    from explorer.streams import loading

    def before(held: list[Any], **options: Any) -> Any:  # a checkout from before loading._stream
        return loading.stream_from_frame(held.pop(), **options)

    load: Callable[..., Any] = getattr(loading, "_stream", before)  # lets the file's table go once read
    import explorer.cli

    getattr(explorer.cli, "_small_pages", lambda: None)()  # as the command's own process does (a newer checkout)
    mark("import")
    held = [read_checked(path, MAX_FILE_BYTES)]
    mark("read")
    stream = load(held, name=path.name, source=str(path))
    mark("validate")
    with contextlib.redirect_stdout(io.StringIO()):
        print_validation(stream, str(path))
    mark("print (validate)")
    if run:
        config, _ = build_config(build_parser().parse_args(["run", str(path), "--window", "tumbling:1m"]))
        prepared = plan.run_kernel(stream, config)
        mark("kernel")
        result = tables.result(stream, config, prepared)
        mark("tables")
        with contextlib.redirect_stdout(io.StringIO()):
            print_run_table(result, stream)
        mark("print (run)")
    for name, wall, cpu, peak in marks:
        print(f"| {path.name} | {name} | {wall:.2f} | {cpu:.2f} | {peak:,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "wx-bench-loading")
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit, run in the same session")
    parser.add_argument("--split", action="store_true", help="the phases of one process per file, not whole runs")
    parser.add_argument("--phases", type=Path, help=argparse.SUPPRESS)  # (the child process of --split)
    parser.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases:
        return split(args.phases, args.run)
    args.dir.mkdir(parents=True, exist_ok=True)
    for events in args.events:
        if not args.split:
            whole(events, args.dir, args.baseline)
            continue
        print(f"\n| file ({events:,} events) | phase | wall s | CPU s | peak RSS MB so far |")
        print("|---|---|---|---|---|")
        checkout = args.baseline or ROOT
        for path in make_files(events, args.dir):
            subprocess.run([sys.executable, __file__, "--phases", str(path), "--run"], check=True, cwd=checkout,
                           env=dict(os.environ, PYTHONPATH=str(checkout)))


if __name__ == "__main__":
    main()
