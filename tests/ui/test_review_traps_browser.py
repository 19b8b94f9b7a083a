"""The rest of the review loop's traps (issue 19, finding 8) as a reviewer meets them in Chromium at
1440x900: the verdict buttons say what they save and the form clears after each save (an undone
override's comment is not stored with the next approval); the merge form starts from the disputed
labels, says who may resolve and waits for a comment; a curation action that cannot count yet is
refused with the reason, and the form names the item and step it revises; "Compare with" offers
trajectories of the same task only. Every wait is on a condition."""
from __future__ import annotations

import re

import pytest
from browser import open_as, open_tab
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

from agents.trajectory import AgentInfo
from reviewer.store import Store

pytestmark = pytest.mark.ui
GALAXY = "39633345008634465"  # the DESI emission-line galaxy of the demo, z = 0.3687


@pytest.fixture(scope="module")
def traps_app(tmp_path_factory):
    """The demo, a verdict conflict on the galaxy's verify item (an approval against an override to
    QSO z=0.37), and a second wd trajectory on one spectrum (another model's) to compare with."""
    tmp = tmp_path_factory.mktemp("traps")
    db, _ = seeded_db(tmp)
    with Store(db) as store:
        rows = store.queue.queue_items(limit=200)
        galaxy = next(r for r in rows if r["task"] == "verify" and r["object_id"] == GALAXY)
        store.labels.add_review(galaxy["trajectory_id"], "ann", "approve")
        store.labels.add_review(galaxy["trajectory_id"], "bo", "override", {"type": "QSO", "z": 0.37})
        wd = next(r for r in rows if r["task"] == "wd" and r["object_id"] != GALAXY)
        original = store.trajectories.load_trajectory(wd["trajectory_id"])
        twin = original.model_copy(deep=True, update={"id": "twin-wd-" + original.id[:8],
                                                      "agent": AgentInfo(name="vet", backend="openai", model="m2")})
        store.trajectories.save_trajectory(twin)
        no_answer = next(r for r in rows if r["task"] == "a" and r["answer"] == "NO")
    app = ServedApp(db, tmp / "panel.log")
    app.galaxy, app.wd, app.twin, app.no_answer = galaxy, wd, twin, no_answer
    yield app
    app.stop()


def subject_on_screen(page) -> str:
    """"object · task" of the item on screen, as the undo button names it."""
    text = page.locator(".sr-undo button").inner_text()
    return re.sub(r"^(Nothing to undo on|Undo '\w+'(?: \(\w+\)| to \w+)? on) ", "", text).strip()


def test_the_buttons_say_what_they_save_and_the_form_clears_after_each_save(traps_app, screen, browser):
    open_as(screen, traps_app, "ari", f"&trajectory={traps_app.no_answer['trajectory_id']}")
    expect(screen.locator(".sr-override button")).to_have_text("Override → YES (o)")  # the other answer
    expect(screen.locator(".sr-reject button")).to_contain_text("no label")
    for css, says in ((".sr-approve", "Save the verdict 'approve'"), (".sr-override", "Save the verdict 'override'"),
                      (".sr-reject", "no corrected label is saved")):
        screen.locator(f"{css} button").hover()  # each button's title, as Bokeh shows it on hover
        tip = screen.get_by_text(says).first
        expect(tip).to_be_visible()
        screen.mouse.move(700, 880)  # away: the tooltip goes (it would cover the next button)
        expect(tip).to_be_hidden()
    item = subject_on_screen(screen)

    comment = screen.locator(".sr-review-comment textarea")
    comment.fill("first thought: a CV")
    screen.locator(".sr-override button").click()
    expect(screen.locator(".sr-ack")).to_contain_text(f"verdict 'override' to YES on {item} as ari")
    expect(comment).to_have_value("")  # the form clears after the save
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("u")
    expect(screen.locator(".sr-ack")).to_contain_text(f"undo: verdict 'override' to YES withdrawn on {item}")
    screen.keyboard.press("a")
    expect(screen.locator(".sr-ack")).to_contain_text(f"verdict 'approve' (NO) on {item} as ari")

    # another reviewer, once she has saved hers, reads ari's approval: without the withdrawn comment
    other = browser.new_context(viewport={"width": 1440, "height": 900})
    bea = other.new_page()
    open_as(bea, traps_app, "bea", f"&trajectory={traps_app.no_answer['trajectory_id']}")
    bea.keyboard.press("r")
    expect(bea.locator(".sr-others")).to_contain_text("ari")
    expect(bea.locator(".sr-others")).to_contain_text("ari: approve (NO)")  # the label approved
    expect(bea.locator(".sr-others")).not_to_contain_text("first thought")
    other.close()


def test_the_merge_form_starts_from_the_disputed_labels_and_waits_for_a_comment(traps_app, screen):
    open_as(screen, traps_app, "mia", f"&trajectory={traps_app.galaxy['trajectory_id']}")
    screen.keyboard.press("a")  # her own verdict first: blind review lifts for her
    expect(screen.locator(".sr-ack")).to_contain_text("verdict 'approve'")
    open_tab(screen, "Conflicts")
    screen.locator(".sr-conflict-table .sr-row").filter(has_text=GALAXY).filter(has_text="verify").first.click()
    expect(screen.locator(".sr-resolve-who")).to_contain_text("may resolve")
    start = screen.locator(".sr-resolve-start select")
    expect(start.locator("option").filter(has_text="override").filter(has_text="QSO")).to_have_count(1)
    options = start.locator("option").all_inner_texts()
    assert any("override" in o and "QSO" in o for o in options), options
    start.select_option(index=next(i for i, o in enumerate(options) if "override" in o))
    expect(screen.locator(".sr-resolve-type select")).to_have_value("QSO")  # not "STAR z=0.00000"
    assert float(screen.locator(".sr-resolve-z input").input_value()) == pytest.approx(0.37)
    resolve = screen.locator(".sr-resolve button")
    expect(resolve).to_be_disabled()  # no merger's comment yet
    screen.locator(".sr-merger-comment textarea").press_sequentially("Broad Mg II at 3830 A")
    expect(resolve).to_be_enabled()


def test_curation_names_its_step_and_refuses_what_cannot_count_yet(traps_app, screen):
    open_as(screen, traps_app, "cai", f"&trajectory={traps_app.wd['trajectory_id']}")
    item = subject_on_screen(screen)
    screen.keyboard.press("j")
    expect(screen.locator(".sr-step-view")).to_contain_text("Step 2/")
    open_tab(screen, "Curation")
    expect(screen.locator(".sr-revise-target")).to_contain_text(re.compile(rf"Revise step 2 of \d+ .*{re.escape(item)}"))
    screen.locator(".sr-curate-audit-approve button").click()
    expect(screen.locator(".sr-error")).to_contain_text("draft")  # an unrevised draft: nothing to audit yet
    expect(screen.locator(".sr-ack")).not_to_contain_text("audit")


def test_compare_with_offers_the_same_task_only(traps_app, screen):
    open_as(screen, traps_app, "quy", f"&trajectory={traps_app.wd['trajectory_id']}")
    open_tab(screen, "Note", ".sr-right-tabs")
    options = screen.locator(".sr-preference-other select option")
    expect(options).to_have_count(1)  # the twin; the four other tasks on this spectrum are not offered
    assert options.first.inner_text().startswith("wd · vet/openai / m2")
