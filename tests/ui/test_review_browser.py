"""The review workflow in a real browser: keyboard playback, rating, a step note, approval, reload;
two reviewers reach a conflict and a third resolves it; XSS probes execute nothing."""
from __future__ import annotations

import pytest
from browser import open_as, open_tab
from playwright.sync_api import expect
from security.payloads import ALL as ALL_PAYLOADS
from security.payloads import SCRIPT_PAYLOADS
from served_app import ServedApp

from agents.trajectory import AgentInfo, Trajectory
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui

XSS_TEXT = "Looks fine.\n\n" + ALL_PAYLOADS


@pytest.fixture(scope="module")
def review_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("review")
    db = tmp / "review.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    spec = store.spectra.list_spectra(search="0853", limit=1)[0]
    evil = Trajectory(spectrum_id=spec["spectrum_id"], task="cv", agent=AgentInfo(name="vet", backend="openai", model="probe"))
    evil.add("think", text=XSS_TEXT)
    evil.add("answer", text="<answer>\\boxed{NO}</answer>", answer={"answer": "NO"})
    evil.outcome = {"status": "answered", "answer": "NO"}
    store.trajectories.save_trajectory(evil)
    first = store.queue.queue_items()[0]
    store.close()  # the server process must own the file
    app = ServedApp(db, tmp / "panel.log")
    app.evil_id, app.first_id, app.first_object = evil.id, first["trajectory_id"], first["object_id"]
    yield app
    app.stop()


def test_keyboard_playback_rating_note_approval_survive_reload(review_app, page, artifacts):
    open_as(page, review_app, "alice", f"&trajectory={review_app.first_id}")
    for _ in range(3):
        page.keyboard.press("j")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 4")
    page.keyboard.press("ArrowLeft")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 3")
    page.keyboard.press("4")
    expect(page.locator(".sr-ack")).to_contain_text("score 4")

    # A note on step 3; typing "a" inside the text area must not approve anything.
    open_tab(page, "Note", ".sr-right-tabs")
    note = page.locator(".sr-annotation-comment textarea")
    note.fill("The H-delta zoom does not show what step 5 claims")
    note.press("a")
    page.locator(".sr-annotation-flags input").nth(1).check()
    page.locator(".sr-annotation-save button").click()
    expect(page.locator(".sr-ack")).to_contain_text("note on step 3")
    open_tab(page, "Review", ".sr-right-tabs")
    expect(page.locator(".sr-saved")).not_to_contain_text("approve")

    page.locator(".sr-step-view").first.click()
    page.keyboard.press("a")
    expect(page.locator(".sr-ack")).to_contain_text("verdict 'approve'")
    page.screenshot(path=str(artifacts / "review.png"))

    page.reload()
    expect(page.locator(".sr-saved")).to_contain_text("Your verdict: approve (NO); your score: 4", timeout=60_000)
    expect(page.locator(".sr-step-view")).to_contain_text("Step 1")
    page.locator(".sr-step-view").first.click()
    page.keyboard.press("j"), page.keyboard.press("j")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 3")
    open_tab(page, "Note", ".sr-right-tabs")
    expect(page.locator(".sr-annotation-comment textarea")).to_have_value(
        "The H-delta zoom does not show what step 5 claimsa")
    assert page.console_errors == []


def test_help_overlay_on_question_mark(review_app, page):
    open_as(page, review_app, "alice")
    page.keyboard.press("?")
    expect(page.locator(".sr-help")).to_be_visible()
    expect(page.locator(".sr-help")).to_contain_text("next item in the queue")


def test_two_reviewers_conflict_and_a_merger_resolves_it(review_app, browser):
    pages = {}
    for name in ("bob", "carol", "dora"):
        ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
        pages[name] = ctx.new_page()
        open_as(pages[name], review_app, name, f"&trajectory={review_app.first_id}")
    pages["bob"].keyboard.press("a")
    expect(pages["bob"].locator(".sr-ack")).to_contain_text("approve")
    pages["carol"].keyboard.press("r")
    expect(pages["carol"].locator(".sr-ack")).to_contain_text("reject")
    expect(pages["carol"].locator(".sr-others")).to_contain_text("bob")  # saved hers, so she sees his

    dora = pages["dora"]
    dora.reload()
    expect(dora.locator(".sr-step-view")).to_contain_text("Step 1", timeout=60_000)
    # blind review: dora has no verdict here, so the queue does not mark it disputed for her, and the
    # Conflicts tab does not list it (that it is disputed, and by how many, is the others' labels)
    expect(dora.locator(".sr-queue-table .sr-row").first).not_to_contain_text("≠")
    open_tab(dora, "Conflicts")
    table = dora.locator(".sr-conflict-table")
    obj = review_app.first_object
    expect(dora.locator(".sr-conflict-detail")).to_contain_text("blind review")
    expect(table).not_to_contain_text(obj)
    expect(dora.locator(".sr-conflict-detail")).not_to_contain_text("carol")
    # the merger sees the conflict once she has saved her own verdict
    open_tab(dora, "Review")
    expect(dora.locator(".sr-step-view")).to_contain_text("Step 1")
    dora.locator(".sr-step-view").first.click()
    dora.keyboard.press("a")
    expect(dora.locator(".sr-ack")).to_contain_text("approve")
    expect(dora.locator(".sr-queue-table .sr-row").first).to_contain_text("≠")  # now hers to see
    open_tab(dora, "Conflicts")
    table.locator(".sr-row").filter(has_text=obj).first.click()
    expect(dora.locator(".sr-conflict-detail")).to_contain_text("carol")
    dora.locator(".sr-merger-comment textarea").fill("Balmer absorption is clear in the overview: approve.")
    dora.locator(".sr-resolve button").click()
    expect(dora.locator(".sr-ack")).to_contain_text("resolution")
    expect(table).not_to_contain_text(obj)
    for pg in pages.values():
        pg.context.close()


def test_xss_probes_execute_nothing(review_app, page):
    """The payload corpus as agent text, as a step note and as a verdict comment that a second
    reviewer then reads: all shown as text, none run, no remote image requested."""
    remote = []
    page.on("request", lambda r: "evil.example" in r.url and remote.append(r.url))
    open_as(page, review_app, "erin", f"&trajectory={review_app.evil_id}")
    expect(page.locator(".sr-step-view")).to_contain_text("window.__xss = 1")  # shown as text
    open_tab(page, "Note", ".sr-right-tabs")
    page.locator(".sr-annotation-comment textarea").fill(SCRIPT_PAYLOADS[1] + SCRIPT_PAYLOADS[0])
    page.locator(".sr-annotation-save button").click()
    open_tab(page, "Review", ".sr-right-tabs")
    comment = " ".join(SCRIPT_PAYLOADS[:8])
    page.locator(".sr-review-comment textarea").fill(comment)
    page.locator(".sr-step-view").first.click()
    page.keyboard.press("a")
    expect(page.locator(".sr-ack")).to_contain_text("approve")
    # a second reviewer reads erin's verdict and its comment once they have saved theirs
    page.goto(f"{review_app.url}?reviewer=fred&trajectory={review_app.evil_id}")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=60_000)
    page.locator(".sr-step-view").first.click()
    page.keyboard.press("r")
    expect(page.locator(".sr-others")).to_contain_text("erin")
    expect(page.locator(".sr-others")).to_contain_text("<script>window.__xss = 1</script>")  # the payload arrived, as text
    assert page.evaluate("window.__xss") is None
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator(".sr-step-view img[src='x'], .sr-others img").count() == 0
    assert remote == []
