"""An LLM trajectory with two false claims, made through the real langchain-openai client against the
local scripted OpenAI-compatible server: both are flagged in the store, and in Chromium the step text
marks them, choosing one shades the window it was measured in, and the note form offers them as flags
to confirm or dismiss (a dismissal is stored as a label on that claim)."""
from __future__ import annotations

import re

import pytest
from bokeh_probe import SHADE_JS, X_RANGE_JS
from playwright.sync_api import expect
from scripted_openai_server import Reply
from served_app import ServedApp

from agents.tools.zoom import TOOL_NAME
from reviewer.cli import main
from reviewer.services.demo import DEMO_DIR, seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui
A_STAR = DEMO_DIR / "spec-55862-B6212_sp01-001.fits.gz"  # LAMOST A1IV: H-beta EW ~16 Å, H-alpha ~8 Å
FALSE_CLAIMS = ("<think>In the H-beta zoom the absorption is shallow: the H-beta equivalent width is 1.5 Å. "
                "The H-alpha absorption equivalent width is 60 Å, and the S/N is about 30.</think>"
                "<answer>\\boxed{NO}</answer>")


@pytest.fixture
def llm_trajectory(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("SPECREVIEW_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SPECREVIEW_LLM_MODEL", "scripted-vlm")
    monkeypatch.setenv("SPECREVIEW_LLM_API_KEY", "sk-test")

    def reply(body):
        if any(m["role"] == "assistant" for m in body["messages"]):
            return Reply.text(FALSE_CLAIMS)
        return Reply.tool_call(TOOL_NAME, {"wavelength_range": [4800, 4950], "label": "H-beta"})

    openai_server.responder = reply
    db = tmp_path / "claims.duckdb"
    with Store(db) as store:
        seed_demo_if_empty(store)
    assert main(["vet", "--db", str(db), "--task", "a", "--backend", "openai", "--no-progress", str(A_STAR)]) == 0
    with Store(db) as store:
        tid = store.trajectories.list_trajectories(backend="openai", model="scripted-vlm")[0]["id"]
        contradicted = [r for r in store.claims.claims_for(tid) if r["verdict"] == "contradicted"]
        flagged = store.queue.queue_items(limit=200, contradicted=True)
        kinds = [s.kind for s in store.trajectories.load_trajectory(tid).steps]
    store.close()  # the server process must own the file
    return db, tid, contradicted, flagged, kinds


def test_two_false_claims_are_flagged_in_the_store_and_the_page(llm_trajectory, browser, tmp_path):
    db, tid, contradicted, flagged, kinds = llm_trajectory
    assert sorted(r["claim_text"] for r in contradicted) == [
        "H-alpha absorption equivalent width is 60 Å", "H-beta equivalent width is 1.5 Å"]
    assert next(r for r in flagged if r["trajectory_id"] == tid)["contradicted"] == 2  # the queue filter finds it
    app = ServedApp(db, tmp_path / "panel.log")
    try:
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(f"{app.url}?reviewer=ann&trajectory={tid}", wait_until="domcontentloaded")
        page.wait_for_function(f"({X_RANGE_JS})() !== null", timeout=60_000)
        expect(page.locator(".sr-claims-summary")).to_contain_text("2 contradicted", timeout=30_000)
        step = contradicted[0]["step_idx"]
        assert kinds[step] == "think"  # the model's reasoning, where the claims are
        page.locator(".sr-step-strip button").nth(step).click()
        marks = page.locator(".sr-step-view .sr-claim-contradicted")
        expect(marks).to_have_count(2)
        expect(marks.first).to_contain_text("equivalent width")
        halpha = next(r for r in contradicted if "H-alpha" in r["claim_text"])
        page.locator(".sr-claim-list button").filter(has_text="H-alpha").click()
        window = [halpha["window_lo"], halpha["window_hi"]]
        page.wait_for_function(f"JSON.stringify(({SHADE_JS})()) === JSON.stringify({window})", timeout=20_000)
        expect(page.locator(".sr-claim-detail")).to_contain_text("measured")
        # the note form shows the step's contradicted claims as flags; the reviewer dismisses one
        page.locator(".bk-tab").filter(has_text=re.compile("^Note$")).first.click()
        flags = page.locator(".sr-claim-flag")
        expect(flags).to_have_count(2)
        expect(flags.filter(has_text=f"unsupported claim: {halpha['claim_text']}")).to_have_count(1)
        flags.filter(has_text="H-alpha").locator(".sr-claim-flag-dismiss button").click()
        expect(page.locator(".sr-ack")).to_contain_text("dismissed")
        expect(flags.filter(has_text="H-alpha")).to_contain_text("dismissed by you")
        expect(flags.filter(has_text="H-beta")).to_contain_text("not yet decided")
    finally:
        app.stop()
    with Store(db) as store:  # the stored row: the item and step on screen, the claim, the reviewer
        (row,) = store.claims.claim_flag_history(trajectory_id=tid)
    assert (row["reviewer"], row["trajectory_id"], row["step_idx"], row["decision"], row["claim_text"]) == (
        "ann", tid, step, "dismiss", halpha["claim_text"])
    assert row["claim_idx"] == halpha["claim_idx"] and row["checker_version"] == halpha["checker_version"]
