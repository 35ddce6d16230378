"""Work done before it is asked for: the frames of the slider positions next to the current one.

A slider moves one step at a time, so while the user looks at one frame the explorer computes the frames
one and two steps away on a single background thread. The next step then finds its frame ready instead
of spending ~50 ms of compute on the 20k stream before anything reaches the browser.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Prefetcher(Generic[K, T]):
    """``get(key)`` returns ``make(key)``, from a speculative run when one was started for that key.

    At most ``size`` keys are kept (least recently used go first). A key still waiting in the queue when it
    is asked for is computed at once rather than behind the other guesses; one already running is waited
    for, since it is partly done. An exception raised by ``make`` is raised by ``get``, as if it ran there.
    Call it from one thread at a time (the explorer's handlers, under its lock); only ``make`` runs on the worker.

    ``ahead`` (default ``make``) is what a speculative run computes; ``keep`` is what is kept of a value ``get``
    computed on the spot (None: nothing). The explorer's frames computed ahead leave out their Result where the
    Results would not fit, and a frame computed in a step is then not kept (``frames_ahead.py``).
    """

    def __init__(self, make: Callable[[K], T], size: int = 6, ahead: Callable[[K], T] | None = None,
                 keep: Callable[[T], T | None] = lambda value: value):
        self._make, self._ahead, self._keep_of = make, ahead or make, keep
        self.size = size  # keys kept
        self._futures: OrderedDict[K, Future[T]] = OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-prefetch")

    def get(self, key: K) -> T:
        future = self._futures.get(key)
        if future is not None and not future.cancel():  # only a queued future can be cancelled
            self._futures.move_to_end(key)
            return future.result()
        done: Future[T] = Future()
        try:
            value = self._make(key)
        except Exception as exc:  # kept like a speculative failure, so a second get raises it again
            done.set_exception(exc)
            self._keep(key, done)
            raise
        kept = self._keep_of(value)
        if kept is not None:
            done.set_result(kept)
            self._keep(key, done)
        else:
            self._futures.pop(key, None)  # a cancelled guess of it must not stand for it
        return value

    def prefetch(self, keys: Iterable[K]) -> None:
        """Queue ``keys`` (in that order) that are neither kept nor queued yet, and count every one of them as
        just used: a key already kept must not be the oldest, or queueing the others would evict it."""
        for key in keys:
            if key in self._futures:
                self._futures.move_to_end(key)
            else:
                self._keep(key, self._pool.submit(self._ahead, key))

    def when_ready(self, key: K, callback: Callable[[T], None]) -> None:
        """Call ``callback(value)`` once the kept ``key`` is computed: on the worker, or here if it is done.
        Nothing is called for a key not kept, evicted before it ran, or whose ``make`` raised."""
        future = self._futures.get(key)
        if future is not None:
            future.add_done_callback(lambda f: None if f.cancelled() or f.exception() else callback(f.result()))

    def was_prefetched(self, key: K) -> bool:
        """True when ``key`` is ready without computing (for tests and benchmarks)."""
        future = self._futures.get(key)
        return future is not None and future.done() and future.exception() is None

    def wait(self, timeout: float | None = None) -> None:
        """Block until every queued key is computed and handed to its ``when_ready`` callbacks (tests and
        benchmarks only): the one worker reaches a no-op only after all of that."""
        self._pool.submit(lambda: None).result(timeout)

    def clear(self) -> None:
        """Forget everything (the stream changed, so every kept frame is wrong)."""
        for future in self._futures.values():
            future.cancel()
        self._futures.clear()

    def _keep(self, key: K, future: Future[T]) -> None:
        self._futures[key] = future
        self._futures.move_to_end(key)
        while len(self._futures) > self.size:
            _, old = self._futures.popitem(last=False)
            old.cancel()
