"""One limiter shared by every model call of a run in this process.

    limiter = RateLimiter(concurrency=32, max_rps=None)
    with limiter.slot() as waited_s:      # blocks while the run is at its limits
        reply = model.invoke(messages)
    limiter.pause(retry_after_s)          # a server said 429/503 + Retry-After: nobody starts before then

Three limits: at most `concurrency` requests in flight, at most `max_rps` requests started per second
(spaced evenly, so a burst never arrives at once), and none started while a pause lasts. A pause is
shared because a server's Retry-After speaks to the client (the key, the model), not to one request:
if only the refused thread waited, the others would keep hitting the server it asked to back off.
The clock and sleep are injectable so tests can check the arithmetic without waiting.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class RateLimiter:
    def __init__(self, concurrency: int = 16, max_rps: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {concurrency}")
        self.concurrency = concurrency
        self.max_rps = max_rps if max_rps and max_rps > 0 else None
        self._clock, self._sleep = clock, sleep
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._resume_at = 0.0  # no request starts before this (the latest Retry-After)
        self._next_start = 0.0  # rate spacing: the earliest start of the next request
        self.in_flight = 0
        self.max_in_flight = 0
        self.pauses = 0

    def pause(self, seconds: float) -> None:
        """Hold every new request for `seconds` from now (never shortens a longer pause)."""
        with self._lock:
            self._resume_at = max(self._resume_at, self._clock() + max(0.0, seconds))
            self.pauses += 1

    def resume_in(self) -> float:
        """Seconds until a pause ends (0 when none)."""
        with self._lock:
            return max(0.0, self._resume_at - self._clock())

    @contextmanager
    def slot(self) -> Iterator[float]:
        """Wait for a slot, the end of any pause and the rate spacing; yields the seconds waited."""
        t0 = self._clock()
        self._slots.acquire()
        try:
            self._wait_turn()
            with self._lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield self._clock() - t0
            finally:
                with self._lock:
                    self.in_flight -= 1
        finally:
            self._slots.release()

    def _wait_turn(self) -> None:
        while True:
            with self._lock:
                now = self._clock()
                start = max(now, self._resume_at, self._next_start)
                if start <= now:
                    if self.max_rps:
                        self._next_start = now + 1.0 / self.max_rps
                    return
            # re-checked after the sleep: another thread may have been refused meanwhile
            self._sleep(start - now)
