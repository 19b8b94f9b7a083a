"""Findings 3, 5 and 8 in a real browser, against a served app on its own database:

3. blind review: a reviewer with no label of their own sees neither who said what nor why, nor that
   the item is disputed, in the verdict and the VI (spectrum) conflicts alike; once they label, they do;
5. a write the database refuses says NOT SAVED in the page and leaves no acknowledgement;
8. a megabyte of `[` as agent text is shown as plain text (its first 200,000 characters, and how many
   more there are), and another reviewer's page still opens.
"""
from __future__ import annotations

import re

import duckdb
import pytest
from browser import open_as, open_tab
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

from agents.trajectory import AgentInfo, Trajectory
from reviewer.store import Store

pytestmark = pytest.mark.ui
HIDDEN_REASON = "zq-balmer-jump-reason"  # words only the hidden labels carry
HIDDEN_VI = "zq-vi-comment"
# every text node of the page, shadow roots included (Bokeh and Panel draw inside them)
ALL_TEXT_JS = """() => { const out = []; const walk = (root) => { for (const el of root.querySelectorAll('*')) {
  if (el.shadowRoot) walk(el.shadowRoot); } out.push(root.textContent || ''); };
  walk(document); return out.join(' '); }"""


def review_rows(db, trajectory_id: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT reviewer, action FROM reviews WHERE trajectory_id = ? ORDER BY created_at",
                           [trajectory_id]).fetchall()


@pytest.fixture
def disputed_app(tmp_path):
    db, first = seeded_db(tmp_path)
    store = Store(db)
    try:
        row = next(r for r in store.queue.queue_items(limit=50) if r["trajectory_id"] == first)
        store.labels.add_review(first, "annika", "approve")
        store.labels.add_review(first, "bogdan", "reject", comment=HIDDEN_REASON)
        store.labels.add_vi_label(row["spectrum_id"], "annika", quality=4, spectype="STAR", z=0.0, comment=HIDDEN_VI)
        store.labels.add_vi_label(row["spectrum_id"], "bogdan", quality=4, spectype="QSO", z=1.2, comment=HIDDEN_VI)
    finally:
        store.close()
    app = ServedApp(db, tmp_path / "panel.log")
    app.first_id, app.object_id = first, row["object_id"]
    yield app
    app.stop()


def test_blind_review_hides_names_labels_and_reasons_until_my_own_label(disputed_app, page):
    open_as(page, disputed_app, "cyril", f"&trajectory={disputed_app.first_id}")
    open_tab(page, "Conflicts")
    table = page.locator(".sr-conflict-table")
    # neither the verdict nor the VI conflict is listed to him: that they are disputed is the others' labels
    expect(page.locator(".sr-conflict-detail")).to_contain_text("blind review")
    expect(table).not_to_contain_text(disputed_app.object_id)
    shown = page.evaluate(ALL_TEXT_JS)
    for secret in ("annika", "bogdan", HIDDEN_REASON, HIDDEN_VI):
        assert secret not in shown, f"blind review shows {secret!r}"
    expect(page.locator(".sr-others")).not_to_contain_text("annika")
    # once cyril saves his own verdict on the item, the verdict conflict opens to him
    open_tab(page, "Review")
    page.locator(".sr-step-view").first.click()
    page.keyboard.press("a")
    expect(page.locator(".sr-ack")).to_contain_text("approve")
    expect(page.locator(".sr-others")).to_contain_text("bogdan")
    open_tab(page, "Conflicts")
    expect(page.locator(".sr-conflict-table")).to_contain_text("bogdan", timeout=20_000)


def test_a_refused_write_says_not_saved_and_leaves_no_acknowledgement(tmp_path, page):
    db, first = seeded_db(tmp_path)
    # the server computes the Stats figures as it starts, storing the rows they derive (its first write):
    # not here, where the first label must be the next write
    app = ServedApp(db, tmp_path / "panel.log", env={"SPECREVIEW_STATS_AT_START": "0"})
    wal = db.with_name(db.name + ".wal")
    try:
        open_as(page, app, "ann", f"&trajectory={first}")
        if wal.exists():
            pytest.skip("the server wrote before the first label: this probe cannot break its next write")
        # DuckDB commits through its write-ahead log: a folder in its place makes the commit fail
        # (as a full disk or a lost mount would), whoever the server runs as
        wal.mkdir()
        page.keyboard.press("a")
        expect(page.locator(".sr-error")).to_contain_text("NOT SAVED", timeout=30_000)
        expect(page.locator(".sr-error")).to_contain_text("Nothing was stored")
        expect(page.locator(".sr-ack")).not_to_contain_text("approve")
        assert str(tmp_path) not in page.locator(".sr-error").inner_text()
        # the server's log has the refused write's traceback (the page has its kind only), and nothing else
        # (tests/conftest.py fails a test on any other exception the server logs)
        logged = app.new_exceptions()
        assert len(logged) == 1 and "in _attempt" in logged[0] and "Failed to commit" in logged[0], logged
        wal.rmdir()  # the disk is back: the same key saves, and says so
        page.keyboard.press("a")
        expect(page.locator(".sr-ack")).to_contain_text(re.compile("verdict 'approve'"), timeout=30_000)
        expect(page.locator(".sr-error")).to_be_hidden()
    finally:
        app.stop()
        if wal.is_dir():
            wal.rmdir()
    assert review_rows(db, first) == [("ann", "approve")]  # the refused attempt left no row


def test_a_megabyte_of_brackets_is_plain_text_and_stalls_nobody(tmp_path, browser):
    db, first = seeded_db(tmp_path)
    store = Store(db)
    try:
        spectrum = store.trajectories.trajectory_summary(first)["spectrum_id"]
        bomb = Trajectory(spectrum_id=spectrum, task="cv", agent=AgentInfo(name="vet", backend="openai", model="probe"))
        bomb.add("think", text="<b>head-of-bomb</b>" + "[" * 1_000_000)
        bomb.add("answer", text="<answer>\\boxed{NO}</answer>", answer={"answer": "NO"})
        bomb.outcome = {"status": "answered", "answer": "NO"}
        store.trajectories.save_trajectory(bomb)
    finally:
        store.close()
    app = ServedApp(db, tmp_path / "panel.log")
    contexts = [browser.new_context(viewport={"width": 1440, "height": 900}) for _ in range(2)]
    try:
        hostile, other = (c.new_page() for c in contexts)
        open_as(hostile, app, "ann", f"&trajectory={bomb.id}")
        plain = hostile.locator(".sr-step-view pre.sr-plain-text")
        expect(plain).to_contain_text("<b>head-of-bomb</b>[[[[", timeout=60_000)  # escaped, not parsed
        assert hostile.locator(".sr-step-view b").filter(has_text="head-of-bomb").count() == 0
        expect(hostile.locator(".sr-step-view .sr-cut")).to_contain_text("more characters of this step are not shown")
        open_as(other, app, "bo", f"&trajectory={first}")  # the server still answers another reviewer
        other.keyboard.press("j")
        expect(other.locator(".sr-step-view")).to_contain_text("Step 2")
    finally:
        for c in contexts:
            c.close()
        app.stop()
