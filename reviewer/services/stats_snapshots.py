"""The Stats tab's figures, remembered per database file for every page the process serves.

Computing them reads every current label and every trajectory's triage signals: ~0.6 s of one
process at 1M trajectories, more on a server busy with pages, for each opening of the tab by each
reviewer. Most openings come after nothing, or little, was written. So each part (the reviewers'
statistics of a campaign or of everything; the triage's inputs and report) is kept with the store's
stats mark read before it was computed (ReviewRepository.stats_mark: a value that moves with every
write the figures are read from). A page shows a remembered part at once: as it is when the mark
has not moved, else marked with the time it was computed while the part is computed again.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reviewer.store.codec import now

KEPT = 16  # (database, campaign, part) entries: the newest used are kept (each holds ~10 MB at 1M trajectories)


@dataclass(frozen=True)
class Snapshot:
    mark: tuple            # store.reviews.stats_mark() read before the value was computed
    computed_at: datetime  # UTC
    value: Any
    started: float = field(default=0.0, compare=False)  # time.monotonic() when computing began


_kept: OrderedDict[tuple, Snapshot] = OrderedDict()
_lock = threading.Lock()


def _key(store, part: str, session: str | None) -> tuple:
    return str(store.db.path), part, session


def remembered(store, part: str, session: str | None = None) -> Snapshot | None:
    """The part as last computed in this process (any page's), or None."""
    with _lock:
        found = _kept.get(_key(store, part, session))
        if found is not None:
            _kept.move_to_end(_key(store, part, session))
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
    older one (two pages computing at once)."""
    started, before = time.monotonic(), mark(store)
    snapshot = Snapshot(before, now(), work(), started)
    key = _key(store, part, session)
    with _lock:
        kept = _kept.get(key)
        if kept is None or kept.started <= started:
            _kept[key] = snapshot
            _kept.move_to_end(key)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return snapshot

