"""Finding 9 / What to build 7: the local command endpoint (reviewer/server_endpoint.py) under clients that
do not play along, and an app that started while its database was locked.

- A client that connects and sends nothing, or trickles its request a byte at a time, is cut off after
  REQUEST_TIMEOUT_S (10 s; 1 s here) whatever it does: it never holds an endpoint thread for good.
- Connections still waiting for their request are bounded (MAX_WAITING): more are answered 503 at once and
  closed, and the endpoint's threads go back to what they were once the idle clients are cut off.
- A busy endpoint (issue 45, item 6: another local user holding 20 idle connections) answers 503 with
  Retry-After, and the answer arrives whole even while the refused client is still sending its
  request; the CLI asks again briefly, then says the app is busy and exits BUSY_EXIT (no traceback).
- An app started while another process held the database stops, with the message and exit code 1 (issue 49),
  and leaves no endpoint behind.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from served_app import free_port, seeded_db

from reviewer import server_endpoint
from reviewer.cli import remote
from reviewer.server_endpoint import TOKEN_HEADER, CommandEndpoint, endpoint_path
from reviewer.store import Store

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
TIMEOUT_S = 1.0


@pytest.fixture
def endpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(server_endpoint, "REQUEST_TIMEOUT_S", TIMEOUT_S, raising=False)
    monkeypatch.setattr(server_endpoint, "MAX_WAITING", 4, raising=False)
    db = tmp_path / "served.duckdb"
    Store(db)

    def runner(payload, console):
        console.say("ran")
        return 0

    endpoint = CommandEndpoint(db, runner=runner).start()
    yield endpoint
    endpoint.stop()
    Store.close_all()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.settimeout(30)
    return sock


def closed_within(sock: socket.socket, limit: float) -> float:
    """Seconds until the server ends the connection (anything it sends first is read and dropped);
    fails when it is still open after `limit`."""
    start = time.monotonic()
    sock.settimeout(limit)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        pytest.fail(f"the endpoint still holds the connection after {limit} s")
    except ConnectionResetError:
        pass
    return time.monotonic() - start


def wait_for(condition, what, limit: float = 15) -> None:
    """Poll `condition` until it holds; fail after `limit` s naming `what` (a string, or a callable
    giving one then: the state at the deadline)."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {limit} s: {what() if callable(what) else what}")
        time.sleep(0.02)


def run_command(port: int, token: str) -> tuple[int, list[dict]]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/run", body=json.dumps({"argv": ["session", "list"]}).encode(), headers={TOKEN_HEADER: token})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, [json.loads(line) for line in data.splitlines() if line.strip()]


def test_a_client_that_sends_nothing_is_cut_off(endpoint):
    sock = connect(endpoint.port)
    try:
        assert closed_within(sock, 15) < TIMEOUT_S + 3
    finally:
        sock.close()
    assert run_command(endpoint.port, endpoint.token)[0] == 200  # and the endpoint still serves


def test_a_client_that_trickles_its_request_is_cut_off_at_the_deadline(endpoint):
    sock = connect(endpoint.port)
    stop = threading.Event()

    def trickle():
        try:
            sock.sendall(b"POST /run HTTP/1.0\r\n")
            while not stop.is_set():
                sock.sendall(b"X")  # a header that never ends: each byte well within a per-read timeout
                time.sleep(TIMEOUT_S / 5)
        except OSError:
            pass

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    try:
        assert closed_within(sock, 15) < TIMEOUT_S + 3
    finally:
        stop.set()
        sender.join(10)
        sock.close()


def test_waiting_connections_are_bounded_and_their_threads_come_back(endpoint):
    baseline = threading.active_count()
    idle = [connect(endpoint.port) for _ in range(4)]  # MAX_WAITING in this test
    wait_for(lambda: endpoint.load()[0] == 4, "the endpoint accepted the 4 idle connections")
    extra = [connect(endpoint.port) for _ in range(6)]
    try:
        for sock in extra:  # answered at once, not held
            sock.settimeout(5)
            answer = b""
            try:
                while chunk := sock.recv(4096):
                    answer += chunk
            except TimeoutError:
                pytest.fail("a connection past the bound was held, not refused")
            assert answer.startswith(b"HTTP/1.0 503") and b"busy" in answer, answer
        assert threading.active_count() <= baseline + 4 + 2
        for sock in idle:
            closed_within(sock, 15)
        wait_for(lambda: threading.active_count() <= baseline, "the endpoint's threads came back", 10)
        status, frames = run_command(endpoint.port, endpoint.token)  # the slots are free again
        assert status == 200 and frames[-1] == {"exit": 0}
    finally:
        for sock in idle + extra:
            sock.close()


def test_a_running_command_does_not_take_a_waiting_slot(endpoint):
    """A long command holds its connection, but not one of the MAX_WAITING slots of unanswered requests."""
    release = threading.Event()

    def slow(payload, console):
        console.say("started")
        release.wait(30)
        return 0

    endpoint.runner = slow
    results = []
    clients = [threading.Thread(target=lambda: results.append(run_command(endpoint.port, endpoint.token)))
               for _ in range(6)]
    for client in clients:
        client.start()
    wait_for(lambda: endpoint.load() == (0, 6), "6 commands running, none waiting")
    endpoint.runner = lambda payload, console: 0
    try:
        assert run_command(endpoint.port, endpoint.token)[0] == 200
    finally:
        release.set()
        for client in clients:
            client.join(30)
    assert [status for status, _ in results] == [200] * 6


# -- a busy endpoint: 503 with Retry-After, read whole; the CLI says so --------------------------------
class IdleClients:
    """Another local user's connections that never send a request, `count` of them held open: each one
    the endpoint cuts off (or answers busy) is opened again (the attack of issue 45, item 6)."""

    def __init__(self, port: int, count: int):
        self.port, self.count = port, count
        self.stop = threading.Event()
        self.socks: list[socket.socket] = []
        self.thread = threading.Thread(target=self._hold, daemon=True)
        self.thread.start()

    def _hold(self):
        while not self.stop.is_set():
            for sock in list(self.socks):
                sock.setblocking(False)
                try:
                    if sock.recv(4096) != b"":  # answered busy: it is closed next
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                self.socks.remove(sock)  # cut off: open another
                sock.close()
            while len(self.socks) < self.count and not self.stop.is_set():
                try:
                    self.socks.append(socket.create_connection(("127.0.0.1", self.port), timeout=5))
                except OSError:
                    break
            time.sleep(0.05)

    def close(self):
        self.stop.set()
        self.thread.join(10)
        for sock in self.socks:
            sock.close()


def busy_request(port: int, body_bytes: int) -> bytes:
    """A command request with a body of `body_bytes` sent to a busy endpoint; what came back."""
    body = json.dumps({"argv": ["ingest"] + ["x" * 50] * (body_bytes // 54)}).encode()
    head = f"POST /run HTTP/1.0\r\n{TOKEN_HEADER}: t\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        try:
            sock.sendall(head + body)
            sock.shutdown(socket.SHUT_WR)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        except OSError as exc:
            pytest.fail(f"the busy endpoint broke the connection instead of answering: {exc!r}")
    return answer


def test_a_busy_endpoint_answers_503_with_retry_after_even_to_a_client_still_sending(endpoint, monkeypatch):
    monkeypatch.setattr(server_endpoint, "REQUEST_TIMEOUT_S", 30.0)  # the idle clients are not cut off here
    idle = IdleClients(endpoint.port, 4)  # MAX_WAITING in this test
    try:
        wait_for(lambda: endpoint.load()[0] == 4, "the endpoint holds the 4 idle connections")
        for size in (100, 300_000, 900_000, 900_000, 900_000):
            answer = busy_request(endpoint.port, size)
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.0 503"), answer[:200]
            retry = [line for line in head.split(b"\r\n") if line.lower().startswith(b"retry-after:")]
            assert retry and 1 <= int(retry[0].split(b":")[1]) <= 30, head
            assert "busy" in json.loads(body)["error"]
    finally:
        idle.close()


def big_ingest(tmp_path: Path) -> list[str]:
    """`specreview ingest` with a request body of ~1 MB (many path arguments: the client is still sending
    them when the busy endpoint has answered)."""
    return ["ingest", *(str(tmp_path / f"spectrum-{i:06d}-{'p' * 40}.fits") for i in range(12_000))]


def test_the_cli_says_the_app_is_busy_and_exits_nonzero_without_a_traceback(endpoint, tmp_path, monkeypatch):
    monkeypatch.setattr(server_endpoint, "REQUEST_TIMEOUT_S", 60.0)
    idle = IdleClients(endpoint.port, 20)
    try:
        wait_for(lambda: endpoint.load()[0] == 4, "the endpoint holds its 4 waiting connections")
        done = subprocess.run([sys.executable, "-m", "reviewer.cli", *big_ingest(tmp_path), "--db", str(endpoint.db)],
                              capture_output=True, text=True, timeout=180, cwd=tmp_path, env=ENV)
    finally:
        idle.close()
    assert done.returncode == remote.BUSY_EXIT, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr[-2000:]
    assert "is busy" in done.stderr and "try again" in done.stderr, done.stderr


def test_the_cli_asks_a_busy_app_again_and_runs_once_it_has_room(endpoint, capsys):
    idle = [connect(endpoint.port) for _ in range(4)]  # held once: cut off after TIMEOUT_S (1 s here)
    try:
        wait_for(lambda: endpoint.load()[0] == 4, "the endpoint holds the 4 idle connections")
        code = remote.forward({"port": endpoint.port, "token": endpoint.token},
                              {"argv": ["session", "list"], "db": str(endpoint.db)}, endpoint.db.name)
    finally:
        for sock in idle:
            sock.close()
    out, err = capsys.readouterr()
    assert code == 0 and "ran" in out, err


# -- an app started while another process held its database ---------------------------------------------
def test_an_app_started_on_a_locked_database_stops_and_leaves_no_endpoint(tmp_path):
    """Issue 49, item 4: it stops with the message and exit 1 (tests/reviewer/cli/test_command_contracts.py
    has `specreview serve` too), rather than serving pages that say the file is locked."""
    db, _ = seeded_db(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(db)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout.readline().strip() == "held"
        done = subprocess.run([sys.executable, "-m", "panel", "serve", "reviewer", "--address", "127.0.0.1",
                               "--port", str(free_port())], capture_output=True, text=True, timeout=240, cwd=REPO_ROOT,
                              env=dict(ENV, SPECREVIEW_DB=str(db)))
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    log = done.stdout + done.stderr
    assert done.returncode == 1 and "Could not set lock" in log and "the server stops" in log, log[-3000:]
    assert str(tmp_path) not in log and sys.executable not in log
    assert not endpoint_path(db).exists()
