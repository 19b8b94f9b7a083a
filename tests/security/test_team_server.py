"""Findings 4 and 10 through `specreview serve`, the README's team command: exact websocket origins
(a page of another host cannot open the app's websocket), a login required off localhost, the CSP
built into the server, the cookie secret never on a command line or in the log."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import requests
from served_app import REPO_ROOT, free_port, seeded_db, wait_for_port

from reviewer.cli.serve import websocket_origins

SPECREVIEW = [sys.executable, "-m", "reviewer.cli"]


def test_origins_are_exact():
    assert websocket_origins("0.0.0.0", 5006, ["review.example.org"]) == ["review.example.org:5006"]
    assert websocket_origins("127.0.0.1", 5006, []) == ["localhost:5006", "127.0.0.1:5006"]
    with pytest.raises(ValueError):
        websocket_origins("0.0.0.0", 5006, ["*.example.org"])


@pytest.mark.parametrize("extra", [[], ["--allow-origin", "*:5006", "--basic-auth", "creds.json"]])
def test_a_network_server_without_a_login_or_with_a_wildcard_origin_does_not_start(tmp_path, extra):
    (tmp_path / "creds.json").write_text("{}")
    done = subprocess.run([*SPECREVIEW, "serve", "--db", str(tmp_path / "x.duckdb"), "--address", "0.0.0.0", *extra],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "specreview serve:" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.duckdb").exists()


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("team")
    db, _ = seeded_db(tmp)
    (tmp / "creds.json").write_text(json.dumps({"carl": "pw-carl"}))
    (tmp / "secret").write_text("team-secret-" + "q" * 40)
    port = free_port()
    with open(tmp / "serve.log", "w") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([*SPECREVIEW, "serve", "--db", str(db), "--port", str(port), "--basic-auth",
                                 str(tmp / "creds.json"), "--cookie-secret-file", str(tmp / "secret")],
                                cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
    wait_for_port(port, proc)
    yield proc, port, tmp / "serve.log"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def login(port: int) -> requests.Session:
    session = requests.Session()
    answer = session.post(f"http://127.0.0.1:{port}/login", data={"username": "carl", "password": "pw-carl"},
                          allow_redirects=False, timeout=120)
    assert answer.status_code == 302 and "user" in session.cookies
    return session


def test_pages_need_the_login_and_carry_the_policy(team_server):
    proc, port, log = team_server
    anonymous = requests.get(f"http://127.0.0.1:{port}/reviewer", allow_redirects=False, timeout=120)
    assert anonymous.status_code == 302 and "login" in anonymous.headers["Location"]
    page = login(port).get(f"http://127.0.0.1:{port}/reviewer", timeout=120)
    assert page.status_code == 200 and "frame-ancestors 'self'" in page.headers["Content-Security-Policy"]
    login_page = requests.get(f"http://127.0.0.1:{port}/login", timeout=120)
    assert "form-action 'self'" in login_page.headers["Content-Security-Policy"]  # its form posts to itself only
    assert requests.get(f"http://127.0.0.1:{port}/components/reviewer.cli.__main__/x/y/z", timeout=60).status_code == 404
    assert proc.poll() is None
    assert "team-secret" not in log.read_text()
    assert not any("team-secret" in a for a in proc.args)


def test_a_page_of_another_host_cannot_open_the_websocket(team_server):
    _, port, _ = team_server
    session = login(port)
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
    url = f"http://127.0.0.1:{port}/reviewer/ws"
    foreign = session.get(url, headers={**upgrade, "Origin": "http://evil.example.org:5006"}, timeout=60)
    assert foreign.status_code == 403 and "origin" in foreign.text.lower()
    own = session.get(url, headers={**upgrade, "Origin": f"http://127.0.0.1:{port}"}, timeout=60)
    assert "origin" not in own.text.lower()  # refused later, if at all, for want of a session token
