"""Bokeh server hooks for `panel serve reviewer` (a directory app): prepare the database once, when
the server starts, instead of inside the first reviewer's page request."""
from __future__ import annotations

import logging
import time

log = logging.getLogger("specreview.app")


def on_server_loaded(server_context) -> None:
    start = time.perf_counter()
    from reviewer.conflicts import sync_verdict_states
    from reviewer.demo import seed_demo_if_empty
    from reviewer.store import Store, StoreUnavailable

    try:
        store = Store()
    except StoreUnavailable as err:  # the page will say so too
        log.error("cannot open the review database: %s", err)
        return
    seed_demo_if_empty(store, claims_in_background=True)
    sync_verdict_states(store)
    import layouts  # noqa: F401 - imports Panel, HoloViews and the components before the first page

    log.warning("database %s ready in %.1f s", store.path.name if store.path else ":memory:",
                time.perf_counter() - start)
