"""Issue 45, item 6: SIGTERM to `specreview serve` left `<db>.server.json` behind and its render processes
(~330 MB) orphaned. SIGTERM (`kill PID`, a service manager) and SIGINT (Ctrl-C at the terminal, which
reaches the whole process group) stop it cleanly: exit code 0, the endpoint file removed, no process of
its session left (render workers, multiprocessing's resource tracker), no traceback in its output."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import requests
from served_app import REPO_ROOT, free_port, seeded_db, wait_for_port

from reviewer.server_endpoint import endpoint_path

SPECREVIEW = [sys.executable, "-m", "reviewer.cli"]


def session_processes(sid: int) -> dict[int, str]:
    """{pid: state} of the live processes of session `sid` (read from /proc: no psutil needed).
    The server starts its own session, so its children stay in it even once orphaned."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found[int(entry)] = state
    return found


def wait_until(condition, what, limit: float):
    deadline = time.monotonic() + limit
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"not within {limit} s: {what() if callable(what) else what}")
        time.sleep(0.1)
    return value


@pytest.mark.parametrize(("sig", "to_group"), [(signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGINT, False)],
                         ids=["SIGTERM to the server", "SIGINT to its group (Ctrl-C)", "SIGINT to the server"])
def test_a_signal_stops_the_team_server_cleanly(tmp_path, sig, to_group):
    db, _ = seeded_db(tmp_path)
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([*SPECREVIEW, "serve", "--db", str(db), "--port", str(port)], cwd=REPO_ROOT,
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        wait_for_port(port, proc, 180)
        assert requests.get(f"http://127.0.0.1:{port}/reviewer", timeout=300).status_code == 200
        wait_until(lambda: endpoint_path(db).exists(), "the endpoint file", 60)
        # the page's renders run in render processes: they are there before the signal
        wait_until(lambda: len(session_processes(proc.pid)) > 1, lambda: f"a render process; log: {log.read_text()}", 120)
        (os.killpg if to_group else os.kill)(proc.pid, sig)
        try:
            code = proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            pytest.fail(f"specreview serve still runs 90 s after {sig.name}; log: {log.read_text()[-3000:]}")
        text = log.read_text()
        assert code == 0, text[-3000:]
        assert not endpoint_path(db).exists(), text[-3000:]
        wait_until(lambda: not session_processes(proc.pid),
                   lambda: f"processes of the server's session left: {session_processes(proc.pid)}", 20)
        assert "Traceback" not in text and "stopped" in text, text[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in session_processes(proc.pid):  # only what this test started (its own session)
            os.kill(pid, signal.SIGKILL)
