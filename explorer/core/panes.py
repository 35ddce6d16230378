"""What each emission carries, once the core has decided when windows fire: Beam's accumulation mode.

Accumulating and discarding panes make the same decisions (which events a window takes, when it fires);
they differ only in what a re-emission holds. So the engines emit whole windows, and the Result's windows
table is cut into discarding panes here, one function for every runner.
"""

from __future__ import annotations

import pandas as pd

from explorer.config import Panes, RunConfig, WindowKind
from explorer.core.result import Reason


def shape_panes(windows: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """``windows`` (whole windows, in the order they were emitted) as the configured panes carry them.

    Discarding: each emission keeps only the events its window had not emitted before (the state is cleared
    when a pane fires), and ``count`` becomes their number. A window is its (key, start, end); a session is its
    key's, as sessions only grow and an event is in one session. An UPDATE (emit on-update) already carries
    just its own record."""
    if config.time.panes is Panes.ACCUMULATING or windows.empty:
        return windows
    session = config.window.kind is WindowKind.SESSION
    emitted: dict[object, set[str]] = {}
    ids, counts = windows["ids"].tolist(), windows["count"].to_numpy().copy()
    for i, (key, start, end, reason) in enumerate(zip(windows["key"], windows["start"], windows["end"],
                                                      windows["reason"])):
        if reason == Reason.UPDATE.value:
            continue
        before = emitted.setdefault(key if session else (key, start, end), set())
        ids[i] = tuple(event for event in ids[i] if event not in before)
        before.update(ids[i])
        counts[i] = len(ids[i])
    return windows.assign(ids=ids, count=counts)
