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
