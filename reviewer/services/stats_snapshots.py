"""The Stats tab's figures, remembered per database file for every page the process serves.

Computing them reads every current label and every trajectory's triage signals: ~0.6 s of one
process at 1M trajectories, more on a server busy with pages, for each opening of the tab by each
reviewer. Most openings come after nothing, or little, was written. So each part (the reviewers'
statistics of a campaign or of everything; the triage's inputs and report) is kept with the store's
stats mark read before it was computed (ReviewRepository.stats_mark: a value that moves with every
write the figures are read from). A page shows a remembered part at once: as it is when the mark
has not moved, else marked with the time it was computed while the part is computed again.

They are also kept up to date as labels are written (`written`, called by the label service): the parts
some page showed in the last KEEP_FRESH_S are computed again in the background "stats" lane, so that
the tab, opened after a verdict, finds them current (at 1M trajectories computing them takes ~0.5 s of
a server whose page thread and browser share its cores: ~1.5 s to the figures when computed on
opening). One refresh per database queued at a time, started no sooner than GAP_FACTOR times the last
one's duration (at least MIN_GAP_S) after it ended, so that a stream of verdicts costs a bounded share
of a core. A page and a refresh computing the same part at the same mark compute it once.

No reviewer waits for these refreshes (nor for the computation as the server starts): they yield to
pages being built, before each part and between its reads (background.yield_to_pages, issue 48). A
page opening the tab while a refresh computes the same part at the same mark waits for that refresh,
so it may wait for another reviewer's page to be built (a few seconds at most; bounded).
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reviewer.services import background, stats, stats_selection, triage
from reviewer.store.codec import now

log = logging.getLogger(__name__)
KEPT = 16  # (database, campaign, part) entries: the newest used are kept (each holds ~10 MB at 1M trajectories)
TARGET = 0.98  # the triage report's target accuracy as computed here (a page at another one recomputes the report)
KEEP_FRESH_S = 15 * 60.0  # a part some page showed this recently is refreshed after writes
GAP_FACTOR, MIN_GAP_S = 4.0, 2.0
PARTS = ("stats", "triage")  # the reviewers' statistics of a campaign or of everything; the triage's inputs and report


@dataclass(frozen=True)
class Snapshot:
    mark: tuple            # store.reviews.stats_mark() read before the value was computed
    computed_at: datetime  # UTC
    value: Any
    started: float = field(default=0.0, compare=False)  # time.monotonic() when computing began


_kept: OrderedDict[tuple, Snapshot] = OrderedDict()
_shown: dict[tuple, float] = {}  # key -> time.monotonic() a page last asked for it
_computing: dict[tuple, tuple[tuple, Future]] = {}  # key -> (the mark it is computed at, its result)
_queued: set[str] = set()  # databases with a refresh queued and not begun
_last_refresh: dict[str, tuple[float, float]] = {}  # database -> (when its last refresh ended, its duration)
_lock = threading.Lock()


def _key(store, part: str, session: str | None) -> tuple:
    return str(store.db.path), part, session


def _no_pause() -> None:
    return None


def part_work(store, part: str, session: str | None, pause: Callable[[], object] = _no_pause) -> Callable[[], Any]:
    """What a part is computed by: "stats" the reviewers' statistics of a campaign (or of everything),
    "triage" the triage's inputs with its report at TARGET. `pause()` is called between its reads
    (the background's: background.yield_to_pages)."""
    if part == "stats":
        def stats_part():
            figures = stats.review_stats(store, session=session)
            pause()
            # with the points of the plots a reviewer selects items in (issue 47, item 7)
            gold = stats_selection.gold_points(store, session)
            pause()
            return {**figures, "gold_points": gold, "judge_points": stats_selection.judge_points(store, session)}

        return stats_part

    def triage_part():
        inputs = triage.triage_inputs(store)
        pause()
        return inputs, triage.triage_report(store, TARGET, inputs=inputs)

    return triage_part


def remembered(store, part: str, session: str | None = None, shown: bool = True) -> Snapshot | None:
    """The part as last computed in this process (any page's), or None. Asking for it to be shown keeps
    it refreshed after writes for KEEP_FRESH_S."""
    key = _key(store, part, session)
    with _lock:
        if shown:
            _shown[key] = time.monotonic()
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
        return found


def mark(store) -> tuple:
    """The store's stats mark now: a snapshot with another was computed before something it reads was written."""
    return store.reviews.stats_mark()


def is_current(store, snapshot: Snapshot) -> bool:
    """Nothing the figures are read from was written since the snapshot's mark was read."""
    return snapshot.mark == mark(store)


def compute(store, part: str, session: str | None, work: Callable[[], Any]) -> Snapshot:
    """`work()`, remembered with the mark read before it began: a write during it moves the mark, so
    the next opening computes again. A snapshot whose computing began later is never replaced by an
    older one (two pages computing at once). A part kept at the same mark (computed since the caller
    looked) is returned as it is, and while it is being computed at that mark (another page, a refresh
    after a write) that computation's result is waited for instead."""
    started, before = time.monotonic(), mark(store)
    key = _key(store, part, session)
    with _lock:
        kept = _kept.get(key)
        if kept is not None and kept.mark == before:  # computed at this mark since the caller looked
            return kept
        running = _computing.get(key)
        if running is not None and running[0] == before:
            result = running[1]
        else:
            result = None
            mine: Future = Future()
            _computing[key] = (before, mine)
    if result is not None:
        return result.result()
    try:
        snapshot = Snapshot(before, now(), work(), started)
    except BaseException as exc:
        mine.set_exception(exc)
        raise
    finally:
        with _lock:
            if _computing.get(key, (None, None))[1] is mine:
                del _computing[key]
    mine.set_result(snapshot)
    with _lock:
        kept = _kept.get(key)
        if kept is None or kept.started <= started:
            _kept[key] = snapshot
            _kept.move_to_end(key)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return snapshot


def written(store) -> None:
    """Something the figures are read from was written to `store`: the parts of it shown recently are
    computed again in the background (one refresh queued per database; a write during one queues the next)."""
    path = str(store.db.path)
    with _lock:
        if path in _queued or not _recently_shown(path):
            return
        _queued.add(path)
    background.submit("stats", _refresh, store, path)


def prepare(store) -> None:
    """Compute the parts of everything (no campaign) in the background, as the server starts: the first
    opening of the tab then finds them (writes keep them refreshed only once a page has shown them)."""
    background.submit("stats", _refresh, store, str(store.db.path), [_key(store, part, None) for part in PARTS])


def _recently_shown(path: str) -> list[tuple]:
    since = time.monotonic() - KEEP_FRESH_S
    return [key for key, at in _shown.items() if key[0] == path and at >= since]


def next_refresh_at(ended: float, duration: float) -> float:
    """When the refresh after one that ended at `ended` (monotonic) and took `duration` s may begin."""
    return ended + max(MIN_GAP_S, GAP_FACTOR * duration)


def _refresh(store, path: str, prepared: list[tuple] | None = None) -> None:
    """Compute again the parts of `path` shown recently (or those `prepared` as the server starts) whose
    figures are missing or older than the store's mark."""
    with _lock:
        last = _last_refresh.get(path)
    if last is not None:
        time.sleep(max(0.0, next_refresh_at(*last) - time.monotonic()))
    background.yield_to_pages()  # no reviewer waits for it: pages being built go first
    with _lock:
        _queued.discard(path)  # writes from now on queue the next refresh
        keys = _recently_shown(path) if prepared is None else prepared
    if not store.is_open:  # its page closed: the next write (or opening) computes
        return
    started = time.monotonic()
    # the parts at once, as a page computes them (StatsPanel.refresh): most of each is DuckDB's, which
    # leaves the GIL, and the reviewers' part reads no priority, so it does not wait for them
    helpers = [threading.Thread(target=_refresh_part, args=(store, part, session), daemon=True,
                                name="specreview-stats-part") for _, part, session in keys[1:]]
    for helper in helpers:
        helper.start()
    if keys:
        _refresh_part(store, *keys[0][1:])
    for helper in helpers:
        helper.join()
    ended = time.monotonic()
    if prepared is None:  # the computation at start (with an upgrade's one-time fills) spaces nothing
        with _lock:
            _last_refresh[path] = (ended, ended - started)


def _refresh_part(store, part: str, session: str | None) -> None:
    """Compute the part again unless it is kept at the store's mark (`compute` looks)."""
    try:
        # the triage's report reads the priorities the same writes refresh; the reviewers' part reads none,
        # but waits too while no weights are stored: the first writes' priorities store them, moving the mark
        if part == "triage" or triage.stored_model(store) is None:
            background.wait_for("priority")
        background.yield_to_pages()
        if store.is_open:  # its page closed: the next write (or opening) computes
            compute(store, part, session, part_work(store, part, session, pause=background.yield_to_pages))
    except Exception as err:  # a page computing it says why; the labels are stored whatever happens here
        if store.is_open:
            log.warning("Stats figures not refreshed after a write: %s", err)
