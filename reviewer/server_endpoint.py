"""The running app's command endpoint: `specreview` commands run inside the server that owns the database.

DuckDB lets one process at a time open a file read-write, and while `panel serve reviewer` runs that
process is the app. So the app, when it starts (reviewer/app_hooks.py), also listens on 127.0.0.1 on a
free port and writes an endpoint file next to the database, `<db>.server.json` (port, pid, a random
token; mode 0600, owned by the user). A CLI command that finds the database locked by that pid sends
its arguments there (reviewer/cli/remote.py); the app runs the same command in a worker thread through
its own connection (a cursor per thread) and streams back what it prints and its exit code.

Security: localhost only; every request carries the token, which only a process that can read the
endpoint file (the user's own) knows; wrong or missing token -> 403. The endpoint runs `specreview`
commands and nothing else. A client has REQUEST_TIMEOUT_S (10 s) for its whole request (request line,
headers, body), however it trickles it; at most MAX_WAITING connections wait for theirs (more: 503 at
once) and at most MAX_RUNNING commands run (more: 503), so connections without a token hold no thread
for long and never many. A busy answer (503) says when to try again (Retry-After, in seconds), and it
reaches the client whole: the endpoint stops sending, then keeps reading what the client still sends
for up to LINGER_S before it closes (closing on unread data would reset the connection, and the
client would see a broken pipe instead of the answer). Once admitted, a command's answer is written without a timeout (the client
may be piped into a pager); a client that goes away stops it at its next item (reviewer.cli.console:
the command's own output streams and cancel flag; no thread's sys.stdout is touched).

Wire format: `POST /run` with header `X-SpecReview-Token` and a JSON body {"argv": [...], "db": the
database path the client resolved, "paths": {dest: absolute path(s)} resolved on the client,
"tty": {"stdout": bool, "stderr": bool}}. The answer is a stream of JSON lines: {"out": text},
{"err": text}, and finally {"exit": code}; empty lines are heartbeats (once a second, so a client
that went away is noticed and its command stopped).
"""
from __future__ import annotations

import contextlib
import hmac
import io
import json
import logging
import math
import os
import queue
import secrets
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from reviewer.cli.console import Console
from reviewer.endpoint_file import (  # noqa: F401 - the endpoint file's names, read from here by callers and tests
    ENDPOINT_SUFFIX,
    FORMAT_VERSION,
    TOKEN_HEADER,
    UnsafeEndpoint,
    endpoint_path,
    pid_alive,
    read_endpoint_file,
    remove_endpoint_file,
    write_endpoint_file,
)

log = logging.getLogger("specreview.endpoint")

MAX_REQUEST_BYTES = 1 << 20
HEARTBEAT_S = 1.0
REQUEST_TIMEOUT_S = 10.0  # for the whole request: line, headers and body
MAX_WAITING = 16  # connections whose request is not yet read and checked
MAX_RUNNING = 32  # commands running at once
LINGER_S = 2.0  # a refused connection is read and dropped this long before it is closed
MAX_LINGERING = 64  # refused connections lingering at once (more: the oldest is closed at once)
RUNNING_RETRY_S = 2  # Retry-After when MAX_RUNNING commands run

Emit = Callable[[str, str], None]  # (stream "out"|"err", text)
Runner = Callable[[dict, Console], int]


# -- a forwarded command's output and cancel flag ----------------------------------------------------------
class _ClientStream(io.TextIOBase):
    """One output stream of a forwarded command (reviewer.cli.console.Console): what the command
    writes goes to its client, as frames; nothing else in the process writes here, and the app's own
    sys.stdout / sys.stderr are never replaced."""

    def __init__(self, emit: Emit, name: str, tty: bool):
        self._emit, self._name, self._tty = emit, name, tty

    def write(self, text: str) -> int:
        if text:
            self._emit(self._name, text)
        return len(text)

    def isatty(self) -> bool:  # the client's terminal, as it said: a progress bar only where one is watched
        return self._tty

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"


def client_console(emit: Emit, tty: dict | None = None) -> Console:
    """The console of a command run for a client: its two streams, and a cancel flag the endpoint sets
    when the client goes away."""
    tty = tty or {}
    return Console(_ClientStream(emit, "out", bool(tty.get("stdout"))), _ClientStream(emit, "err", bool(tty.get("stderr"))))


# -- running a command -----------------------------------------------------------------------------
def run_cli(db: Path, payload: dict, console: Console) -> int:
    """Run the `specreview` command `payload` describes on this process's open database `db`, writing
    to `console`. The database is the served one whatever --db said; path arguments come already made
    absolute by the client (this process's working folder is not the user's)."""
    from reviewer.cli import build_parser, run_args

    try:
        args = build_parser().parse_args([str(a) for a in payload["argv"]])
        if args.command == "serve":
            console.warn("specreview: `serve` does not run through the app")
            return 2
        for dest, value in (payload.get("paths") or {}).items():
            if hasattr(args, dest) and dest not in ("db", "command", "_run", "console"):
                setattr(args, dest, value)
        args.db = str(db)
        return run_args(args, console)
    except SystemExit as exc:  # argparse (the client parsed the same words first), or a command that exits
        code = exc.code
        if isinstance(code, str):  # exit("why"): the message is the client's, not the server's stderr
            console.warn(code)
            return 1
        return code if isinstance(code, int) else 0
    except BaseException:
        traceback.print_exc(file=console.err)
        return 1


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "specreview-endpoint"
    protocol_version = "HTTP/1.0"  # one request per connection; the answer ends when it closes

    def setup(self) -> None:
        self.timeout = REQUEST_TIMEOUT_S  # each read (the server's deadline bounds the whole request)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.client_address[0], *args)

    def _refuse(self, code: int, why: str, retry_after: int | None = None) -> None:
        body = json.dumps({"error": why}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if retry_after is not None:
            self.send_header("Retry-After", str(retry_after))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._refuse(405, "POST /run")

    def do_POST(self) -> None:
        owner = self.server.owner
        token = self.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(token.encode("utf-8", "replace"), owner.token.encode()):
            self._refuse(403, "wrong or missing token")
            return
        if self.path != "/run":
            self._refuse(404, "POST /run")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_REQUEST_BYTES:
            self._refuse(413 if length > MAX_REQUEST_BYTES else 400, "a JSON body of at most 1 MiB")
            return
        try:
            payload = json.loads(self.rfile.read(length))
            argv = payload["argv"]
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise ValueError("argv")
        except (ValueError, KeyError, TypeError):
            self._refuse(400, "the body must be JSON with an argv list of strings")
            return
        if payload.get("db") and Path(payload["db"]) != owner.db:
            self._refuse(409, f"this app serves {owner.db.name}, not {Path(payload['db']).name}")
            return
        if not self.server.admit(self.request):
            self._refuse(503, f"busy: the app runs {MAX_RUNNING} commands already; try again when one ends",
                         retry_after=RUNNING_RETRY_S)
            return
        try:
            self.connection.settimeout(None)  # the answer may wait on a slow reader (a pager)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.end_headers()
            self._stream(owner, payload)
        finally:
            self.server.command_ended()

    def _stream(self, owner: CommandEndpoint, payload: dict) -> None:
        frames: queue.Queue = queue.Queue()
        done = object()
        result = {"exit": 1}

        console = client_console(lambda stream, text: frames.put((stream, text)), payload.get("tty"))

        def work() -> None:
            try:
                result["exit"] = owner.runner(payload, console)
            finally:
                frames.put(done)

        worker = threading.Thread(target=work, name=f"specreview-cmd-{payload['argv'][0]}", daemon=True)
        words = [a for a in payload["argv"][:2] if not a.startswith("-")]
        log.warning("running `specreview %s ...` for a client", " ".join(words))
        worker.start()
        finished = False
        try:
            while not finished:
                try:
                    item = frames.get(timeout=HEARTBEAT_S)
                except queue.Empty:
                    self.wfile.write(b"\n")  # heartbeat: notices a client that went away
                    self.wfile.flush()
                    continue
                chunks: list[tuple[str, str]] = []
                while True:  # coalesce what is waiting into few frames
                    if item is done:
                        finished = True
                        break
                    if chunks and chunks[-1][0] == item[0]:
                        chunks[-1] = (item[0], chunks[-1][1] + item[1])
                    else:
                        chunks.append(item)
                    try:
                        item = frames.get_nowait()
                    except queue.Empty:
                        break
                lines = [json.dumps({stream: text}) for stream, text in chunks]
                if finished:
                    lines.append(json.dumps({"exit": result["exit"]}))
                if lines:
                    self.wfile.write(("\n".join(lines) + "\n").encode())
                    self.wfile.flush()
        except OSError:  # the client went away (Ctrl-C): its command stops at its next item
            log.warning("the client of `specreview %s` went away: stopping it", payload["argv"][0])
            console.cancelled.set()


class _HTTPServer(ThreadingHTTPServer):
    """One thread per connection, but bounded: MAX_WAITING connections whose request has not been read
    and checked yet, each cut off REQUEST_TIMEOUT_S after it was accepted, and MAX_RUNNING commands."""

    daemon_threads = True
    allow_reuse_address = False
    owner: CommandEndpoint

    def __init__(self, *args, **kwargs):
        self._slots = threading.Lock()
        self._waiting: dict[socket.socket, float] = {}  # connection -> deadline of its request
        self._running = 0
        self._lingering: dict[socket.socket, float] = {}  # refused connection -> when it is closed
        super().__init__(*args, **kwargs)

    def process_request(self, request, client_address) -> None:
        with self._slots:
            now = time.monotonic()
            full = len(self._waiting) >= MAX_WAITING
            if not full:
                self._waiting[request] = now + REQUEST_TIMEOUT_S
            else:  # a slot frees at the latest when the first waiting connection is cut off
                first = min((d for d in self._waiting.values() if d != math.inf), default=now + 1)
                retry_after = max(1, min(math.ceil(first - now), math.ceil(REQUEST_TIMEOUT_S)))
        if full:  # answered here, at once: no thread for it
            log.warning("endpoint busy: %d connections wait for their request; refusing one", MAX_WAITING)
            self._refuse_at_once(request, "busy: too many connections wait for their request", retry_after)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._leave(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._leave(request)

    def _leave(self, request) -> None:
        with self._slots:
            self._waiting.pop(request, None)

    def admit(self, request) -> bool:
        """The request was read and its token checked: it leaves the waiting connections and runs its
        command, unless MAX_RUNNING run already (False)."""
        with self._slots:
            self._waiting.pop(request, None)
            if self._running >= MAX_RUNNING:
                return False
            self._running += 1
            return True

    def command_ended(self) -> None:
        with self._slots:
            self._running -= 1

    def load(self) -> tuple[int, int]:
        """(connections waiting for their request, commands running) at this instant."""
        with self._slots:
            return len(self._waiting), self._running

    def service_actions(self) -> None:
        """Between polls of serve_forever (every 0.5 s): cut off the connections past their deadline;
        read what refused connections sent meanwhile, and close those whose time is up."""
        super().service_actions()
        now = time.monotonic()
        with self._slots:
            late = [sock for sock, deadline in self._waiting.items() if deadline <= now]
            for sock in late:
                self._waiting[sock] = math.inf  # cut once; its slot frees when its thread ends
        for sock in late:
            log.debug("an endpoint client sent no complete request within %.0f s: cut off", REQUEST_TIMEOUT_S)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for sock, close_at in list(self._lingering.items()):
            if not self._drain(sock) or close_at <= now:
                self._close_lingering(sock)

    def _refuse_at_once(self, request, why: str, retry_after: int) -> None:
        """Answer 503 with Retry-After on a connection whose request was not read, without a thread: the
        answer is sent and the sending side shut, and the connection lingers (its input read and dropped
        between polls) until the client closes it or LINGER_S passed."""
        body = json.dumps({"error": f"{why}; try again in {retry_after} s", "retry_after": retry_after}).encode()
        head = (f"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nRetry-After: {retry_after}\r\nConnection: close\r\n\r\n").encode()
        try:
            request.settimeout(0.5)  # a new connection's send buffer is empty: this does not wait
            request.sendall(head + body)
            request.shutdown(socket.SHUT_WR)
            request.setblocking(False)
        except OSError:
            self.shutdown_request(request)
            return
        if len(self._lingering) >= MAX_LINGERING:  # bounded: the oldest goes now
            self._close_lingering(next(iter(self._lingering)))
        self._lingering[request] = time.monotonic() + LINGER_S
        self._drain(request)

    @staticmethod
    def _drain(sock: socket.socket, limit: int = 4 << 20) -> bool:
        """Read and drop what a refused connection has sent (at most `limit` bytes now); False once the
        client has closed its side, or the connection failed."""
        read = 0
        try:
            while read < limit:
                chunk = sock.recv(65536)
                if not chunk:
                    return False
                read += len(chunk)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        return True

    def _close_lingering(self, sock: socket.socket) -> None:
        self._lingering.pop(sock, None)
        with contextlib.suppress(OSError):
            sock.close()

    def server_close(self) -> None:
        super().server_close()
        for sock in list(self._lingering):
            self._close_lingering(sock)

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], OSError):  # a client cut off, or gone: not the endpoint's fault
            log.debug("endpoint connection from %s ended: %s", client_address[0], sys.exc_info()[1])
            return
        log.exception("endpoint request from %s failed", client_address[0])


class CommandEndpoint:
    """The endpoint of one served database: an HTTP server on 127.0.0.1 in a daemon thread (its
    requests each in their own thread, the commands in worker threads: the Bokeh IOLoop never waits
    on them) and the endpoint file that tells the CLI where it is."""

    def __init__(self, db: str | os.PathLike, runner: Runner | None = None, host: str = "127.0.0.1", port: int = 0):
        self.db = Path(db).resolve()
        self.token = secrets.token_urlsafe(32)
        self.runner: Runner = runner or (lambda payload, console: run_cli(self.db, payload, console))
        self.httpd = _HTTPServer((host, port), _Handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.thread: threading.Thread | None = None
        self.file: Path | None = None

    def start(self) -> CommandEndpoint:
        from reviewer.store.connection import pin

        pin(self.db)  # a command's store.close() must not close the app's connection
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="specreview-endpoint", daemon=True)
        self.thread.start()
        self.file = write_endpoint_file(self.db, self.port, self.token)
        return self

    def stop(self) -> None:
        from reviewer.store.connection import pin

        remove_endpoint_file(self.db)
        self.httpd.shutdown()
        self.httpd.server_close()
        pin(self.db, False)

    def load(self) -> tuple[int, int]:
        """(connections waiting for their request, commands running): what the bounds count."""
        return self.httpd.load()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_endpoint: CommandEndpoint | None = None


def start_endpoint(db: Path) -> CommandEndpoint | None:
    """Start this process's endpoint for `db` (once); None (logged) when it cannot listen or write its file."""
    global _endpoint
    if _endpoint is not None:
        return _endpoint
    try:
        endpoint = CommandEndpoint(db).start()
    except OSError as exc:
        log.error("specreview commands cannot run through the app (no endpoint: %s); "
                  "they will find the database locked while it runs", exc)
        return None
    _endpoint = endpoint
    import atexit

    atexit.register(stop_endpoint)
    log.warning("specreview commands on %s run through the app (endpoint on 127.0.0.1:%d)", endpoint.db.name,
                endpoint.port)
    return endpoint


def stop_endpoint() -> None:
    global _endpoint
    endpoint, _endpoint = _endpoint, None
    if endpoint is not None:
        endpoint.stop()
