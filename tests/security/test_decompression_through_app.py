"""Finding 7 as it was found: a gzip bomb ingested through the running app (`specreview ingest` while
the app holds the database runs inside the app's process). The command names the file and its limit,
stores nothing for it, the good file beside it is read (known already, by its hash), the app's peak memory barely moves, and the
app keeps serving pages."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
import requests
from security.test_decompression_limit import DEMO, gzip_bomb
from served_app import REPO_ROOT, ServedApp, seeded_db

from reviewer.server_endpoint import endpoint_path
from reviewer.store import Store

pytestmark = pytest.mark.ui


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_bomb_ingested_through_the_app_is_refused_and_the_app_stays_small(tmp_path, monkeypatch):
    if not os.path.exists("/proc/self/status"):
        pytest.skip("peak memory is read from /proc")
    monkeypatch.setenv("SPECREVIEW_MAX_FILE_BYTES", str(64 * 2**20))  # the app's limit
    db, _ = seeded_db(tmp_path)
    folder = tmp_path / "in"
    folder.mkdir()
    gzip_bomb(folder / "bomb.fits.gz", 2 * 2**30)  # 2 GB of zeros in ~2 MB
    good = DEMO / "spec-55859-F5902_sp07-209.fits.gz"
    shutil.copy(good, folder / "again.fits.gz")  # a real gzipped spectrum beside it (the demo has it already)
    app = ServedApp(db, tmp_path / "panel.log")
    try:
        deadline = time.monotonic() + 120
        while not endpoint_path(db).exists():
            assert time.monotonic() < deadline, "the app's endpoint did not start"
            time.sleep(0.1)
        assert requests.get(app.url, timeout=120).status_code == 200
        before_kb = peak_rss_kb(app.proc.pid)
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        done = subprocess.run([sys.executable, "-m", "reviewer.cli", "ingest", "--db", str(db), "--no-progress",
                               str(folder)], env=env, text=True, capture_output=True, timeout=600)
        assert f"the app is serving {db.name}; running through it" in done.stderr
        said = done.stdout + done.stderr
        assert "bomb.fits.gz" in said and "more than" in said, said
        assert "already present: 1" in said and "failed: 1" in said
        grown_mb = (peak_rss_kb(app.proc.pid) - before_kb) / 1024
        assert grown_mb < 400, f"the app's peak memory grew by {grown_mb:.0f} MB"
        assert requests.get(app.url, timeout=120).status_code == 200 and app.proc.poll() is None
    finally:
        app.stop()
    with Store(db) as store:
        names = {r["file_name"] for r in store.spectra.list_spectra(limit=100)}
    assert "bomb.fits.gz" not in names
