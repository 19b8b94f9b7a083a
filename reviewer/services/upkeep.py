"""What a store needs before its first page, done once per process and file rather than on every page
load (issue 49: `layouts/app.py` did it for each page): the demo on an empty file, the same-object
cross-match of spectra added since the last one, the stored consensus brought up to date. The server
does it as it starts (reviewer/app_hooks.py); a process that shows pages without that start (a
notebook's `pn.serve(create_app)`, a test) does it at its first page of that file.

While the server runs, what writes the file goes through it and keeps these up to date itself: an
ingest groups the spectra it adds (reviewer/services/ingest.py), a label write syncs its trajectory's
consensus (reviewer/services/labels.py), and the Stats and Conflicts reads sync what is behind."""
from __future__ import annotations

import threading
from pathlib import Path

from reviewer.services.conflicts import sync_verdict_states
from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.same_object import ensure_groups

_prepared: set[Path | None] = set()
_lock = threading.Lock()


def prepare_for_pages(store, claims_in_background: bool = False) -> None:
    """Seed the demo into an empty file, cross-match new spectra, sync the stored consensus; the file is
    then prepared for this process's pages."""
    seed_demo_if_empty(store, claims_in_background=claims_in_background)
    ensure_groups(store)
    sync_verdict_states(store)
    with _lock:
        _prepared.add(store.path)


def prepare_once(store) -> bool:
    """`prepare_for_pages` unless this process did it for the file already (the server, as it started);
    True when it ran now. An in-memory store (no path) is prepared every time."""
    with _lock:
        if store.path is not None and store.path in _prepared:
            return False
    prepare_for_pages(store)
    return True
