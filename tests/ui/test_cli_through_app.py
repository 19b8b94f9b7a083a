"""While the app serves a database and a reviewer labels in the browser, `specreview ingest`, `vet`,
`session create/progress` and `export parquet` run from the command line through the app: every command
succeeds, no label is lost, and the new trajectories are in the queue."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect
from served_app import REPO_ROOT, ServedApp, seeded_db

from reviewer.server_endpoint import endpoint_path
from reviewer.store import Store

pytestmark = pytest.mark.ui

REVIEWER = "clirace"
MAX_LABELS_PER_COMMAND = 25


def wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} within {timeout} s")


class Reviewer:
    """One browser session writing ratings (digit keys) and verdicts, each acknowledged before the next."""

    def __init__(self, page):
        self.page, self.labels, self.ratings, self.verdicts = page, 0, 0, 0

    def _acked(self, n: int) -> None:
        expect(self.page.locator(".sr-ack")).to_contain_text(f"#{n} this session", timeout=60_000)

    def rate(self) -> None:
        self.page.keyboard.press(str(self.ratings % 6))
        self.ratings += 1
        self.labels += 1
        self._acked(self.labels)

    def approve(self) -> None:
        self.page.keyboard.press("a")
        self.verdicts += 1
        self.labels += 1
        expect(self.page.locator(".sr-ack")).to_contain_text("verdict 'approve'", timeout=60_000)
        self._acked(self.labels)


def run_while_labelling(reviewer: Reviewer, cwd: Path, *args: str, verdict: bool = False) -> subprocess.CompletedProcess:
    """Run `specreview ARGS` as a user would, writing labels in the browser until it exits."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "reviewer.cli", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    written = 0
    while proc.poll() is None and written < MAX_LABELS_PER_COMMAND:
        if verdict and written == 2:
            reviewer.approve()
        else:
            reviewer.rate()
        written += 1
    out, err = proc.communicate(timeout=300)
    assert written > 0
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_cli_commands_through_the_app_while_a_reviewer_labels(browser, tmp_path, shared_spectra, manifest):
    db, first = seeded_db(tmp_path)
    work = tmp_path / "work"
    (work / "spectra").mkdir(parents=True)
    picks = [r for r in manifest if "LAMOST-LRS" in r["survey"] and r["subclass"][:2] in ("A7", "K3")][:4]
    assert len(picks) == 4
    names = []
    for r in picks:
        name = r["file"].split("/")[-1]
        shutil.copy(shared_spectra / r["file"], work / "spectra" / name)
        names.append(f"spectra/{name}")  # relative to the command's folder, not the app's
    with Store(db) as store:
        before = store.queue.queue_count()
    app = ServedApp(db, tmp_path / "panel.log")
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        wait_until(endpoint_path(db).exists, 120, "the app's endpoint file")
        page = ctx.new_page()
        page.goto(f"{app.url}?reviewer={REVIEWER}&trajectory={first}", wait_until="domcontentloaded")
        expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=120_000)
        page.locator(".sr-step-view").first.click()
        reviewer = Reviewer(page)

        ingest = run_while_labelling(reviewer, work, "ingest", "--db", str(db), "--no-progress", *names)
        vet = run_while_labelling(reviewer, work, "vet", "--db", str(db), "--task", "a", "--no-progress", *names,
                                  verdict=True)
        create = run_while_labelling(reviewer, work, "session", "create", "race", "--db", str(db), "--task", "a",
                                     "--reviewers", REVIEWER)
        progress = run_while_labelling(reviewer, work, "session", "progress", "race", "--db", str(db))
        export = run_while_labelling(reviewer, work, "export", "parquet", "--db", str(db), "--out", "tables")
        for done in (ingest, vet, create, progress, export):
            assert done.returncode == 0, f"{done.args}\n{done.stdout}\n{done.stderr}\n{app.log_text()[-3000:]}"
            assert f"the app is serving {db.name}; running through it" in done.stderr
        assert "added: 4" in ingest.stdout
        assert "vetted: 4" in vet.stdout
        assert re.search(rf"^{REVIEWER}\t\d+/\d+$", progress.stdout, re.M), progress.stdout
        assert (work / "tables").is_dir() and "wrote" in export.stdout

    finally:
        ctx.close()
        app.stop()
    assert not endpoint_path(db).exists()  # removed when the app stopped
    with Store(db) as store:
        ratings = [r for r in store.labels.label_history("ratings", trajectory_id=first) if r["rater"] == REVIEWER]
        verdicts = [r for r in store.labels.label_history("reviews", trajectory_id=first) if r["reviewer"] == REVIEWER]
        assert len(ratings) == reviewer.ratings and len({r["id"] for r in ratings}) == len(ratings)
        assert len(verdicts) == reviewer.verdicts == 1 and verdicts[0]["action"] == "approve"
        vetted = store.trajectories.list_trajectories(task="a", backend="rules")
        new_ids = {t["id"] for t in vetted if t["source_path"] and Path(t["source_path"]).parent == work / "spectra"}
        assert len(new_ids) == 4
        queued = {r["trajectory_id"] for r in store.queue.queue_items(limit=10_000)}
        assert new_ids <= queued and store.queue.queue_count() == before + 4
        session = store.sessions.find_session("race")
        assert session is not None and new_ids <= set(store.sessions.session_items(session["id"]))
