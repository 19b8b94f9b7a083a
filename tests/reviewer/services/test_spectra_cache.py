"""The process-wide caches: a key being made is made once, whoever asks meanwhile waits for it; a
failure reaches every waiter and is not cached."""
from __future__ import annotations

import threading

import pytest

from reviewer.services.spectra_cache import LockedLRU


def test_a_key_asked_for_while_it_is_being_made_is_made_once():
    cache, started, release, calls = LockedLRU(4), threading.Event(), threading.Event(), []

    def make():
        calls.append(1)
        started.set()
        assert release.wait(30)
        return "spectrum"

    got = []
    first = threading.Thread(target=lambda: got.append(cache.get("k", make)))
    first.start()
    assert started.wait(30)
    second = threading.Thread(target=lambda: got.append(cache.get("k", make)))
    second.start()
    release.set()
    first.join(30)
    second.join(30)
    assert got == ["spectrum", "spectrum"] and calls == [1]
    assert cache.peek("k") == (True, "spectrum")


def test_a_failed_make_is_not_cached():
    cache = LockedLRU(4)

    def broken():
        raise OSError("moved")

    with pytest.raises(OSError, match="moved"):
        cache.get("k", broken)
    assert cache.peek("k") == (False, None)
    assert cache.get("k", lambda: 7) == 7


def test_a_read_ahead_for_an_item_already_left_is_dropped_unread():
    """A reviewer pressing n several times queues one read-ahead per item passed: those whose item is
    no longer on screen find nothing and read nothing (they took seconds of the only reader thread)."""
    from reviewer.services.spectra_cache import read_ahead

    located = []
    left = read_ahead(lambda: located.append("left") or ("a.fits", None), still_current=lambda: False)
    assert left.result(timeout=30) is None and located == []


def test_a_read_ahead_for_the_item_on_screen_locates_and_reads(tmp_path):
    from reviewer.services.spectra_cache import read_ahead

    located = []
    here = read_ahead(lambda: located.append("here") or None, still_current=lambda: True)
    assert here.result(timeout=30) is None and located == ["here"]


def test_a_read_ahead_whose_store_closes_under_it_is_dropped_not_reported(tmp_path, caplog):
    """Closing a store interrupts the queries running on it: a read-ahead caught that way has become
    stale, and ends with nothing instead of a warning ("Connection already closed" in every test log)."""
    from reviewer.services.spectra_cache import read_ahead
    from reviewer.store import Store

    store = Store(tmp_path / "closing.duckdb")

    def locate():
        store.close()
        return store.spectra.get_spectrum("any")

    with caplog.at_level("WARNING"):
        assert read_ahead(locate, still_current=lambda: store.is_open).result(timeout=30) is None
    assert not store.is_open and "read-ahead failed" not in caplog.text


def test_a_read_ahead_that_fails_while_current_is_reported(caplog):
    from reviewer.services.spectra_cache import read_ahead

    def locate():
        raise OSError("disk gone")

    future = read_ahead(locate, still_current=lambda: True)
    with pytest.raises(OSError):
        future.result(timeout=30)
