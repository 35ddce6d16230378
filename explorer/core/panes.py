"""What each emission carries, once the core has decided when windows fire: Beam's accumulation mode.

Accumulating and discarding panes make the same decisions (which events a window takes, when it fires);
they differ only in what a re-emission holds. So the engines emit whole windows, and the windows table is cut
into discarding panes here: ``shape_panes`` for a finished table (any runner), ``first_listings`` for a runner
that still holds its events as row numbers (the compiled tables), one rule for both.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.config import Emit, Panes, RunConfig, WindowKind
from explorer.core.result import Reason

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


def discarding(config: RunConfig) -> bool:
    return config.time.panes is Panes.DISCARDING


def shape_panes(windows: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """``windows`` (whole windows, in the order they were emitted) as the configured panes carry them.

    Discarding: each emission keeps only the events its window had not emitted before (the state is cleared
    when a pane fires), and ``count`` becomes their number. An UPDATE keeps its count: the window's, after
    its record (what Kafka Streams forwards)."""
    if not discarding(config) or windows.empty:
        return windows
    ids = windows["ids"].to_numpy(dtype=object)
    sizes = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    listed = np.fromiter(chain.from_iterable(ids), dtype=object, count=int(sizes.sum()))
    update = windows["reason"].to_numpy(dtype=object) == Reason.UPDATE.value
    # a Kafka Streams sliding window's update lists its whole aggregate (Window.whole): on-update it is cut as a
    # pane is (on-batch, core.coalesce keeps each window's last whole one per commit, and cuts that)
    whole = config.window.kind is WindowKind.KSTREAMS_SLIDING and config.time.emit is Emit.ON_UPDATE
    cut = first_listings(window_codes(windows, config), sizes, pd.factorize(listed)[0], update & (not whole))
    return windows.assign(ids=regroup(listed[cut.kept], cut.counts, ids),
                          count=np.where(update, windows["count"].to_numpy(), cut.counts))


def window_codes(windows: pd.DataFrame, config: RunConfig) -> Ints:
    """One integer per window an emission belongs to: its (key, start, end), or for sessions its key, as
    sessions only grow and an event is in one session."""
    columns = ["key"] if config.window.kind is WindowKind.SESSION else ["key", "start", "end"]
    return np.asarray(windows.groupby(columns, sort=False, dropna=False).ngroup().to_numpy(), dtype=np.int64)


@dataclass(frozen=True)
class Cut:
    kept: Flags  # over the listed events: does its pane carry it
    counts: Ints  # per emission: how many of its events it carries


def first_listings(window: Ints, sizes: Ints, event: Ints, own_record: Flags) -> Cut:
    """Which listed events a discarding pane keeps: emission i lists ``sizes[i]`` of ``event`` (integer codes,
    emission after emission) for ``window[i]``; a (window, event) pair is kept where it is listed first. An
    emission with ``own_record`` (an UPDATE, emit on-update) carries just its record and keeps it.

    On whole columns, not window by window: a window re-emitted a thousand times costs a hash per listed event."""
    emission = np.repeat(np.arange(len(sizes)), sizes)
    pair = window[emission].astype(np.int64) * (int(event.max(initial=0)) + 1) + event
    kept = ~pd.Series(pair).duplicated().to_numpy() | own_record[emission]
    return Cut(kept, np.bincount(emission[kept], minlength=len(sizes)))


def regroup(listed: np.ndarray, counts: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """``listed`` (emission after emission, ``counts[i]`` each) as one tuple per emission, in an object array;
    where ``whole`` (the uncut tuples) has as many, it is reused rather than rebuilt."""
    values = listed.tolist()
    starts = (np.cumsum(counts) - counts).tolist()
    return np.fromiter((w if len(w) == n else tuple(values[a:a + n])
                        for w, a, n in zip(whole, starts, counts.tolist())), dtype=object, count=len(counts))
