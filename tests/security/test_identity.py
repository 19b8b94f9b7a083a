"""Finding 1: under a login, identity comes from the signed login cookie only. The client-set
`is_guest` cookie, `?reviewer=` and page events cannot choose whose name a label is saved under."""
from __future__ import annotations

import json
import re

import panel as pn
import pytest
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db
from tornado.web import create_signed_value

from layouts.identity import authenticated_user, session_identity
from reviewer.store import Store

SECRET = "s3cret-" + "x" * 40
FORGE_NAMES_JS = """() => { let n = 0; for (const doc of Bokeh.documents) for (const m of doc.all_models) {
  if (m.type.endsWith('TextInput')) { m.value = 'ann'; m.value_input = 'ann'; n++; } }
  return n; }"""


def signed(user: str, secret: str = SECRET) -> str:
    return create_signed_value(secret, "user", user).decode()


def test_only_a_cookie_signed_with_the_servers_secret_names_the_user():
    assert authenticated_user({"user": signed("carl")}, SECRET) == "carl"
    assert authenticated_user({"user": signed("ann", "another-secret-" + "y" * 30)}, SECRET) is None
    assert authenticated_user({"user": "ann"}, SECRET) is None  # unsigned
    assert authenticated_user({"is_guest": "1"}, SECRET) is None
    assert authenticated_user({"user": signed("carl")}, None) is None


@pytest.fixture
def basic_auth(monkeypatch):
    monkeypatch.setattr(pn.config, "basic_auth", {"carl": "pw-carl", "ann": "pw-ann"})
    monkeypatch.setattr(pn.config, "cookie_secret", SECRET)


def test_a_login_is_required_and_never_replaced_by_the_url(basic_auth, monkeypatch):
    monkeypatch.setattr(type(pn.state), "cookies", property(lambda self: {"is_guest": "1"}))
    who = session_identity("ann")
    assert who.refused and who.reviewer == "" and "login" in who.problem
    monkeypatch.setattr(type(pn.state), "cookies", property(lambda self: {"is_guest": "1", "user": signed("carl")}))
    who = session_identity("ann")
    assert (who.reviewer, who.login, who.refused) == ("carl", True, False)


def test_without_auth_the_url_names_the_reviewer(monkeypatch):
    monkeypatch.setattr(pn.config, "basic_auth", None)
    monkeypatch.setattr(pn.config, "oauth_provider", None)
    assert session_identity("ann").reviewer == "ann" and not session_identity("ann").login


@pytest.mark.ui
def test_the_guest_cookie_trick_saves_nothing_as_another_reviewer(browser, tmp_path):
    db, first = seeded_db(tmp_path)
    creds = tmp_path / "credentials.json"
    creds.write_text(json.dumps({"carl": "pw-carl", "ann": "pw-ann"}))
    app = ServedApp(db, tmp_path / "panel.log", ("--basic-auth", str(creds), "--cookie-secret", SECRET))
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{app.port}/login", wait_until="domcontentloaded")
        page.fill("input[name=username]", "carl")
        page.fill("input[name=password]", "pw-carl")
        page.click("button[type=submit]")
        page.wait_for_url("**/*")
        context.add_cookies([{"name": "is_guest", "value": "1", "url": f"http://127.0.0.1:{app.port}/"}])
        page.goto(f"{app.url}?reviewer=ann&trajectory={first}", wait_until="domcontentloaded")
        page.locator(".sr-step-view").first.wait_for(timeout=60_000)
        # under a login there is no name field; forged Bokeh events that fill every text input with
        # another name (what a scripted client could send over the websocket) change nothing
        assert page.locator(".sr-reviewer-name").count() == 0
        forged = page.evaluate(FORGE_NAMES_JS)
        assert forged > 0
        page.locator(".sr-step-view").first.click()
        page.keyboard.press("r")
        expect(page.locator(".sr-ack")).to_contain_text(re.compile(r"verdict 'reject' on \S+ · \w+ as carl"),
                                                        timeout=60_000)
    finally:
        context.close()
        app.stop()
    store = Store(db)
    try:
        rows = store.labels.reviews_for(first)
        assert [(r["reviewer"], r["action"]) for r in rows] == [("carl", "reject")]
    finally:
        store.close()


@pytest.mark.ui
def test_a_session_without_a_login_gets_no_review_page(browser, tmp_path):
    db, _ = seeded_db(tmp_path)
    creds = tmp_path / "credentials.json"
    creds.write_text(json.dumps({"carl": "pw-carl"}))
    app = ServedApp(db, tmp_path / "panel.log", ("--basic-auth", str(creds), "--cookie-secret", SECRET))
    context = browser.new_context()
    try:
        context.add_cookies([{"name": "is_guest", "value": "1", "url": f"http://127.0.0.1:{app.port}/"}])
        page = context.new_page()
        page.goto(f"{app.url}?reviewer=ann", wait_until="domcontentloaded")
        # Panel's own check may send the guest to the login form; if it lets the page through, ours refuses
        page.wait_for_function("() => document.querySelector('input[name=password]') !== null || "
                               "document.body.innerText.includes('requires a login') || "
                               "[...document.querySelectorAll('*')].some(e => e.shadowRoot && "
                               "e.shadowRoot.textContent.includes('requires a login'))", timeout=60_000)
        assert page.locator(".sr-step-view").count() == 0
    finally:
        context.close()
        app.stop()


def test_a_login_that_ends_while_its_page_is_open_saves_nothing_more(demo_store):
    """Issue 45, finding 5: the login is read when the page is built; one that expires or is logged out
    while the page stays open must not go on saving (the page's state asks at each write)."""
    from reviewer.review_state import ReviewState

    holds = [True]
    state = ReviewState(demo_store, login_holds=lambda: holds[0], reviewer="carl", login=True)
    state.open_first()
    tid = state.item.trajectory_id
    assert state.writer.save("verdict", action="approve") is not None
    holds[0] = False  # expired, or ended by /logout
    assert state.writer.save("verdict", action="reject") is None
    assert "Your login has ended" in state.error
    assert demo_store.labels.latest_review(tid, "carl")["action"] == "approve"
