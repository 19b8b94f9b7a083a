"""The served app's websockets turn Nagle's algorithm off: a real tornado server and client, and the
route table of a real Bokeh server."""
from __future__ import annotations

import asyncio
import socket

from bokeh.application import Application as BokehApplication
from bokeh.server.server import Server
from tornado.web import Application
from tornado.websocket import WebSocketHandler, websocket_connect

from reviewer.server_app import send_small_messages_at_once, tornado_application


def _nodelay_of_a_connection(tuned: bool) -> int:
    """TCP_NODELAY of the server side of a websocket connection, as its handler sees it when opened."""
    app = Application()
    seen = []

    async def run():
        server = app.listen(0, address="127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        client = await websocket_connect(f"ws://127.0.0.1:{port}/ws")
        await client.read_message()
        client.close()
        server.stop()

    class Probe(WebSocketHandler):
        def open(self):
            seen.append(self.ws_connection.stream.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            self.write_message("hello")

    app.wildcard_router.add_rules([(r"/ws", Probe)])
    if tuned:
        assert send_small_messages_at_once(app) == 1
        assert send_small_messages_at_once(app) == 0  # once is enough
    asyncio.run(run())
    return seen[0]


def test_websocket_connections_send_small_messages_at_once():
    assert _nodelay_of_a_connection(tuned=False) == 0  # tornado's default: Nagle on
    assert _nodelay_of_a_connection(tuned=True) != 0


def test_the_bokeh_servers_websocket_route_is_changed():
    bokeh_app = BokehApplication()
    server = Server({"/": bokeh_app}, port=0, address="127.0.0.1")
    try:
        context = server._tornado._applications["/"]  # what on_server_loaded receives as application_context
        app = tornado_application(context)
        assert app is server._tornado
        assert send_small_messages_at_once(app) == 1  # the /ws route of the app
        targets = [r.target for r in app.wildcard_router.rules if getattr(r.target, "no_delay", False)]
        assert [t.__name__ for t in targets] == ["NoDelayWSHandler"]
    finally:
        server.stop()


def test_what_the_server_loaded_is_left_out_of_the_collectors_walks():
    """Panel's gc.collect() after a page closes walks every object the collector tracks, on the page
    thread; what the server loaded at its start is frozen out of those walks (reviewer.app_hooks)."""
    import gc

    from reviewer.app_hooks import leave_to_refcounting

    tracked = len(gc.get_objects())
    try:
        leave_to_refcounting()
        assert gc.get_freeze_count() >= tracked // 2 and len(gc.get_objects()) < tracked // 2
    finally:
        gc.unfreeze()


def test_the_server_checks_the_file_and_matches_new_spectra_before_any_page(tmp_path, monkeypatch, caplog):
    """The integrity pass and the cross-match of spectra added since the last one run as the server starts
    (reviewer.app_hooks.prepared_for_pages), not in the first reviewer's page; a file the pass refuses is
    logged and nothing more is done with it (each page probes again and says why)."""
    import reviewer.services.conflicts as conflicts
    import reviewer.services.demo as demo
    from reviewer.app_hooks import prepared_for_pages
    from reviewer.store import Store, StoreDamaged

    monkeypatch.setenv("SPECREVIEW_STATS_AT_START", "0")
    with Store(tmp_path / "review.duckdb") as store:
        demo.seed_demo_if_empty(store)
        store.db.execute("DELETE FROM object_match")  # spectra added some other way than an ingest
        assert not store.db._shared.probed
        assert prepared_for_pages(store)
        assert store.db._shared.probed
        assert store.objects.last_match()["n_spectra"] == store.objects.count_positioned() > 0

    done = []
    monkeypatch.setattr(demo, "seed_demo_if_empty", lambda *a, **k: done.append("seed"))
    monkeypatch.setattr(conflicts, "sync_verdict_states", lambda *a, **k: done.append("sync"))
    with Store(tmp_path / "other.duckdb") as store:
        def refuse():
            raise StoreDamaged("the database file other.duckdb is damaged or unreadable (a bad block)")

        monkeypatch.setattr(store, "probe", refuse)
        assert not prepared_for_pages(store)
        assert "other.duckdb is damaged" in caplog.text and done == [] and store.objects.last_match() is None
