"""The app's command endpoint (reviewer/server_endpoint.py) and the CLI's side of it (reviewer/cli/remote.py):
token checks, the endpoint file's mode and staleness, lock detection, and commands run through a process
that holds the database."""
from __future__ import annotations

import http.client
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reviewer.cli import build_parser
from reviewer.cli.common import is_locked, lock_holder
from reviewer.cli.console import Cancelled
from reviewer.cli.remote import forward, path_arguments, served_endpoint
from reviewer.server_endpoint import (
    TOKEN_HEADER,
    CommandEndpoint,
    UnsafeEndpoint,
    endpoint_path,
    read_endpoint_file,
    write_endpoint_file,
)
from reviewer.store import Store, StoreDamaged, StoreUnavailable

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")

# A process that owns the database and serves its endpoint, as the app does; it stops when its stdin closes.
HOLDER = """
import sys
from reviewer.store import Store
from reviewer.server_endpoint import CommandEndpoint
store = Store(sys.argv[1])
endpoint = CommandEndpoint(store.path).start()
print(endpoint.port, flush=True)
sys.stdin.read()
endpoint.stop()
"""


def wait_until(condition, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"{what} not met within {timeout} s")


def post(port: int, body: dict | bytes, token: str | None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers[TOKEN_HEADER] = token
    conn.request("POST", "/run", body=body if isinstance(body, bytes) else json.dumps(body).encode(), headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "served.duckdb"
    Store(path)
    yield path
    Store.close_all()


@pytest.fixture
def holder(db):
    """A subprocess holding `db` with its endpoint started (like the running app)."""
    Store.close_all()  # the holder must own the file
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=ENV, cwd=REPO_ROOT)
    port = int(proc.stdout.readline())
    yield proc, port
    if not proc.stdin.closed:
        proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()


def specreview(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reviewer.cli", *args], capture_output=True, text=True, timeout=180,
                          cwd=cwd, env=ENV)


# -- the endpoint file ----------------------------------------------------------------------------------
def test_endpoint_file_is_the_users_only_and_goes_at_stop(db):
    endpoint = CommandEndpoint(db, runner=lambda payload, console: 0).start()
    try:
        path = endpoint_path(db)
        assert path == db.with_name("served.duckdb.server.json")
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.getuid()
        info = json.loads(path.read_text())
        assert info["pid"] == os.getpid() and info["port"] == endpoint.port and info["token"] == endpoint.token
        assert len(endpoint.token) >= 32
        found = read_endpoint_file(db)
        assert found["port"] == endpoint.port and found["token"] == endpoint.token
    finally:
        endpoint.stop()
    assert not endpoint_path(db).exists()


def test_mode_0600_whatever_the_umask(db):
    old = os.umask(0)
    try:
        path = write_endpoint_file(db, 1234, "t" * 40)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in db.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_a_file_others_can_read_is_refused(db, capsys):
    path = write_endpoint_file(db, 1234, "t" * 40)
    os.chmod(path, 0o640)
    with pytest.raises(UnsafeEndpoint, match="read or written by others"):
        read_endpoint_file(db)
    os.chmod(path, 0o604)
    with pytest.raises(UnsafeEndpoint):
        read_endpoint_file(db)


def test_stale_file_with_a_dead_pid_is_ignored(db, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = write_endpoint_file(db, 1, "t" * 40)
    info = json.loads(path.read_text())
    path.write_text(json.dumps({**info, "pid": dead.pid}))
    os.chmod(path, 0o600)
    assert read_endpoint_file(db) is None
    # and the CLI runs the command here, on the (unlocked) file
    from reviewer.cli import main

    assert main(["session", "list", "--db", str(db)]) == 0
    assert "running through" not in capsys.readouterr().err


def test_a_live_pid_that_does_not_hold_the_lock_is_ignored(db):
    write_endpoint_file(db, 1, "t" * 40)  # this process's pid
    assert read_endpoint_file(db) is not None
    assert read_endpoint_file(db, lock_holder=os.getpid() + 1) is None


# -- lock detection --------------------------------------------------------------------------------------
def test_lock_detection_names_the_holder_and_is_not_damage(tmp_path, holder, db):
    proc, _ = holder
    with pytest.raises(StoreUnavailable) as locked:
        Store(db)
    assert is_locked(locked.value) and lock_holder(locked.value) == proc.pid
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreDamaged) as damaged:
        Store(broken)
    assert not is_locked(damaged.value)
    assert not is_locked(StoreUnavailable("store x is closed"))


# -- the HTTP endpoint ----------------------------------------------------------------------------------
def test_wrong_or_missing_token_is_refused_and_nothing_runs(db):
    ran = []
    with CommandEndpoint(db, runner=lambda payload, console: ran.append(payload) or 0) as endpoint:
        body = {"argv": ["session", "list"], "db": str(db)}
        assert post(endpoint.port, body, None)[0] == 403
        assert post(endpoint.port, body, "")[0] == 403
        assert post(endpoint.port, body, endpoint.token[:-1] + ("A" if endpoint.token[-1] != "A" else "B"))[0] == 403
        assert post(endpoint.port, body, endpoint.token + "x")[0] == 403
        conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
        conn.request("GET", "/run")
        assert conn.getresponse().status in (403, 405)
        conn.close()
        assert ran == []
        # malformed bodies and another database are refused even with the token
        assert post(endpoint.port, b"not json", endpoint.token)[0] == 400
        assert post(endpoint.port, {"argv": "session list"}, endpoint.token)[0] == 400
        assert post(endpoint.port, {"argv": ["session", "list"], "db": str(db.with_name("other.duckdb"))},
                    endpoint.token)[0] == 409
        assert ran == []
        status, data = post(endpoint.port, body, endpoint.token)
        assert status == 200 and json.loads(data.splitlines()[-1]) == {"exit": 0} and len(ran) == 1


def test_the_endpoint_listens_on_localhost_only(db):
    with CommandEndpoint(db, runner=lambda payload, console: 0) as endpoint:
        assert endpoint.httpd.server_address[0] == "127.0.0.1"


def test_output_and_exit_code_come_back(db, capsys):
    def runner(payload, console):
        console.say("to stdout", payload["argv"])
        console.warn("to stderr; a tty:", console.err.isatty())
        return 3

    with CommandEndpoint(db, runner=runner) as endpoint:
        found = read_endpoint_file(db)
        code = forward(found, {"argv": ["x", "y"], "db": str(db), "tty": {"stdout": False, "stderr": True}}, db.name)
    assert code == 3
    out, err = capsys.readouterr()
    assert "to stdout ['x', 'y']" in out
    assert "to stderr; a tty: True" in err and "running through it" in err
    assert endpoint.port > 0


def test_a_forwarded_command_closing_its_store_leaves_the_apps_connection_open(db, capsys):
    store = Store(db)
    with CommandEndpoint(db) as endpoint:
        found = read_endpoint_file(db)
        argv = ["session", "create", "c1", "--db", "/somewhere/else.duckdb"]  # the served database is used
        assert forward(found, {"argv": argv, "db": str(db)}, db.name) == 1  # no trajectory: refused, store closed
        assert "no trajectory matches" in capsys.readouterr().err
        assert forward(found, {"argv": ["session", "list"], "db": str(db)}, db.name) == 0
        assert store.spectra.count_spectra() == 0  # still open
        assert endpoint.port


def test_a_forwarded_command_leaves_the_apps_own_streams_alone(db, capsys):
    """The command writes to its client through its own console; sys.stdout / sys.stderr of the
    serving process (every other thread's output) are never replaced."""
    before = sys.stdout, sys.stderr
    with CommandEndpoint(db) as endpoint:
        assert forward(read_endpoint_file(db), {"argv": ["session", "progress", "nope"], "db": str(db)}, db.name) == 1
        assert sys.stdout is before[0] and sys.stderr is before[1]
        assert endpoint.port
    assert "no campaign named 'nope'" in capsys.readouterr().err  # through the client, forward() printed it


def test_a_client_that_goes_away_cancels_its_command(db):
    started, interrupted = threading.Event(), threading.Event()

    def runner(payload, console):
        started.set()
        try:
            while True:
                console.check()
                time.sleep(0.01)
        except Cancelled:
            interrupted.set()
            return 130

    with CommandEndpoint(db, runner=runner) as endpoint:
        conn = http.client.HTTPConnection("127.0.0.1", endpoint.port, timeout=10)
        conn.request("POST", "/run", body=json.dumps({"argv": ["vet"]}).encode(), headers={TOKEN_HEADER: endpoint.token})
        resp = conn.getresponse()
        assert started.wait(10)
        resp.close()  # Ctrl-C in the client
        conn.close()
        assert interrupted.wait(15)


# -- path arguments --------------------------------------------------------------------------------------
def test_path_arguments_are_made_absolute_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spectra").mkdir()
    parser = build_parser()
    args = parser.parse_args(["export", "parquet", "--out", "tables", "--session", "tables"])
    assert path_arguments(parser, args) == {"out": str(tmp_path / "tables")}
    args = parser.parse_args(["vet", "--task", "a", "spectra", "abc123", "~/x.fits"])
    assert path_arguments(parser, args) == {"items": [str(tmp_path / "spectra"), "abc123", "~/x.fits"]}
    args = parser.parse_args(["ingest", "spectra/missing.fits"])
    assert path_arguments(parser, args) == {"paths": [str(tmp_path / "spectra" / "missing.fits")]}
    args = parser.parse_args(["judge", "--model", "m", "--images", "--config", "llm.toml"])
    assert path_arguments(parser, args) == {"config": str(tmp_path / "llm.toml")}
    args = parser.parse_args(["session", "progress", "spectra"])
    assert path_arguments(parser, args) == {}


# -- the CLI against a process that holds the database ---------------------------------------------------
def test_commands_run_through_the_process_that_holds_the_database(tmp_path, holder, db, shared_spectra):
    proc, _port = holder
    work = tmp_path / "work"
    (work / "in").mkdir(parents=True)
    shutil.copyfile(shared_spectra / "lamost_sbc/101030.fits", work / "in" / "101030.fits")
    done = specreview("ingest", "--db", str(db), "--no-progress", "in/101030.fits", cwd=work)  # a relative path
    assert done.returncode == 0, done.stderr
    assert "the app is serving served.duckdb; running through it" in done.stderr
    assert "added: 1" in done.stdout
    listed = specreview("session", "list", "--db", str(db), cwd=work)
    assert listed.returncode == 0 and listed.stderr.count("running through it") == 1
    exported = specreview("export", "parquet", "--db", str(db), "--out", "tables", cwd=work)
    assert exported.returncode == 0, exported.stderr
    assert (work / "tables").is_dir() and "wrote" in exported.stdout
    missing = specreview("session", "progress", "nope", "--db", str(db), cwd=work)
    assert missing.returncode == 1 and "no campaign named 'nope'" in missing.stderr
    assert proc.poll() is None  # the holder still serves
    proc.stdin.close()
    proc.wait(timeout=30)
    assert not endpoint_path(db).exists()
    with Store(db) as store:
        assert store.spectra.count_spectra() == 1


def test_without_an_endpoint_a_locked_database_still_says_so(tmp_path, db):
    Store.close_all()
    proc = subprocess.Popen([sys.executable, "-c", "import sys, duckdb; c = duckdb.connect(sys.argv[1]); "
                             "print('ready', flush=True); sys.stdin.read()", str(db)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert proc.stdout.readline().strip() == "ready"
        done = specreview("session", "list", "--db", str(db), cwd=tmp_path)
        assert done.returncode == 1
        assert "Could not set lock" in done.stderr and "another process has served.duckdb open" in done.stderr
        assert served_endpoint(db) is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
