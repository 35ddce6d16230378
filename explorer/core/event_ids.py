"""The ids one emission carries, as a slice of an array that all the run's emissions share.

Why not a tuple per emission: with allowed lateness each late element re-fires its window with the whole window
(Flink's EventTimeTrigger, Beam's accumulating panes), so n late elements into one window list n²/2 ids. A device
that flushes 20,000 buffered events into an hour it missed made 2·10⁸ ids, 9 GB as tuples; 50,000 would not fit
here at all. A window's emissions list prefixes of one list, so the compiled tables keep each listing once and
hand every emission a view of it: memory linear in events, whatever the re-firings.

It behaves as the tuple it stands for: equal to that tuple (and hashes as it), ``len``, iteration, indexing, and
slicing (which gives a tuple). The reference engine and the other runners still give tuples, and so does
an emission of at most one id.

The ids it indexes are the Stream's own: Arrow text for a loaded stream (``streams.stream.ids_for_listing``), so
an emission's ids become Python strings only when they are read, or Python strings for a Stream built by hand.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa

Ints = npt.NDArray[np.int64]
Objects = npt.NDArray[np.object_]
Ids: TypeAlias = Objects | pa.Array  # the stream's ids: Python strings, or Arrow text


class Listing:
    """What a run's emissions share: the stream's ids, row numbers into them, and per emission where its rows
    start and stop (an emission is then an index: 1.6M of them at 10M events, each object as small as it can be)."""

    __slots__ = ("ids", "rows", "starts", "stops")

    def __init__(self, ids: Ids, rows: Ints, starts: Ints, stops: Ints):
        self.ids, self.rows, self.starts, self.stops = ids, rows, starts, stops


class EventIds(Sequence[Any]):
    """``ids[rows[start:stop]]``: row numbers into the stream's ids, not the ids themselves, so a run never
    gathers ten million ids into a second array (a reference count touched per id, in window order: 1 s at 10M)."""

    __slots__ = ("_listing", "_i")

    def __init__(self, ids: Ids, rows: Ints | None = None, start: int = 0, stop: int | None = None):
        rows = np.arange(len(ids), dtype=np.int64) if rows is None else rows
        stop = len(rows) if stop is None else stop
        self._listing, self._i = Listing(ids, rows, np.array([start]), np.array([stop])), 0

    @classmethod
    def at(cls, listing: Listing, i: int) -> EventIds:
        """Emission ``i`` of a shared listing."""
        made = cls.__new__(cls)
        made._listing, made._i = listing, i
        return made

    def _ids(self) -> Objects:
        listing, i = self._listing, self._i
        return _taken(listing.ids, listing.rows[listing.starts[i]:listing.stops[i]])

    def __len__(self) -> int:
        return int(self._listing.stops[self._i] - self._listing.starts[self._i])

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


def _taken(ids: Ids, rows: Ints) -> Objects:
    """``ids[rows]`` as Python strings in an object array."""
    if isinstance(ids, np.ndarray):
        taken: Objects = ids[rows]
        return taken
    return np.array(ids.take(rows).to_pylist(), dtype=object)


def slices(ids: Ids, rows: Ints, starts: Ints, counts: Ints) -> Objects:
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


def _slices(ids: Ids, rows: Ints, starts: Ints, counts: Ints) -> Objects:
    out = np.empty(len(counts), dtype=object)
    single, empty = counts == 1, counts == 0
    out[single] = np.fromiter(((value,) for value in _taken(ids, rows[starts[single]]).tolist()), dtype=object,
                              count=int(single.sum()))
    out[empty] = np.fromiter(repeat((), int(empty.sum())), dtype=object, count=int(empty.sum()))
    many = ~(single | empty)
    listing = Listing(ids, rows, starts, starts + counts)
    out[many] = np.fromiter(map(EventIds.at, repeat(listing), np.flatnonzero(many).tolist()), dtype=object,
                            count=int(many.sum()))
    return out
