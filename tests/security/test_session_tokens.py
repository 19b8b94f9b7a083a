"""Issue 45, items 2 and 5, over real HTTP and websockets: a client cannot build sessions itself over
the websocket (tokens and session ids are signed by the server), a session built over the websocket
is charged to the client's page budget, an oversize token is refused before it is decoded, and a
login ends (its cookie expires with Panel's login expiry, and /logout ends it on the server)."""
from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import zlib

import pytest
import requests
from served_app import REPO_ROOT, ServedApp, free_port, seeded_db, wait_for_port
from tornado.web import create_signed_value

from layouts.identity import authenticated_user
from reviewer import logins

SPECREVIEW = [sys.executable, "-m", "reviewer.cli"]
SECRET = "team-secret-" + "t" * 40
DAY_S = 86400


def b64(data: bytes | str) -> str:
    data = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def forged_token(session_id: str, cookies: dict | None = None, extra: dict | None = None) -> str:
    """A token as a client builds it itself (Bokeh's unsigned format)."""
    payload = {"headers": {}, "cookies": cookies or {}, "arguments": {"reviewer": [b64("flood")]}, **(extra or {})}
    body = {"session_id": session_id, "session_expiry": int(time.time()) + 300,
            "__bk__zlib_": b64(zlib.compress(json.dumps(payload).encode(), 9))}
    return b64(json.dumps(body))


class Websocket:
    """A minimal websocket client: the Bokeh handshake (token in Sec-WebSocket-Protocol), then frames."""

    def __init__(self, port: int, token: str, source: str = "127.0.0.1", cookie: str | None = None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=120, source_address=(source, 0))
        started = time.monotonic()
        lines = ["GET /reviewer/ws HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}", "Sec-WebSocket-Version: 13",
                 f"Origin: http://127.0.0.1:{port}", f"Sec-WebSocket-Protocol: bokeh, {token}"]
        if cookie:
            lines.append(f"Cookie: user={cookie}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        self.handshake_s = time.monotonic() - started
        self.status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
        self.buffer = head.partition(b"\r\n\r\n")[2]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def frame(self) -> tuple[int, bytes]:
        first, second = self._read(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._read(2), "big")
        elif length == 127:
            length = int.from_bytes(self._read(8), "big")
        return first & 0x0F, self._read(length)

    def outcome(self, timeout: float = 120.0) -> str:
        """'ack' when the server built (or found) the session and acknowledged it, 'close <code>' when
        it closed the connection first, 'http <status>' when it refused the upgrade, 'open' when nothing
        of these came within `timeout` seconds."""
        if self.status != 101:
            return f"http {self.status}"
        self.sock.settimeout(timeout)
        try:
            while True:
                opcode, data = self.frame()
                if opcode == 8:
                    return f"close {int.from_bytes(data[:2], 'big') if len(data) >= 2 else 0}"
                if opcode == 1 and b'"ACK"' in data:
                    return "ack"
        except TimeoutError:
            return "open"
        except (EOFError, OSError):
            return "close 0"

    def close(self) -> None:
        self.sock.close()


def page_token(html: str) -> str:
    found = re.search(r'"token":\s*"([^"]+)"', html) or re.search(r"token\s*[:=]\s*'([^']+)'", html)
    assert found, "no session token in the page"
    return found.group(1)


def page(port: int, source: str = "127.0.0.1", cookies: dict | None = None, follow: bool = True) -> requests.Response:
    session = requests.Session()
    session.mount("http://", _SourceAdapter(source))
    return session.get(f"http://127.0.0.1:{port}/reviewer?reviewer=flood", cookies=cookies, timeout=300,
                       allow_redirects=follow)


class _SourceAdapter(requests.adapters.HTTPAdapter):
    def __init__(self, source: str):
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        return super().init_poolmanager(*args, **kwargs)


@pytest.fixture
def tight_app(tmp_path):
    """`panel serve reviewer` (single-user: no secret of its own) with a small page budget: 1 s of
    building per client, refilled at 1 % of the clock; sessions nobody holds are discarded within ~1 s."""
    db, _ = seeded_db(tmp_path)
    app = ServedApp(db, tmp_path / "panel.log", ("--unused-session-lifetime", "500", "--check-unused-sessions", "300"),
                    env={"SPECREVIEW_PAGE_BURST_SECONDS": "1", "SPECREVIEW_PAGE_SHARE_PERCENT": "1"})
    yield app
    app.stop()


def spend_page_budget(port: int, source: str) -> None:
    for _ in range(10):
        if page(port, source).status_code == 429:
            return
    raise AssertionError("the page budget was never spent")


@pytest.mark.ui  # a served app: run with the browser tests
def test_thirty_forged_websocket_sessions_are_refused_and_another_client_is_served(tight_app):
    port = tight_app.port
    spend_page_budget(port, "127.0.0.1")
    outcomes = []
    for i in range(30):
        ws = Websocket(port, forged_token(f"forged{i:02d}" + "x" * 36))
        outcomes.append(ws.outcome())
        ws.close()
    assert outcomes.count("ack") == 0, outcomes  # not one session built
    assert page(port, "127.0.0.2").status_code == 200  # another client
    assert tight_app.proc.poll() is None


@pytest.mark.ui
def test_a_session_built_over_the_websocket_is_charged_to_the_page_budget(tight_app):
    port = tight_app.port
    first = page(port, "127.0.0.3")
    assert first.status_code == 200
    token = page_token(first.text)
    outcomes = []
    for _ in range(5):
        time.sleep(1.5)  # the page's session, held by nobody, is discarded: the token would build it again
        ws = Websocket(port, token, source="127.0.0.3")
        outcomes.append(ws.outcome())
        ws.close()
    assert "close 1013" in outcomes, outcomes  # refused once the budget was spent
    assert outcomes.count("ack") <= 2, outcomes
    assert page(port, "127.0.0.3").status_code == 429  # the same budget as its pages
    assert page(port, "127.0.0.4").status_code == 200


@pytest.mark.ui
def test_a_session_takes_at_most_two_connections(tight_app):
    """Each connection to a session is sent its whole document: a page's own token may not open it
    again and again (review of issue 45: joins cost the loop and were not charged)."""
    port = tight_app.port
    token = page_token(page(port, "127.0.0.5").text)
    held = [Websocket(port, token, source="127.0.0.5") for _ in range(2)]
    assert [ws.outcome() for ws in held] == ["ack", "ack"]
    outcomes = []
    for _ in range(5):
        extra = Websocket(port, token, source="127.0.0.5")
        outcomes.append(extra.outcome())
        extra.close()
    assert outcomes == ["close 1008"] * 5, outcomes
    for ws in held:
        ws.close()


@pytest.mark.ui
def test_an_oversize_token_is_refused_before_it_is_decoded(tight_app):
    bomb = forged_token("bomb" + "x" * 40, extra={"padding": "A" * 34_000_000})  # ~60 KB inflating to 34 MB
    assert 40_000 < len(bomb) < 64_000
    assert page(tight_app.port, "127.0.0.5").status_code == 200  # the server is up and done with its start
    took = []
    for _ in range(5):
        ws = Websocket(tight_app.port, bomb)
        assert ws.outcome() == "http 431"
        took.append(ws.handshake_s)
        ws.close()
    assert sum(took) < 3.0, took  # inflating it took 0.6-2.6 s each
    assert page(tight_app.port, "127.0.0.6").status_code == 200


def signed(user: str, age_s: float = 0.0) -> str:
    return create_signed_value(SECRET, "user", user, clock=lambda: time.time() - age_s).decode()


def test_a_login_cookie_older_than_the_login_expiry_names_nobody():
    assert authenticated_user({"user": signed("carl", 3600)}, SECRET) == "carl"
    assert authenticated_user({"user": signed("carl", 5 * DAY_S)}, SECRET) is None  # Panel's expiry: 1 day
    assert authenticated_user({"user": signed("carl", 1.5 * DAY_S)}, SECRET) is None


def test_a_logged_out_login_names_nobody():
    old, other = signed("ivy", 60), signed("jon", 60)
    assert logins.log_out(old, SECRET) == "ivy"
    assert authenticated_user({"user": old}, SECRET) is None
    assert authenticated_user({"user": other}, SECRET) == "jon"  # only that user's logins end
    assert logins.log_out("ivy", SECRET) is None and logins.log_out(signed("x", 5 * DAY_S), SECRET) is None


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team-logins")
    db, _ = seeded_db(tmp)
    (tmp / "creds.json").write_text(json.dumps({"carl": "pw-carl", "dana": "pw-dana"}))
    (tmp / "secret").write_text(SECRET)
    port = free_port()
    with open(tmp / "serve.log", "w") as log:
        proc = subprocess.Popen([*SPECREVIEW, "serve", "--db", str(db), "--port", str(port), "--basic-auth",
                                 str(tmp / "creds.json"), "--cookie-secret-file", str(tmp / "secret")],
                                cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PYTHONUNBUFFERED="1", SPECREVIEW_PAGE_BURST_SECONDS="3600"))
    wait_for_port(port, proc)
    yield proc, port
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def login_cookie(port: int, user: str) -> str:
    answer = requests.post(f"http://127.0.0.1:{port}/login", data={"username": user, "password": f"pw-{user}"},
                           allow_redirects=False, timeout=120)
    assert answer.status_code == 302
    return answer.cookies["user"]


def test_a_five_day_old_login_gets_no_page_and_builds_no_session(team_server):
    _, port = team_server
    old = signed("carl", 5 * DAY_S)
    answer = page(port, cookies={"user": old}, follow=False)
    assert answer.status_code == 302 and "login" in answer.headers["Location"]
    # the session token a client builds itself, carrying the old cookie, with a fresh one for the handshake
    ws = Websocket(port, forged_token("old-login" + "x" * 35, cookies={"user": old}), cookie=login_cookie(port, "carl"))
    assert ws.outcome() != "ack"
    ws.close()


def test_logout_ends_the_login_and_its_open_sessions(team_server):
    _, port = team_server
    cookie = login_cookie(port, "dana")
    answer = page(port, cookies={"user": cookie})
    assert answer.status_code == 200 and "sr-fatal" not in answer.text
    ws = Websocket(port, page_token(answer.text), cookie=cookie)
    assert ws.outcome() == "ack"  # the page's open session
    spare = page_token(page(port, cookies={"user": cookie}).text)  # a real page's token, not yet opened
    assert requests.get(f"http://127.0.0.1:{port}/logout", cookies={"user": cookie}, timeout=120).status_code == 200
    assert ws.outcome(timeout=30) == "close 1008"  # closed at the logout: it saves nothing more
    ws.close()
    again = page(port, cookies={"user": cookie}, follow=False)  # the old cookie, kept by a client
    assert again.status_code == 302 and "login" in again.headers["Location"]
    ws = Websocket(port, spare, cookie=cookie)  # signed by the server, carrying the ended login
    assert ws.outcome() in ("http 403", "close 1008", "close 0")
    ws.close()
    fresh = login_cookie(port, "dana")  # a new login works
    assert page(port, cookies={"user": fresh}).status_code == 200
