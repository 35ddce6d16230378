"""Spark's part of ``verify``: its drops, as Spark itself counts them per micro-batch.

Spark's append mode emits a window once, when the watermark passes its end (the prediction's ``WATERMARK``
emissions); windows still open when the input ends are not emitted. Spark does not hand the rows it drops to the
program, but it reports how many per micro-batch (``numRowsDroppedByWatermark``), and that is compared.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from explorer.core.result import Result
from explorer.errors import EngineError
from explorer.verify.jsonl import json_lines


def predicted_drops(result: Result) -> dict[int, int]:
    """Rows the watermark drops per micro-batch, counted as Spark counts them: after the partial aggregation each
    micro-batch gets, so the distinct (key, window) pairs refused in it (``spark.native_result`` measured it)."""
    refused = result.assignments[~result.assignments["admitted"].astype(bool)]
    rows = refused["event"].to_numpy()  # an assignment names its event by row
    pairs = pd.DataFrame({"batch": result.events["batch"].to_numpy()[rows],
                          "key": result.events["key"].to_numpy()[rows],
                          "start": refused["start"].to_numpy(), "end": refused["end"].to_numpy()})
    counts = pairs.drop_duplicates().groupby("batch").size()
    return {int(batch): int(n) for batch, n in zip(counts.index.tolist(), counts.tolist())}


def read_drops(path: Path) -> dict[int, int]:
    """Spark's ``numRowsDroppedByWatermark`` per micro-batch, from the job's ``progress.jsonl``."""
    out: dict[int, int] = {}
    for number, row in json_lines(path, "a micro-batch's report"):
        try:
            if int(row["dropped_by_watermark"]):
                out[int(row["micro_batch"])] = int(row["dropped_by_watermark"])
        except (ValueError, KeyError, TypeError) as error:
            raise EngineError(f"{path}: line {number} is not a micro-batch's report ({error.__class__.__name__})") from None
    return out
