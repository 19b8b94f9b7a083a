"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies.

    with ScriptedOpenAIServer() as server:
        server.push(Reply.tool_call("spectral_visualization_tool", {"wavelength_range": [6500, 6600]}),
                    Reply.text("<think>..</think><answer>\\boxed{YES}</answer>"))
        ChatOpenAI(base_url=server.base_url, api_key="x", model="m", max_retries=0) ...
        server.requests[0]["messages"]   # what the client sent, parsed JSON

Each POST /v1/chat/completions consumes the next reply (non-streaming or SSE when the request has
"stream": true). A reply can be an HTTP error, a 429 with Retry-After, a delay (to make the client
time out) or a raw body. When the script runs out, `responder(request_body) -> Reply` answers if one
is set (a reply that depends on the conversation, for concurrent clients whose requests interleave),
else the server answers 400, so a test can never loop forever.

For load tests: `latency` seconds are added to every call (requests are served in parallel threads,
as a batching model server would); every reply carries `usage` (prompt tokens ~ text / 4 plus
IMAGE_TOKENS per image, with `prompt_tokens_details.image_tokens`; completion tokens ~ text / 4);
`arrived` / `replied` hold each request's monotonic arrival and answer times, and `max_in_flight`
the most requests the server held at once.
Tests reuse it through the `openai_server` fixture (tests/agents/vet/conftest.py) or by importing
this module (tests/ is on sys.path, see tests/conftest.py).
"""
from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

IMAGE_TOKENS = 256  # what the scripted server charges per image, as a vision model would


@dataclass
class Reply:
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments" (str|dict), "id"?}
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    raw_body: str | None = None  # sent verbatim (status as given)
    finish_reason: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers

    @classmethod
    def text(cls, content: str, **kw) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: dict | str, content: str = "", **kw) -> Reply:
        return cls(content=content, tool_calls=[{"name": name, "arguments": arguments}], **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "scripted failure") -> Reply:
        return cls(status=status, raw_body=json.dumps({"error": {"message": message, "type": "server_error",
                                                                 "code": status}}))

    @classmethod
    def rate_limited(cls, retry_after: float | str, status: int = 429) -> Reply:
        """429 (or 503) with a Retry-After header (seconds, or an HTTP date given as a string)."""
        reply = cls.error(status, "rate limited: retry later")
        reply.headers["Retry-After"] = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
        return reply

    @classmethod
    def hang(cls, seconds: float, then: Reply | None = None) -> Reply:
        base = then or cls(content="late")
        base.delay = seconds
        return base


def _usage(body: dict, reply: Reply) -> dict[str, Any]:
    """Token counts the way a server reports them, estimated from what was sent and answered."""
    chars, images = 0, 0
    for m in body.get("messages") or []:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for p in parts:
            if isinstance(p, dict) and p.get("type") == "image_url":
                images += 1
            elif isinstance(p, dict):
                chars += len(str(p.get("text") or ""))
    prompt = chars // 4 + images * IMAGE_TOKENS
    completion = (len(reply.content or "") + sum(len(json.dumps(tc["arguments"])) for tc in reply.tool_calls)) // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"image_tokens": images * IMAGE_TOKENS}}


def _tool_calls_json(reply: Reply) -> list[dict[str, Any]]:
    out = []
    for i, tc in enumerate(reply.tool_calls):
        args = tc["arguments"]
        out.append({"id": tc.get("id") or f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                    "function": {"name": tc["name"],
                                 "arguments": args if isinstance(args, str) else json.dumps(args)},
                    "index": i})
    return out


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as model servers do: a load test must not pay a connect per call

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsable": raw.decode("utf-8", "replace")}
        owner = self.server.owner
        with owner.lock:
            self._index = len(owner.requests)
            owner.requests.append(body)
            owner.headers.append({k.lower(): v for k, v in self.headers.items()})  # keys lower-cased
            owner.arrived.append(time.monotonic())
            owner.replied.append(None)
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
            reply = owner.script.popleft() if owner.script else None
        try:
            self._answer(owner, body, reply)
        finally:
            with owner.lock:
                owner.in_flight -= 1
                owner.replied[self._index] = time.monotonic()

    def _answer(self, owner, body, reply):
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if reply is None and owner.responder is not None:
            reply = owner.responder(body)
        if reply is None:
            return self._send(400, {"error": {"message": "scripted server: no reply left",
                                              "type": "invalid_request_error"}})
        if reply.delay or owner.latency:
            time.sleep(reply.delay + owner.latency)
        if reply.raw_body is not None:
            return self._send(reply.status, reply.raw_body, reply.headers)
        if body.get("stream"):
            return self._stream(body, reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        calls = _tool_calls_json(reply)
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        self._send(reply.status, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:10]}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage(body, reply)}, reply.headers)

    def _stream(self, body, reply: Reply):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")  # no length known up front: the close ends the body
        self.close_connection = True
        self.end_headers()
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:10]}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", "scripted")}

        def chunk(delta, finish=None):
            data = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        if reply.content:
            for i in range(0, len(reply.content), 16):
                chunk({"content": reply.content[i:i + 16]})
        calls = _tool_calls_json(reply)
        for c in calls:
            chunk({"tool_calls": [{"index": c["index"], "id": c["id"], "type": "function",
                                   "function": {"name": c["function"]["name"], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": c["index"], "function": {"arguments": c["function"]["arguments"]}}]})
        chunk({}, reply.finish_reason or ("tool_calls" if calls else "stop"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _send(self, status: int, payload, headers: dict[str, str] | None = None):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        encoded = data.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(encoded)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # listen backlog: a load test opens dozens of connections at once
    owner: ScriptedOpenAIServer

    def handle_error(self, request, client_address):
        # A client that timed out on purpose (fault-injection tests) closes the socket before the
        # scripted reply is written: expected here, not worth a traceback on stderr.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedOpenAIServer:
    def __init__(self, replies: list[Reply] | None = None, *, latency: float = 0.0,
                 responder: Callable[[dict], Reply | None] | None = None, host: str = "127.0.0.1", port: int = 0):
        self.script: deque[Reply] = deque(replies or [])
        self.responder = responder
        self.latency = latency  # seconds added to every call
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrived: list[float] = []  # time.monotonic() when each request came in
        self.replied: list[float | None] = []  # ... and when its answer was written
        self.in_flight = 0
        self.max_in_flight = 0
        self._address = (host, port)
        self.lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Reply) -> None:
        with self.lock:
            self.script.extend(replies)

    def wait_for_in_flight(self, width: int, timeout: float = 20.0) -> bool:
        """For a responder (it runs in a request's thread): wait until `width` requests are held at
        once, or `timeout` s. Once reached it returns at once, so only a client that really overlaps
        `width` requests is answered promptly; a serial one is answered late, and max_in_flight tells."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.in_flight >= width or self.max_in_flight >= width:
                    return True
            time.sleep(0.01)
        return False

    @property
    def remaining(self) -> int:
        return len(self.script)

    def start(self) -> ScriptedOpenAIServer:
        self._httpd = _Server(self._address, _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
