"""Spectra and step renders, cached once per server process and safe under `--num-threads`.

Spectra are immutable once read, so sessions share them; renders are keyed by trajectory and step.
A lock guards each cache (OrderedDict moves are not atomic across threads), and the work itself
runs outside the lock so one slow file never blocks another session's cached hit.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agents.spectra import read_spectrum

log = logging.getLogger(__name__)


class LockedLRU:
    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._making: dict[Any, Future] = {}  # keys being made now: a second caller waits for the first
        self._lock = threading.Lock()

    def get(self, key, make: Callable[[], Any]):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            making = self._making.get(key)
            mine = making is None
            if mine:
                making = self._making[key] = Future()
        if not mine:  # e.g. a key press for the spectrum the read-ahead is reading: read once
            return making.result()
        try:
            value = make()  # outside the lock: a slow file never blocks another key's cached hit
        except BaseException as exc:
            with self._lock:
                del self._making[key]
            making.set_exception(exc)
            raise
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
            del self._making[key]
        making.set_result(value)
        return value

    def peek(self, key) -> tuple[bool, Any]:
        with self._lock:
            return (True, self._data[key]) if key in self._data else (False, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


_spectra = LockedLRU(64)
_renders = LockedLRU(2048)
_prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specreview-render")
_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specreview-read-ahead")


def _spectrum_key(source_path: str, target: str | None) -> tuple:
    """A spectrum's cache key: its file, target and the file's mtime (an edited file is read again)."""
    try:
        mtime = Path(source_path).stat().st_mtime_ns
    except OSError:
        mtime = None
    return source_path, target, mtime


def load_spectrum(source_path: str, target: str | None):
    """read_spectrum through the process-wide cache."""
    return _spectra.get(_spectrum_key(source_path, target), lambda: read_spectrum(source_path, target=target))


def spectrum_is_cached(source_path: str, target: str | None) -> bool:
    return _spectra.peek(_spectrum_key(source_path, target))[0]


# Background work for an item that was just opened waits this long first: reading a FITS file or
# preparing renders holds the GIL for tens of ms, and done at once it doubled the server's share of
# the very switch it prepares for (the patch went out later).
AFTER_SWITCH_S = 0.2


def after_the_switch(still_current: Callable[[], bool] = lambda: True) -> bool:
    """Wait AFTER_SWITCH_S (less if the reviewer moves on); whether the work is still wanted."""
    deadline = time.monotonic() + AFTER_SWITCH_S
    while time.monotonic() < deadline:
        if not still_current():
            return False
        time.sleep(0.02)
    return still_current()


def read_ahead(locate: Callable[[], tuple[str, str | None] | None]) -> Future:
    """Find a spectrum file (`locate`: its path and target, or None) and read it into the cache, on a
    thread of its own (not behind the renders): the next queue item's, so that `n` finds it read."""
    def work():
        after_the_switch()
        found = locate()
        if found is not None:
            load_spectrum(*found)
        return found

    future = _reader.submit(work)
    future.add_done_callback(lambda f: f.exception() and log.warning("read-ahead failed: %s", f.exception()))
    return future


def cached_render(key, make: Callable[[], bytes | None]) -> bytes | None:
    return _renders.get(key, make)


def peek_render(key) -> tuple[bool, bytes | None]:
    return _renders.peek(key)


def prefetch(fn: Callable[[], None]) -> None:
    """Run `fn` on the background render thread (it hands the drawing itself to the render processes)."""
    def guarded():
        try:
            fn()
        except Exception as err:  # a prefetch that fails must not take the thread down
            log.warning("render prefetch failed: %s", err)

    _prefetcher.submit(guarded)
