"""Spectra and step renders, cached once per server process and safe under `--num-threads`.

Spectra are immutable once read, so sessions share them; renders are keyed by trajectory and step.
A lock guards each cache (OrderedDict moves are not atomic across threads), and the work itself
runs outside the lock so one slow file never blocks another session's cached hit.
"""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agents.spectra import read_spectrum

log = logging.getLogger(__name__)


class LockedLRU:
    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, make: Callable[[], Any]):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = make()  # outside the lock: two threads may both make it; the result is the same
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
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


def load_spectrum(source_path: str, target: str | None):
    """read_spectrum through the process-wide cache (the key includes the file's mtime)."""
    try:
        mtime = Path(source_path).stat().st_mtime_ns
    except OSError:
        mtime = None
    return _spectra.get((source_path, target, mtime), lambda: read_spectrum(source_path, target=target))


def cached_render(key, make: Callable[[], bytes | None]) -> bytes | None:
    return _renders.get(key, make)


def peek_render(key) -> tuple[bool, bytes | None]:
    return _renders.peek(key)


def prefetch(fn: Callable[[], None]) -> None:
    """Run `fn` on the background render thread (renders of a newly opened trajectory)."""
    def guarded():
        try:
            fn()
        except Exception as err:  # a prefetch that fails must not take the thread down
            log.warning("render prefetch failed: %s", err)

    _prefetcher.submit(guarded)
