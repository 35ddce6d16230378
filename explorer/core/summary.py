"""Metrics from a Result's tables: the same arithmetic for every runner, so their numbers compare."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.core.result import Metrics, Reason, Result, Stat, Status

REFUSED_STATUSES = (Status.SIDE_OUTPUT.value, Status.DROPPED.value)
# a window's first emission: on close (by watermark or idle timeout), by the late element that opened a window the
# watermark had passed (LATE_UPDATE at revision 1), or on-update its first record's; its latency is the window's
FIRST_EMISSIONS = (Reason.WATERMARK.value, Reason.IDLE_TIMEOUT.value, Reason.LATE_UPDATE.value, Reason.UPDATE.value)


def with_windows(result: Result, windows: pd.DataFrame) -> Result:
    """``result`` with another windows table and that table's metrics: the steps that cut or add panes after
    any runner (coalescing, early and periodic panes) change what is emitted, never a decision, so the statuses
    and assignments counted are the run's."""
    m = result.metrics
    counts = {str(status): int(n) for status, n in result.events["status"].value_counts().items()}
    admitted = int(result.assignments["admitted"].sum())
    metrics = summarize(counts, admitted, len(result.assignments) - admitted, windows, m.max_open_windows,
                        m.partly_dropped)
    return replace(result, windows=windows, metrics=metrics)


def summarize(counts: dict[str, int], admitted: int, refused: int, windows: pd.DataFrame,
              max_open_windows: int, partly_dropped: int) -> Metrics:
    """``counts``: events per status value; ``admitted``/``refused`` count (event, window) assignments;
    ``windows`` needs reason, revision, count and the two latency columns; ``partly_dropped`` counts the events a
    window refused that are not counted as refused."""
    codes, names = pd.factorize(windows["reason"].to_numpy(dtype=object))  # compare integers, not text, per row
    code = {name: i for i, name in enumerate(names)}

    def reason_is(*reasons: str) -> npt.NDArray[np.bool_]:
        return np.isin(codes, [code[r] for r in reasons if r in code])

    revision = after_early(windows, reason_is(Reason.EARLY.value))
    first = (revision == 1) & reason_is(*FIRST_EMISSIONS)
    # events in windows first emitted only at the end of input (a window's count there is all its events)
    at_end = reason_is(Reason.END_OF_STREAM.value) & (revision == 1)
    at_end_only = int(windows["count"].to_numpy()[at_end].sum()) - _shown_early(windows, at_end, reason_is(
        Reason.EARLY.value))
    total = admitted + refused
    revised = reason_is(Reason.LATE_UPDATE.value, Reason.UPDATE.value) & (revision > 1)
    return Metrics(
        events=sum(counts.values()),
        on_time=int(counts.get(Status.ON_TIME.value, 0)),
        late_updated=int(counts.get(Status.LATE_UPDATED.value, 0)),
        side_output=int(counts.get(Status.SIDE_OUTPUT.value, 0)),
        dropped=int(counts.get(Status.DROPPED.value, 0)),
        partly_dropped=partly_dropped,
        completeness=admitted / total if total else 1.0,
        completeness_live=(admitted - at_end_only) / total if total else 1.0,
        windows_emitted=int(first.sum()),
        updates=int(revised.sum()),
        end_of_stream=int(reason_is(Reason.END_OF_STREAM.value).sum()),
        latency_event=Stat.of(windows["latency_event"][first].dropna().to_numpy(dtype=np.int64)),
        latency_processing=Stat.of(windows["latency_processing"].to_numpy(dtype=np.int64)[first]),
        max_open_windows=max_open_windows,
    )


def after_early(windows: pd.DataFrame, early: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Each row's revision counting only the window's panes after its early ones (Beam's early firings): the on-time
    pane is the window's first emission, as without them, so the counts and latencies keep their meaning (an early
    pane's is 0 or less). ``early``: which rows are EARLY."""
    revision = windows["revision"].to_numpy()
    if not early.any():
        return revision
    window = windows.groupby(["key", "start", "end"], sort=False).ngroup().to_numpy()
    return revision - np.bincount(window[early], minlength=window.max() + 1)[window]


def _shown_early(windows: pd.DataFrame, rows: npt.NDArray[np.bool_], early: npt.NDArray[np.bool_]) -> int:
    """How many of the events ``rows`` carry an early pane of their window had already emitted (they reached the
    output while the input ran)."""
    if not early.any() or not rows.any():
        return 0
    shown: dict[tuple[object, int, int], set[object]] = {}
    for key, start, end, ids in windows.loc[early, ["key", "start", "end", "ids"]].itertuples(index=False):
        shown.setdefault((key, start, end), set()).update(ids)
    return sum(len(shown.get((key, start, end), set()).intersection(ids))
               for key, start, end, ids in windows.loc[rows, ["key", "start", "end", "ids"]].itertuples(index=False))
