"""Real-browser fixtures: a `panel serve reviewer` subprocess and Debian's Chromium via Playwright.

`playwright install` cannot download browsers here; we launch the system `chromium` binary. Where it
is missing the browser tests skip, unless SPECREVIEW_REQUIRE_BROWSER=1 (CI sets it) makes that an error.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = REPO_ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


class ServedApp:
    def __init__(self, db: Path, log: Path):
        self.db, self.log, self.port = db, log, free_port()
        env = dict(os.environ, SPECREVIEW_DB=str(db), PYTHONUNBUFFERED="1")
        self._log_fh = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "panel", "serve", "reviewer", "--address", "127.0.0.1",
             "--port", str(self.port), "--num-procs", "1", "--allow-websocket-origin", f"127.0.0.1:{self.port}"],
            cwd=REPO_ROOT, env=env, stdout=self._log_fh, stderr=subprocess.STDOUT, start_new_session=True)
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
        self._log_fh.close()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def served_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("served")
    app = ServedApp(tmp / "reviewer.duckdb", tmp / "panel.log")
    yield app
    app.stop()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("SPECREVIEW_REQUIRE_BROWSER") == "1":
            pytest.fail("Debian's chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda err: pg.console_errors.append(str(err)))
    yield pg
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
