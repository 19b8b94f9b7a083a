"""The review loop's traps that need a page (issue 19, finding 8), in Chromium at 1440x900: a name typed
at the prompt clears the stale "name is needed" message and goes into the address (and a cookie), so a
reload keeps it; playback stops when another item opens; `u` acts on the item on screen only and
says which verdict on which item it withdrew; Other reviewers follows a verdict saved in another
browser. Every wait is on a condition."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

pytestmark = pytest.mark.ui


@pytest.fixture(scope="module")
def loop_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loop")
    db, first = seeded_db(tmp)
    app = ServedApp(db, tmp / "panel.log")
    app.first_id = first
    yield app
    app.stop()


def step_is(page, number):
    expect(page.locator(".sr-step-view")).to_contain_text(f"Step {number}/", timeout=20_000)


def focus(page):
    page.locator(".sr-step-view").first.click()  # the page, not an input: keys act


def test_a_typed_name_playback_undo_and_others_across_items_and_a_reload(loop_app, screen, browser):
    page = screen
    page.goto(f"{loop_app.url}?trajectory={loop_app.first_id}", wait_until="domcontentloaded")
    step_is(page, 1)
    subject = page.locator(".sr-undo button")
    expect(subject).to_be_disabled()
    first_item = subject.inner_text().removeprefix("Nothing to undo on ").strip()  # "object · task"
    # no name yet: a verdict is refused, and the message goes once a name is typed
    focus(page)
    page.keyboard.press("a")
    expect(page.locator(".sr-error")).to_contain_text("A reviewer name is needed")
    page.locator(".sr-reviewer-name input").fill("tia")
    page.locator(".sr-reviewer-name input").press("Enter")
    expect(page.locator(".sr-error")).to_be_hidden()
    expect(page.locator(".sr-identity")).to_be_hidden()
    page.wait_for_function("new URLSearchParams(location.search).get('reviewer') === 'tia'", timeout=20_000)

    focus(page)
    answer = re.search(r"Approve: (.+) \(a\)", page.locator(".sr-approve button").inner_text()).group(1)
    page.keyboard.press("a")  # the acknowledgement names the label approved (the agent's answer)
    expect(page.locator(".sr-ack")).to_contain_text(f"verdict 'approve' ({answer}) on {first_item} as tia")
    expect(subject).to_be_enabled()
    expect(subject).to_contain_text(f"Undo 'approve' ({answer}) on {first_item}")

    # every player button says what it does; playing, then another item: playback stops there
    buttons = page.locator(".sr-player button")
    assert buttons.count() >= 5
    assert all(buttons.nth(i).get_attribute("title") for i in range(buttons.count()))
    assert page.locator(".sr-step-strip button").first.get_attribute("title").startswith("Step 1 of ")
    page.locator(".sr-player-play").click()
    expect(page.locator(".sr-player-play")).to_have_attribute("aria-pressed", "true")
    # playback has moved on: any later step (one shown for less than the wait's polling interval, as step 2
    # can be on a busy machine, is not missed)
    expect(page.locator(".sr-step-view")).to_contain_text(re.compile(r"Step ([2-9]|1\d)/"), timeout=20_000)
    focus(page)
    page.keyboard.press("n")
    expect(page.locator(".sr-player-play")).to_have_attribute("aria-pressed", "false")
    expect(subject).not_to_contain_text(first_item)
    step_is(page, 1)
    second_item = subject.inner_text().removeprefix("Nothing to undo on ").strip()

    # `u` on another item withdraws nothing, and says so; the first item's verdict stands
    focus(page)
    page.keyboard.press("u")
    expect(page.locator(".sr-error")).to_contain_text(f"Nothing to undo on {second_item}")

    # a reload keeps the name (address) and resumes on the item shown
    page.reload(wait_until="domcontentloaded")
    step_is(page, 1)
    expect(page.locator(".sr-identity")).to_be_hidden()
    expect(subject).to_contain_text(second_item)
    focus(page)
    page.keyboard.press("b")
    expect(page.locator(".sr-saved")).to_contain_text(f"Your verdict: approve ({answer})")

    # another reviewer's verdict, saved in another browser, shows here without a reload
    other = browser.new_context(viewport={"width": 1440, "height": 900})
    uli = other.new_page()
    uli.goto(f"{loop_app.url}?reviewer=uli&trajectory={loop_app.first_id}", wait_until="domcontentloaded")
    step_is(uli, 1)
    focus(uli)
    uli.keyboard.press("r")
    expect(uli.locator(".sr-ack")).to_contain_text("verdict 'reject'")
    expect(page.locator(".sr-others")).to_contain_text("uli", timeout=20_000)
    other.close()

    # after the reload this session saved nothing: `u` has nothing of this session to withdraw
    expect(subject).to_be_disabled()

    # the name was also kept by this browser: a page opened without ?reviewer= does not ask again
    page.goto(f"{loop_app.url}?trajectory={loop_app.first_id}", wait_until="domcontentloaded")
    step_is(page, 1)
    expect(page.locator(".sr-identity")).to_be_hidden()
    expect(page.locator(".sr-saved")).to_contain_text(f"Your verdict: approve ({answer})")
    focus(page)
    page.keyboard.press("r")
    expect(page.locator(".sr-ack")).to_contain_text(f"verdict 'reject' on {first_item} as tia")
    page.keyboard.press("u")
    expect(page.locator(".sr-ack")).to_contain_text(
        f"undo: verdict 'reject' withdrawn, back to 'approve' ({answer}) on {first_item}")
    assert page.console_errors == []
