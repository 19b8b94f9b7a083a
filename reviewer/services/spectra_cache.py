"""Spectra and step renders, cached once per server process and safe under `--num-threads`; and the
check that a stored spectrum's file is still the file that was ingested.

Spectra are immutable once read, so sessions share them; renders are keyed by trajectory and step.
A lock guards each cache (OrderedDict moves are not atomic across threads), and the work itself
runs outside the lock so one slow file never blocks another session's cached hit.

Integrity: the store keeps each spectrum's file sha256 from ingest (spectra.file_sha256). A file
changed since then is refused (SpectrumChanged) wherever a spectrum is shown (`load_spectrum` with
the stored hash: ReviewState.open_item) or given to an agent (`specreview vet` / `verify` / `claims`):
labels stay with the data they were made on, and re-ingesting the file makes it a new spectrum. The
hash of a file is cached by its stat (device, inode, size, mtime and ctime in ns), so opening an item
again costs one stat; an edit changes the stat (ctime even when the mtime is put back), and is hashed
again. A file modified within the last RACY_S seconds is hashed every time (its stat may not yet show
a write made within the same clock tick: git's "racily clean" case).
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from agents.spectra import SpectrumReadError, read_spectrum
from reviewer.services import background

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
_digests = LockedLRU(4096)  # (path, stat stamp) -> sha256 hex: ~250 bytes an entry
RACY_S = 2.0


# -- integrity: the file is the one that was ingested ---------------------------------------------
class SpectrumChanged(SpectrumReadError):
    """A stored spectrum's file no longer has the content hash recorded when it was ingested. Its
    text names the file (not its folder) and says what to do."""

    def __init__(self, path, problem: str | None = None):
        super().__init__(path, problem or (
            "this file has changed since it was ingested (its content is not the content stored then), so it "
            "is not used: labels stay with the data they were made on. To review the file as it is now, "
            "re-ingest it (`specreview ingest`, or `vet` / `verify` by its path): that makes it a new spectrum"))


def file_stamp(path: str | os.PathLike) -> tuple[int, int, int, int, int]:
    """What a file's stat says about its content: any write (or replacement) changes one of these."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def is_racy(stamp: tuple) -> bool:
    """A stat too recent to stand for the content: a write within the file system's timestamp
    granularity of it would leave the stat unchanged (git's "racy clean" problem)."""
    return time.time_ns() - max(stamp[3], stamp[4]) < RACY_S * 1e9


def hash_file(path: str | os.PathLike) -> str:
    """The file's sha256 (hex), as reviewer.services.ingest.file_sha256 computes it at ingest."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike, stamp: tuple | None = None) -> str:
    """The file's sha256, hashed once per state of its stat (a file written just now: each time)."""
    path = str(path)
    stamp = stamp or file_stamp(path)
    if is_racy(stamp):
        return hash_file(path)
    return _digests.get((path, stamp), lambda: hash_file(path))


def check_unchanged(source_path: str | os.PathLike, file_sha256: str | None, stamp: tuple | None = None) -> None:
    """Raise SpectrumChanged when the file's content is not the one ingested (`file_sha256`, the
    stored hash; None: nothing to check). OSError when the file cannot be read (moved, no access)."""
    if file_sha256 and file_digest(source_path, stamp) != file_sha256:
        raise SpectrumChanged(source_path)


def _spectrum_key(source_path: str, target: str | None, stamp: tuple | None = None) -> tuple:
    """A spectrum's cache key: its file, target and the file's stat (an edited file is read again)."""
    if stamp is None:
        try:
            stamp = file_stamp(source_path)
        except OSError:
            stamp = None
    return source_path, target, stamp


def load_spectrum(source_path: str, target: str | None, file_sha256: str | None = None):
    """read_spectrum through the process-wide cache. With `file_sha256` (the stored hash) the file is
    checked first: SpectrumChanged when it is no longer the file that was ingested."""
    stamp = None
    if file_sha256:
        stamp = file_stamp(source_path)
        check_unchanged(source_path, file_sha256, stamp)
    return _spectra.get(_spectrum_key(source_path, target, stamp), lambda: read_spectrum(source_path, target=target))


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


def read_ahead(locate: Callable[[], tuple[str, str | None] | None],
               still_current: Callable[[], bool] = lambda: True) -> Future:
    """Find a spectrum file (`locate`: its path and target, or None) and read it into the cache, on a
    thread of its own (not behind the renders): the next queue item's, so that `n` finds it read.
    Dropped, with nothing located or read, once `still_current()` is false: the reviewer has moved
    on, and the item now on screen has queued its own, or the store it reads was closed (a closing
    store interrupts the queries running on it: that failure is the drop, not an error)."""
    def work():
        if not after_the_switch(still_current):
            return None
        try:
            found = locate()
        except Exception:
            if not still_current():
                return None
            raise
        if found is not None and still_current():
            load_spectrum(*found[:2])
            file_digest(found[0])  # its hash too: opening it then costs a stat, not a read of the file
        return found

    future = background.submit("read-ahead", work)
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

    background.submit("render", guarded)
