"""Time on item: the seconds a reviewer's page was in use on the item on screen (issue 47, item 3).

The page counts active time (visible, focused, and some input within IDLE_S: reviewer.components.keyboard)
and reports its running total; the server takes each report's increase only as far as the wall clock
since the previous report allows, so no page can claim more time than passed. A verdict stores the
active seconds since its item was opened (`seconds_on_item`), or None when the page reported none
(a page without the keyboard component, a test driving the state directly).
"""
from __future__ import annotations

import time

IDLE_S = 120  # no key, click, pointer move or wheel for this long: idle, not counted (reading a hard spectrum takes a while)
REPORT_S = 5  # the page reports its total this often while it is active (and with each key)
SLACK_S = 2.0  # a report may run ahead of the server's clock by this much (network, timers)


class ActiveTime:
    """One page's active time, as the server accepts it, and where the item on screen started."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._reported_ms: int | None = None  # the page's last total
        self._reported_at: float | None = None
        self.active_s = 0.0  # accepted active time of this page, in seconds
        self._item_start: float | None = None  # active_s when the item on screen was opened

    def report(self, total_ms) -> None:
        """The page's running total of active milliseconds: its increase is taken, bounded by the time
        since the previous report (a total that goes back, or is not a number, is ignored)."""
        if type(total_ms) is not int or total_ms < 0:
            return
        now = self._clock()
        if self._reported_ms is not None and total_ms >= self._reported_ms:
            bound = now - self._reported_at + SLACK_S
            self.active_s += min((total_ms - self._reported_ms) / 1000.0, bound)
        if self._reported_ms is None or total_ms >= self._reported_ms:
            self._reported_ms, self._reported_at = total_ms, now
        if self._item_start is None:
            self._item_start = self.active_s

    def start_item(self) -> None:
        """An item was opened: its time starts now (None until the page first reports)."""
        self._item_start = self.active_s if self._reported_ms is not None else None

    def seconds_on_item(self) -> float | None:
        """Active seconds since the item on screen was opened (None: the page has reported nothing)."""
        if self._item_start is None:
            return None
        return round(self.active_s - self._item_start, 1)
