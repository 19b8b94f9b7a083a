"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies.

    with ScriptedOpenAIServer() as server:
        server.push(Reply.tool_call("spectral_visualization_tool", {"wavelength_range": [6500, 6600]}),
                    Reply.text("<think>..</think><answer>\\boxed{YES}</answer>"))
        ChatOpenAI(base_url=server.base_url, api_key="x", model="m", max_retries=0) ...
        server.requests[0]["messages"]   # what the client sent, parsed JSON

Each POST /v1/chat/completions consumes the next reply (non-streaming or SSE when the request has
"stream": true). A reply can be an HTTP error, a delay (to make the client time out) or a raw
body. When the script runs out the server answers 400, so a test can never loop forever.
Tests reuse it through the `openai_server` fixture (tests/agents/vet/conftest.py) or by importing
this module (tests/ is on sys.path, see tests/conftest.py).
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments" (str|dict), "id"?}
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    raw_body: str | None = None  # sent verbatim (status as given)
    finish_reason: str | None = None

    @classmethod
    def text(cls, content: str, **kw) -> "Reply":
        return cls(content=content, **kw)

    @classmethod
    def tool_call(cls, name: str, arguments: dict | str, content: str = "", **kw) -> "Reply":
        return cls(content=content, tool_calls=[{"name": name, "arguments": arguments}], **kw)

    @classmethod
    def error(cls, status: int = 500, message: str = "scripted failure") -> "Reply":
        return cls(status=status, raw_body=json.dumps({"error": {"message": message, "type": "server_error",
                                                                 "code": status}}))

    @classmethod
    def hang(cls, seconds: float, then: "Reply | None" = None) -> "Reply":
        base = then or cls(content="late")
        base.delay = seconds
        return base


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
    server: "_Server"

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
            owner.requests.append(body)
            owner.headers.append({k.lower(): v for k, v in self.headers.items()})  # keys lower-cased
            reply = owner.script.popleft() if owner.script else None
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if reply is None:
            return self._send(400, {"error": {"message": "scripted server: no reply left", "type": "invalid_request_error"}})
        if reply.delay:
            time.sleep(reply.delay)
        if reply.raw_body is not None:
            return self._send(reply.status, reply.raw_body)
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
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

    def _stream(self, body, reply: Reply):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
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

    def _send(self, status: int, payload):
        data = payload if isinstance(payload, str) else json.dumps(payload)
        encoded = data.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ScriptedOpenAIServer"

    def handle_error(self, request, client_address):
        # A client that timed out on purpose (fault-injection tests) closes the socket before the
        # scripted reply is written: expected here, not worth a traceback on stderr.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedOpenAIServer:
    def __init__(self, replies: list[Reply] | None = None):
        self.script: deque[Reply] = deque(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
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

    @property
    def remaining(self) -> int:
        return len(self.script)

    def start(self) -> "ScriptedOpenAIServer":
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
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
