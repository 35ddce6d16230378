"""Where `verify`'s time goes, per engine, on the README's example: the generated Kafka topic export (50,052 events,
20 devices), one-minute tumbling windows, each engine under its own preset and cadence. Prints one row per engine:
export, the job reading the file, engine start, run, the rest of the job's process, and the comparison, in
seconds, with the verdict. The engines other than Spark need `make engines`.

    .venv/bin/python benchmarks/bench_verify.py [--engines spark,flink,flink-java,beam,bytewax]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from explorer import preset
from explorer.cli import main as cli
from explorer.config import BatchSpec, WindowSpec
from explorer.streams import load_events
from explorer.verify import verify

S = 1_000_000
COLUMNS = {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id", "partition": "partition"}
# each engine under its preset: the README's Spark job (its tuned delay, one-minute trigger), the others at 20 s
CONFIGS = {
    "spark": lambda: replace(preset("spark", delay=939_998_000), batches=BatchSpec.parse("interval:1m")),
    "flink": lambda: preset("flink", delay=20 * S),
    "flink-java": lambda: preset("flink", delay=20 * S),
    "beam": lambda: preset("beam", delay=20 * S),
    "bytewax": lambda: preset("bytewax", delay=20 * S),
}
PARTS = ("export", "read", "engine start", "run", "process", "compare")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(CONFIGS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "topic-export.csv"
        assert cli(["generate", "kafka-export", "--out", str(events)]) == 0
        stream = load_events(events, columns=COLUMNS)
        print(f"{'engine':<11}" + "".join(f"{p:>14}" for p in PARTS) + f"{'total':>9}  verdict")
        for engine in args.engines.split(","):
            config = replace(CONFIGS[engine](), window=WindowSpec.parse("tumbling:1m"))
            verdict = verify(stream, config, engine, Path(tmp) / engine)
            seconds = verdict.seconds
            row = "".join(f"{seconds.get(p, seconds.get('engine', 0) if p == 'run' else 0):>13.1f}s" for p in PARTS)
            total = sum(seconds.values())
            words = "identical" if verdict.identical else "DIFFERENT"
            print(f"{engine:<11}{row}{total:>8.1f}s  {words}, {len(verdict.predicted):,} firings")


if __name__ == "__main__":
    main()
