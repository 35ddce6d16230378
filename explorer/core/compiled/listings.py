"""Every emission's events, read back from the kernel's window lists as row numbers, each list read once.

The kernel keeps a window's events as a linked list it only appends to, and an emission records where its
window's list began (its head) and how many events it held. So the emissions of one head list prefixes of that
head's longest listing: reading that listing once and handing each emission a slice keeps the whole table linear
in events, however often a window re-fires (each late element of a flush re-fires its window with all of it).
A session that absorbs another appends the other's events to its list; Result lists a session's events in
arrival order, so a listing that a merge has put out of order is sorted, once per stretch between two merges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from explorer.core.compiled.plan import Prepared
from explorer.core.panes import first_listings

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Listings:
    """Emission i carries ``pool[start[i]:start[i] + count[i]]`` (row numbers, in arrival order)."""

    pool: Ints
    start: Ints
    count: Ints


@dataclass(frozen=True)
class _HeadLists:
    """Each list head's longest listing, read once: ``rows`` holds them head after head, in list order; per
    emission, where its head's listing starts in ``rows`` and which head it is."""

    rows: Ints
    head_start: Ints  # per head
    head_length: Ints  # per head
    head_of: Ints  # per emission: its head's index (emissions that list nothing share one of length 0)


def _read_heads(prepared: Prepared, heads: Ints, counts: Ints) -> _HeadLists:
    from explorer.core.compiled.driver import gather_ids

    head_of, unique = pd.factorize(np.where(counts > 0, heads, -1))  # (hashed: in any order, not sorted)
    longest = np.zeros(len(unique), np.int64)
    np.maximum.at(longest, head_of, counts)
    state = prepared.state
    rows = gather_ids(state.m, state.node_row, state.node_next, np.ascontiguousarray(unique), longest)
    return _HeadLists(rows, np.cumsum(longest) - longest, longest, head_of)


def _concatenated(source: Ints, begin: Ints, length: Ints) -> Ints:
    """``source[begin[i]:begin[i] + length[i]]`` for every i, one after another, in one gather."""
    offsets = np.cumsum(length) - length
    return source[np.repeat(begin - offsets, length) + np.arange(int(length.sum()))]


def _with_records(pool: Ints, start: Ints, counts: Ints, update: Flags,
                  records: Ints) -> Listings:
    """An UPDATE (emit on-update) carries the one record it forwards: appended to the pool."""
    if not update.any():  # (no copy of a pool of every event)
        return Listings(pool, start, counts)
    start, counts = start.copy(), counts.copy()
    start[update] = len(pool) + np.arange(int(update.sum()))
    counts[update] = 1
    return Listings(np.concatenate([pool, records[update]]), start, counts)


def accumulated(prepared: Prepared, heads: Ints, counts: Ints, update: Flags,
                records: Ints, session: bool) -> Listings:
    """Whole windows: emission i lists the first ``counts[i]`` events of its head's list."""
    lists = _read_heads(prepared, heads, counts)
    if not session:  # fixed windows take events in arrival order: each listing is a slice of its head's
        return _with_records(lists.rows, lists.head_start[lists.head_of], counts, update, records)
    rows = lists.rows
    segment = np.repeat(np.arange(len(lists.head_start)), lists.head_length)
    seen_max = pd.Series(rows).groupby(segment).cummax().to_numpy()
    after_first = np.ones(len(rows), bool)
    after_first[lists.head_start[lists.head_length > 0]] = False
    # a merge appended events older than some already listed: the listing is out of arrival order from here
    breaks = np.flatnonzero(after_first[1:] & (rows[1:] < seen_max[:-1])) + 1
    begin = lists.head_start[lists.head_of]
    through = begin + counts
    head_end = begin + lists.head_length[lists.head_of]
    # sort each listing up to the next break after it: its events are then that stretch's first ``count``
    next_break = np.append(breaks, np.iinfo(np.int64).max)[np.searchsorted(breaks, through)]
    stretch_end = np.minimum(next_break, head_end)
    stretch, piece_of = np.unique(np.stack([begin, stretch_end]), axis=1, return_inverse=True)
    piece_begin, piece_end = stretch
    piece_length = piece_end - piece_begin
    piece_start = np.cumsum(piece_length) - piece_length
    values = _concatenated(rows, piece_begin, piece_length)
    pool = values[np.lexsort((values, np.repeat(np.arange(len(piece_begin)), piece_length)))]
    return _with_records(pool, piece_start[piece_of.ravel()], counts, update, records)


def discarded(prepared: Prepared, heads: Ints, counts: Ints, update: Flags, records: Ints,
              window: Ints, session: bool) -> Listings:
    """Discarding panes: emission i carries the events of its listing its window had not emitted before
    (``panes.first_listings``, one rule with the frame path). Only what each head adds since its previous
    emission is looked at, so the work is linear too; events a session brought in by a merge and already emitted
    under their own head are what ``first_listings`` drops."""
    lists = _read_heads(prepared, heads, counts)
    # what the head's earlier rows in the table listed: the most any of them did. The canonical order keeps a
    # window's emissions in revision order, so with counts that only grow this is the previous row's count; the
    # maximum keeps the cut right without relying on that
    listed_most = pd.Series(counts).groupby(lists.head_of).cummax()
    before = listed_most.groupby(lists.head_of).shift(1, fill_value=0).to_numpy()
    new = _with_records(lists.rows, lists.head_start[lists.head_of] + before, np.maximum(counts - before, 0), update,
                        records)
    candidates = _concatenated(new.pool, new.start, new.count)
    if session:  # a merged session's new events in arrival order
        candidates = candidates[np.lexsort((candidates, np.repeat(np.arange(len(new.count)), new.count)))]
    cut = first_listings(window, new.count, candidates, update)
    return Listings(candidates[cut.kept], np.cumsum(cut.counts) - cut.counts, cut.counts)
