"""A `panel serve reviewer` subprocess on a free port, for browser tests and bench scripts."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

REPO_ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_until(condition, timeout: float = 60.0) -> bool:
    """Poll `condition` until it holds or `timeout` s pass; its last answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"panel serve exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"panel serve did not open port {port} within {timeout} s")


# What a server writes to its log when a request, a callback or a document change raised: Python's
# traceback (tornado's, Bokeh's and Panel's error handlers all log one).
EXCEPTION_MARK = "Traceback (most recent call last)"
# a socket closed while the server wrote to it: the browser left (a test navigated away), not a fault
BROWSER_LEFT = ("StreamClosedError", "WebSocketClosedError")


class ServedApp:
    """`live`: every app started and not yet checked to its end (tests/conftest.py fails a browser test
    whose server logged an exception while it ran)."""

    live: ClassVar[list[ServedApp]] = []

    def __init__(self, db: Path, log: Path, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None):
        self.db, self.log, self.port = db, log, free_port()
        self._checked_to = 0  # the log's characters looked at for exceptions
        env = dict(os.environ, SPECREVIEW_DB=str(db), PYTHONUNBUFFERED="1", **(env or {}))
        # every test page comes from 127.0.0.1, often many to one server on a busy machine: a budget
        # of page-building time no person would exhaust (tests/security/test_page_limits.py sets its own)
        env.setdefault("SPECREVIEW_PAGE_BURST_SECONDS", "3600")
        # the child gets its own copy of the log's file descriptor: ours can be closed once it is started
        with open(log, "w") as log_fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "panel", "serve", "reviewer", "--address", "127.0.0.1",
                 "--port", str(self.port), "--num-procs", "1", "--allow-websocket-origin", f"127.0.0.1:{self.port}", *extra_args],
                cwd=REPO_ROOT, env=env, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True)
        ServedApp.live.append(self)
        wait_for_port(self.port, self.proc)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/reviewer"

    def stop(self, sig=signal.SIGTERM) -> None:
        # `panel serve` in the background ignores SIGINT: stop it with SIGTERM (or SIGKILL).
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def new_exceptions(self) -> list[str]:
        """The exceptions the server logged since the last call, each with the lines that follow its
        traceback's first (the exception itself, at its end). An app that stopped is then forgotten."""
        text = self.log_text() if self.log.exists() else ""
        new, self._checked_to = text[self._checked_to:], len(text)
        if self.proc.poll() is not None and self in ServedApp.live:
            ServedApp.live.remove(self)
        parts = [EXCEPTION_MARK + part[:3000] for part in new.split(EXCEPTION_MARK)[1:]]
        return [p for p in parts if not any(name in p for name in BROWSER_LEFT)]


def seeded_db(folder: Path, name: str = "seeded.duckdb") -> tuple[Path, str]:
    """A database file seeded like the app's first run; returns it and the first queue item's id.
    The store is closed again: the served app's process must own the file."""
    from reviewer.services.demo import seed_demo_if_empty
    from reviewer.store import Store

    db = folder / name
    store = Store(db)
    seed_demo_if_empty(store)
    first = store.queue.queue_items()[0]["trajectory_id"]
    store.close()
    return db, first


def page_load_limit(url: str, loads: int = 3) -> float:
    """The longest another client's page load may take while a test's attack runs: 5 s (the issue's
    figure, on a quiet machine), or 3x the median of `loads` page loads now on a busy one (a stall of
    the event loop by an attack lasted 75-115 s)."""
    import statistics

    import requests

    took = []
    for _ in range(loads):
        start = time.monotonic()
        requests.get(url, timeout=300).raise_for_status()
        took.append(time.monotonic() - start)
    return max(5.0, 3 * statistics.median(took))
