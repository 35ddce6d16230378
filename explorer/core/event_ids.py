"""The ids one emission carries, as a slice of an array that all the run's emissions share.

Why not a tuple per emission: with allowed lateness each late element re-fires its window with the whole window
(Flink's EventTimeTrigger, Beam's accumulating panes), so n late elements into one window list n²/2 ids. A device
that flushes 20,000 buffered events into an hour it missed made 2·10⁸ ids, 9 GB as tuples; 50,000 would not fit
here at all. A window's emissions list prefixes of one list, so the compiled tables keep each listing once and
hand every emission a view of it: memory linear in events, whatever the re-firings.

It behaves as the tuple it stands for: equal to that tuple (and hashes as it), ``len``, iteration, indexing, and
slicing (which gives a tuple). The reference engine and the other runners still give tuples, and so does
an emission of at most one id.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Objects = npt.NDArray[np.object_]


class EventIds(Sequence[Any]):
    """``ids[rows[start:stop]]``: row numbers into the stream's ids, not the ids themselves, so a run never
    gathers ten million ids into a second array (a reference count touched per id, in window order: 1 s at 10M)."""

    __slots__ = ("_all", "_rows", "_start", "_stop")

    def __init__(self, ids: Objects, rows: Ints | None = None, start: int = 0, stop: int | None = None):
        self._all = ids  # a 1-d object array of ids: the stream's, shared with the run's other emissions
        self._rows = rows  # shared row numbers into it, or None: ``ids`` are this emission's own
        self._start, self._stop = start, len(ids if rows is None else rows) if stop is None else stop

    def _ids(self) -> Objects:
        if self._rows is None:
            return self._all[self._start:self._stop]
        return self._all[self._rows[self._start:self._stop]]

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self._ids()[index].tolist())
        return self._ids()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids().tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventIds):
            return len(self) == len(other) and bool((self._ids() == other._ids()).all())
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled on its own (a sweep's worker sends Results back), it takes just its ids, not the shared array."""
        return EventIds, (np.array(self._ids(), dtype=object),)


def slices(ids: Objects, rows: Ints, starts: Ints, counts: Ints) -> Objects:
    """One entry per emission, ``ids[rows[starts[i]:starts[i] + counts[i]]]``, in an object array: an EventIds,
    or where it holds at most one id a plain tuple (cheaper to build, and an emission per record, Kafka Streams'
    on-update output, makes hundreds of thousands of them).

    Built with the cycle collector paused: these objects refer only to ids and the shared arrays, so they form no
    cycle, yet each 700 of them started a collection that walked every young object again (1.6M emissions at 10M
    events: 2.5 s with it, 0.3 s without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _slices(ids, rows, starts, counts)
    finally:
        if enabled:
            gc.enable()


def _slices(ids: Objects, rows: Ints, starts: Ints, counts: Ints) -> Objects:
    out = np.empty(len(counts), dtype=object)
    single, empty = counts == 1, counts == 0
    out[single] = np.fromiter(((value,) for value in ids[rows[starts[single]]].tolist()), dtype=object,
                              count=int(single.sum()))
    out[empty] = np.fromiter(repeat((), int(empty.sum())), dtype=object, count=int(empty.sum()))
    many = ~(single | empty)
    first = starts[many]
    out[many] = np.fromiter(map(EventIds, repeat(ids), repeat(rows), first.tolist(), (first + counts[many]).tolist()),
                            dtype=object, count=len(first))
    return out
