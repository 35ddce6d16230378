"""The memory a load is predicted to need before the file is read (``budget.check_load``, from the row count or
the text's size) against what loading it takes, measured in a process of its own: the prediction must not be
below the measured peak (a machine would run out) nor far above it (a machine would refuse a file that fits,
as 600 B a Parquet row and 20 B a CSV byte did once the Arrow loader took 140-200)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent
MEASURE = """
import json, re, sys
from pathlib import Path
import explorer.streams.files as files
from explorer.streams import load_events

def status(field):
    return int(re.search(field + r":\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) * 1024

load_events(sys.argv[2])  # the readers' lazily loaded parts are not the table's
predicted = []
check = files.check_load
files.check_load = lambda name, need, what: (predicted.append(need), check(name, need, what))
Path("/proc/self/clear_refs").write_text("5")  # the peak so far (an import that compiled the kernel) is forgotten
before = status("VmRSS")
load_events(sys.argv[1])
print(json.dumps({"predicted": predicted[0], "took": status("VmHWM") - before}))
"""


def export(folder: Path, n: int) -> dict[str, Path]:
    """A Kafka topic's export as ``benchmarks/bench_loading.py`` writes it: string ids, 1,000 keys, epoch-ms times."""
    rng = np.random.default_rng(3)
    event = 1_767_225_600_000 + np.arange(n, dtype=np.int64) * 10 + rng.integers(0, 50, n)
    arrival = np.sort(event + rng.exponential(2000, n).astype(np.int64))
    table = pa.table({"id": pc.binary_join_element_wise("ev", pa.array(np.arange(n)).cast(pa.string()), ""),
                      "key": pc.binary_join_element_wise("dev", pa.array(rng.integers(0, 1000, n)).cast(pa.string()),
                                                         ""),
                      "event_time": event, "arrival_time": arrival})
    paths = {}
    for name, part in (("", table), ("small-", table.slice(0, 100))):  # (the small ones warm the readers up)
        paths[f"{name}parquet"], paths[f"{name}csv"] = folder / f"{name}events.parquet", folder / f"{name}events.csv"
        pq.write_table(part, paths[f"{name}parquet"])
        pcsv.write_csv(part, paths[f"{name}csv"], pcsv.WriteOptions(quoting_style="none"))
    return paths


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_load_prediction_is_within_a_factor_of_three_above_the_measured_peak(tmp_path, fmt):
    paths = export(tmp_path, 1_000_000)  # (enough rows that the table, not the reader's own code, is measured)
    done = subprocess.run([sys.executable, "-c", MEASURE, str(paths[fmt]), str(paths[f"small-{fmt}"])], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout)
    assert figures["took"] <= figures["predicted"] <= 3 * figures["took"], figures
