"""A review page without a browser: a Bokeh-protocol client that does what the page's JavaScript does
with the server and nothing else (issue 22, item 5).

It opens the app's websocket as the page does (`?reviewer=` on the address, a fresh session id in the
"bokeh" subprotocol's token), pulls the document, announces it ready (Panel runs its onload callbacks
then), and sends key presses as the Keyboard component's JavaScript sends them: a `data_event` on that
component's model. What the server sends back (PATCH-DOC) is read as JSON and never turned into models
or drawn, so K of these on one machine cost the server what K reviewers cost it, not K renderers.

bokeh.client's ClientSession is not used: it deserializes the document into Python models, and this
app's components (Panel JSComponents) have data models the server creates at run time ("StepPlayer1"),
which a client process cannot resolve.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict

from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import patch_doc
from bokeh.protocol.receiver import Receiver
from bokeh.util.strings import format_url_query_arguments
from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect


def objects(node, found: dict | None = None) -> dict:
    """Every model definition in a document's JSON, by id (references elsewhere are {"id": ...} alone)."""
    found = {} if found is None else found
    if isinstance(node, dict):
        if node.get("type") == "object" and "id" in node and "attributes" in node:
            found[node["id"]] = node
        for value in node.values():
            objects(value, found)
    elif isinstance(node, list):
        for value in node:
            objects(value, found)
    return found


def with_css_class(models: dict, css_class: str) -> dict:
    """The one model of the document carrying `css_class` (ValueError if none or several)."""
    hits = [m for m in models.values() if css_class in (m["attributes"].get("css_classes") or [])]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} models with css class {css_class!r}, expected 1")
    return hits[0]


def keyboard_model(models: dict) -> dict:
    """The Keyboard component's model: the ESM model whose module renders the `sr-keyboard` marker."""
    hits = [m for m in models.values() if "sr-keyboard" in str(m["attributes"].get("esm", ""))]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} keyboard models, expected 1")
    return hits[0]


def address_model(models: dict) -> dict:
    """ItemAddress's data model: its `query` names the item on screen (`trajectory=...`), and changes
    with every item, where the head's text may not (two items of one task and agent read alike)."""
    hits = [m for m in models.values() if {"query", "remember"} <= set(m["attributes"])]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} address models, expected 1")
    return hits[0]


class ReviewClient:
    """One reviewer's session on the served app, driven by key presses."""

    def __init__(self, app_url: str, reviewer: str, extra_args: dict | None = None):
        self.ws_url = app_url.replace("http://", "ws://", 1) + "/ws"
        self.arguments = {"reviewer": reviewer, **(extra_args or {})}
        self.protocol = Protocol()
        self.receiver = Receiver(self.protocol)
        self.replies: dict[str, asyncio.Future] = {}
        self.waiters: dict[tuple[str, str], list[asyncio.Future]] = defaultdict(list)
        self.texts: dict[str, str] = {}  # the latest `text` of the models watched
        self.patches = 0

    async def open(self, timeout: float = 600) -> None:
        token = generate_jwt_token(generate_session_id())
        url = format_url_query_arguments(self.ws_url, self.arguments)
        self.socket = await websocket_connect(HTTPRequest(url, request_timeout=timeout),
                                              subprotocols=["bokeh", token], max_message_size=256 * 2**20)
        first = await self._next_message()
        if first.msgtype != "ACK":
            raise RuntimeError(f"server said {first.msgtype} before ACK")
        self.reader = asyncio.ensure_future(self._read())
        reply = await asyncio.wait_for(self.request(self.protocol.create("PULL-DOC-REQ")), timeout)
        self.models = objects(reply.content["doc"])
        self.ack = with_css_class(self.models, "sr-ack")["id"]
        self.head = with_css_class(self.models, "sr-trajectory-head")["id"]
        self.keyboard = keyboard_model(self.models)["id"]
        self.address = address_model(self.models)["id"]
        for mid in (self.ack, self.head):
            self.texts[mid] = self.models[mid]["attributes"].get("text", "")
        await self.send_event("document_ready", {})

    async def _next_message(self):
        while True:
            fragment = await self.socket.read_message()
            if fragment is None:
                raise ConnectionError("the server closed the websocket")
            message = await self.receiver.consume(fragment)
            if message is not None:
                return message

    async def _read(self) -> None:
        try:
            await self._dispatch()
        except Exception as err:  # the socket closed or a message was malformed: no waiter waits for ever
            for future in [*self.replies.values(), *(w for ws in self.waiters.values() for w in ws)]:
                if not future.done():
                    future.set_exception(ConnectionError(f"{self.arguments['reviewer']}: {err}"))
            self.replies.clear()
            self.waiters.clear()

    async def _dispatch(self) -> None:
        while True:
            message = await self._next_message()
            reqid = message.header.get("reqid")
            if reqid in self.replies:
                self.replies.pop(reqid).set_result(message)
            if message.msgtype == "PATCH-DOC":
                self.patches += 1
                for event in message.content.get("events", []):
                    if event.get("kind") != "ModelChanged":
                        continue
                    key = (event["model"]["id"], event["attr"])
                    if event["attr"] == "text" and key[0] in self.texts:
                        self.texts[key[0]] = event["new"]
                    for waiter in self.waiters.pop(key, []):
                        if not waiter.done():
                            waiter.set_result(time.perf_counter())

    async def _send(self, message) -> None:
        for part in (message.header_json, message.metadata_json, message.content_json):
            await self.socket.write_message(part)

    async def request(self, message):
        reply = asyncio.get_running_loop().create_future()
        self.replies[message.header["msgid"]] = reply
        await self._send(message)
        return await reply

    async def send_event(self, name: str, values: dict) -> None:
        """A UI event, as BokehJS's event manager sends one: a MessageSent patch (the server answers OK)."""
        event = {"type": "event", "name": name, "values": {"type": "map", "entries": list(values.items())}}
        message = patch_doc(patch_doc.create_header(), {},
                            {"events": [{"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": event}]})
        await self._send(message)

    def changed(self, model_id: str, attr: str = "text") -> asyncio.Future:
        """A future resolved (with perf_counter) at the next change of `attr` on the model."""
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[(model_id, attr)].append(waiter)
        return waiter

    async def press(self, key: str, model_id: str, attr: str = "text", timeout: float = 60) -> float:
        """Milliseconds from the key sent to the next change of the model's `attr`; -1 past `timeout`."""
        waiter = self.changed(model_id, attr)
        start = time.perf_counter()
        await self.send_event("data_event", {"model": {"id": self.keyboard},
                                            "data": {"type": "map", "entries": [["key", key]]}})
        try:
            return 1000 * (await asyncio.wait_for(waiter, timeout) - start)
        except TimeoutError:
            return -1.0

    async def wait_for_item(self, timeout: float = 600) -> None:
        """Until the page shows an item (its head has text): the first item comes after document_ready."""
        deadline = time.perf_counter() + timeout
        while not self.texts[self.head]:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no item shown")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.changed(self.head)), left)

    def close(self) -> None:
        self.reader.cancel()
        self.socket.close()
