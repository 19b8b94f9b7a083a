"""Bokeh server hooks for `panel serve reviewer` (a directory app): prepare the database once, when
the server starts, instead of inside the first reviewer's page request; give every HTML page a
Content-Security-Policy (reviewer/csp.py); send small websocket messages at once, limit page
loads per client, sign sessions and charge the websocket's session building to the same budget, and
end logins at logout (reviewer/server_app.py); let `specreview` commands run through the app while it holds the
database (reviewer/server_endpoint.py).
"""
from __future__ import annotations

import gc
import logging
import time

from agents.settings import STATS_AT_START
from reviewer.csp import install_csp, require_csp
from reviewer.page_limits import PageLoadLimit
from reviewer.server_app import (
    end_logins_at_logout,
    guard_component_route,
    guard_websockets,
    limit_page_loads,
    send_small_messages_at_once,
    sign_sessions,
    tornado_application,
)

log = logging.getLogger("specreview.app")


class DatabaseUnavailable(SystemExit):
    """The server cannot open its database as it starts (another process holds it): it stops, with the
    message, and exits 1 (a SystemExit passes through Bokeh's hook runner and the IOLoop; `panel serve`
    ends with it, `specreview serve` says it and returns 1: reviewer/cli/serve.py) rather than serving
    pages that only say so (issue 49)."""


def on_server_loaded(server_context) -> None:
    start = time.perf_counter()
    require_csp()  # first: whatever fails below, no review page is served without the CSP
    guard_component_route()
    app = tornado_application(server_context.application_context)
    if app is None:
        log.error("no tornado Application found for this app: it cannot add its Content-Security-Policy, "
                  "so it serves no review page (use `specreview serve`, which builds the server with it)")
    else:
        install_csp(app)
        send_small_messages_at_once(app)
        sign_sessions(app)  # before the first page: only the ids and tokens it issues open a session
        limit = PageLoadLimit.from_environment()
        if not limit_page_loads(app, limit):
            log.error("no page route found to limit page loads per client on")
        if not guard_websockets(app, limit):
            log.error("no websocket route found to bound session tokens and charge session building on")
        if not end_logins_at_logout(app) and (app.settings.get("cookie_secret") and app.auth_provider.logout_url):
            log.error("no logout route found to end logins on")
    from reviewer.server_endpoint import start_endpoint
    from reviewer.store import Store, StoreUnavailable

    try:
        store = Store()
    except StoreUnavailable as err:  # another process holds the file (DuckDB: one writer process), or worse
        log.error("cannot open the review database: %s", err)
        raise DatabaseUnavailable(f"specreview: the server stops: the review database cannot be opened: {err}") from None
    ready = prepared_for_pages(store)
    if store.path is not None:  # `specreview` commands run through the app while it holds the file
        start_endpoint(store.path)
    import layouts  # noqa: F401 - imports Panel, Bokeh and the components before the first page

    leave_to_refcounting()
    if ready:
        log.warning("database %s ready in %.1f s", store.path.name if store.path else ":memory:",
                    time.perf_counter() - start)
        if STATS_AT_START.flag(True):
            prepare_stats_after_start(store)


# The Stats figures computed at start begin this long after the start's own work: the pages asked for
# during the start (waiting on its event loop) are then being built, and hold them back
# (background.page_building). Begun during the start, they took the cores from its imports of the page's
# modules: the start took 12.7-16.5 s at 100k trajectories on a 2-core machine, the pages asked for
# meanwhile waited as long (docs/benchmarks.md, issue 48).
STATS_AFTER_START_S = 1.0


def prepare_stats_after_start(store) -> None:
    """The Stats tab's figures computed in the background (and their derived rows stored), begun
    STATS_AFTER_START_S after the start's own work, on the server's event loop."""
    from tornado.ioloop import IOLoop

    from reviewer.services import stats_snapshots

    IOLoop.current().call_later(STATS_AFTER_START_S, stats_snapshots.prepare, store)


def prepared_for_pages(store) -> bool:
    """What the first page of the process would otherwise wait for, done as the server starts: the pass
    over every row that finds a damaged file (Database.probe, once per process: ~4 s at 1M trajectories),
    the demo on an empty file, the same-object cross-match of spectra added since the last one
    (same_object.ensure_groups: ~4 s for 200k new spectra), the stored consensus brought up to date, and
    the Stats tab's figures (computed in the background, begun after the start: prepare_stats_after_start).
    False, with the reason logged and nothing else done, when the file cannot be used; every page then
    says why (it probes again)."""
    from reviewer.services.upkeep import prepare_for_pages
    from reviewer.store import StoreUnavailable

    try:
        store.probe()
    except StoreUnavailable as err:
        log.error("cannot use the review database: %s", err)
        return False
    prepare_for_pages(store, claims_in_background=True)  # the pages then skip it (reviewer/services/upkeep.py)
    return True


def leave_to_refcounting() -> None:
    """What the server has loaded to serve pages for its whole life (modules, the store, the knowledge base)
    moved out of the cyclic collector's walks. Panel runs a full gc.collect() on the page thread 5 s after
    a page's document is destroyed (a page closed), and walking all of it held every page ~290 ms at 100k
    trajectories (~70 ms after this: docs/benchmarks.md). Garbage left from the start is collected first:
    what is frozen is only ever freed by reference counting (docs/upgrades.md lists it with the private uses)."""
    gc.collect()
    gc.freeze()


def on_server_unloaded(server_context) -> None:
    from reviewer.server_endpoint import stop_endpoint
    from reviewer.services import background

    stop_endpoint()
    background.stop()  # queued renders, read-aheads and priorities dropped; render processes end
