"""Min-heaps of (key, value) pairs in the arena: keys at ``m[keys + base:]``, values at ``m[values + base:]``,
and the heap's size at ``m[size]``.

The fire and purge heaps keep one block per group, laid out before the run from an upper bound on the
group's pushes, so a push never reallocates. Plain arrays rather than numba's typed lists of tuples:
about 6× faster on a million pushes and pops.
"""

from __future__ import annotations

from numba import njit

from explorer.core.compiled.state import Arena


@njit(cache=True, inline="always")
def _before(k1: int, v1: int, k2: int, v2: int) -> bool:
    return k1 < k2 or (k1 == k2 and v1 < v2)


@njit(cache=True)
def push(m: Arena, keys: int, values: int, size: int, key: int, value: int) -> None:
    pos = m[size]
    m[size] = pos + 1
    while pos > 0:
        parent = (pos - 1) >> 1
        if not _before(key, value, m[keys + parent], m[values + parent]):
            break
        m[keys + pos] = m[keys + parent]
        m[values + pos] = m[values + parent]
        pos = parent
    m[keys + pos] = key
    m[values + pos] = value


@njit(cache=True)
def pop(m: Arena, keys: int, values: int, size: int) -> None:
    """Remove the smallest pair (the caller has checked ``m[size] > 0``)."""
    n = m[size] - 1
    m[size] = n
    key = m[keys + n]
    value = m[values + n]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        if child + 1 < n and _before(m[keys + child + 1], m[values + child + 1], m[keys + child],
                                     m[values + child]):
            child += 1
        if not _before(m[keys + child], m[values + child], key, value):
            break
        m[keys + pos] = m[keys + child]
        m[values + pos] = m[values + child]
        pos = child
    m[keys + pos] = key
    m[values + pos] = value
