"""How much of the server one client's page loads may take. Each page load builds a whole Bokeh
document on the server's one event loop (about half a second of its time on a quiet machine, several
seconds on a busy one), one after another: 40 parallel requests from one client stalled every other
reviewer for 24 s. A count of requests per minute does not bound that (the slower the machine, the
more time each admitted page takes), so the budget is in seconds of the loop: each client (its
address as tornado reports it: the peer, or the proxy's X-Forwarded-For only when the server was
started with `--use-xheaders`) holds a bucket of build time that refills at a share of the clock;
every page load spends what it took. With the bucket empty, or too many of its loads in flight, a
client gets 429 Too Many Requests with Retry-After, at once. Whatever the machine, one client can
stall the others for at most burst / (1 - share) seconds at a time (12.5 s with the defaults, and a
reviewer can still open a page every few seconds).

Settings (environment, read at server start; agents/settings.py): SPECREVIEW_PAGE_BURST_SECONDS
(default 10), SPECREVIEW_PAGE_SHARE_PERCENT (default 20), SPECREVIEW_PAGES_IN_FLIGHT (default 4).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from agents.settings import PAGE_BURST_SECONDS, PAGE_SHARE_PERCENT, PAGES_IN_FLIGHT


@dataclass
class _Client:
    seconds: float
    updated: float
    in_flight: int = 0


@dataclass
class PageLoadLimit:
    """Per-client budget of page-building seconds and loads in flight (thread-safe; the clock is
    injectable for tests)."""

    burst_s: float = 10.0
    share: float = 0.2
    in_flight: int = 4
    clock: object = time.monotonic
    _clients: dict[str, _Client] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_environment(cls) -> PageLoadLimit:
        return cls(burst_s=float(PAGE_BURST_SECONDS.whole_number(10, 1, 3600)),
                   share=PAGE_SHARE_PERCENT.whole_number(20, 1, 99) / 100.0,
                   in_flight=PAGES_IN_FLIGHT.whole_number(4, 1, 1000))

    def _refilled(self, client: str, now: float) -> _Client:
        c = self._clients.get(client)
        if c is None:
            self._forget_idle(now)
            c = self._clients[client] = _Client(seconds=self.burst_s, updated=now)
        c.seconds = min(self.burst_s, c.seconds + (now - c.updated) * self.share)
        c.updated = now
        return c

    def admit(self, client: str) -> float:
        """0.0 when `client` may start a page load now (then `done` must follow), else the seconds
        after which to retry."""
        with self._lock:
            c = self._refilled(client, self.clock())
            if c.in_flight >= self.in_flight:
                return 1.0
            if c.seconds <= 0.0:
                return max(1.0, -c.seconds / self.share)
            c.in_flight += 1
            return 0.0

    def done(self, client: str, took_s: float) -> None:
        """A page load `admit` let through finished after `took_s` seconds: spend them."""
        with self._lock:
            c = self._refilled(client, self.clock())
            c.in_flight = max(0, c.in_flight - 1)
            c.seconds -= max(0.0, took_s)

    def _forget_idle(self, now: float) -> None:
        """Drop clients whose bucket is full again and who have nothing in flight (bounded memory)."""
        if len(self._clients) < 1024:
            return
        full_after = self.burst_s / self.share
        for key in [k for k, c in self._clients.items() if c.in_flight == 0 and now - c.updated > full_after]:
            del self._clients[key]
