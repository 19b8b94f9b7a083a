"""An independent first look in a real browser (issue 47, item 2): in a first-look campaign nothing of the
agent's answer, its steps, its candidates or the pipeline's labels is in the page (the text of every shadow
root) or in its Bokeh models before the reviewer's own answer; all of it is once the answer is recorded."""
from __future__ import annotations

import re

import pytest
from browser import MODELS_JS, PAGE_TEXT_JS
from playwright.sync_api import expect
from served_app import ServedApp

from reviewer.components.metadata import format_value
from reviewer.services.campaigns import create_campaign
from reviewer.services.consensus import agent_label, describe_label
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui


def snippets(traj) -> dict[int, str]:
    """Pieces of the agent's own reasoning by step, as a page shows them (plain runs of words, no markup)."""
    out = {}
    for step in traj.steps:
        words = re.findall(r"[A-Za-z][A-Za-z0-9.,' -]{24,}", step.text or "")
        if step.kind not in ("prompt", "tool_result") and words:
            out[step.index] = words[0][:24]
    return out


@pytest.fixture(scope="module")
def looking_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("first-look")
    db = tmp / "look.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    made = create_campaign(store, "look", task="verify", reviewers=["ann"], first_look=True, limit=4)
    tid = made["items"][0]
    traj = store.trajectories.load_trajectory(tid)
    record = store.spectra.get_spectrum(traj.spectrum_id)
    own = agent_label("verify", None, None, traj.outcome)
    store.close()  # the server process must own the file
    app = ServedApp(db, tmp / "panel.log")
    # what must not be there before the first look, and must be after (the pipeline's z and subclass as the
    # metadata shows them; the agent's answer as the verdict button names it; the agent's own words)
    app.secrets = {"pipeline z": format_value("pipeline_z", record.get("pipeline_z")),
                   "agent": describe_label(own), **{f"step text {i}": s for i, s in snippets(traj).items()}}
    app.reasoning_step = min(snippets(traj))  # the first step with the agent's own words
    if len(str(record.get("pipeline_subclass") or "")) >= 3:
        app.secrets["pipeline subclass"] = str(record["pipeline_subclass"])
    app.tid = tid
    yield app
    app.stop()


def found(page, secrets: dict[str, str]) -> set[str]:
    text = page.evaluate(PAGE_TEXT_JS) + "\n".join(page.evaluate(MODELS_JS))
    return {name for name, value in secrets.items() if value in text}


def test_nothing_of_the_agent_or_the_pipeline_before_the_first_look_and_all_after(looking_app, screen):
    app = looking_app
    assert any(k.startswith("step text") for k in app.secrets) and app.secrets["pipeline z"] != "–"
    screen.goto(f"{app.url}?reviewer=ann&session=look&trajectory={app.tid}", wait_until="domcontentloaded")
    expect(screen.locator(".sr-step-view")).to_contain_text("First look", timeout=60_000)
    expect(screen.locator(".sr-first-look")).to_be_visible()
    assert found(screen, app.secrets) == set()
    screen.locator(".sr-override-type select").select_option("GALAXY")
    screen.locator(".sr-first-look button").click()
    expect(screen.locator(".sr-ack")).to_contain_text("first look GALAXY", timeout=30_000)
    expect(screen.locator(".sr-step-view")).to_contain_text("Step 1/", timeout=30_000)
    screen.locator(".sr-step-view").first.click()
    for _ in range(app.reasoning_step):  # to the agent's first step of reasoning
        screen.keyboard.press("j")
    expect(screen.locator(".sr-step-view")).to_contain_text(f"Step {app.reasoning_step + 1}/", timeout=30_000)
    # the agent's answer on the verdict button, the pipeline's labels in the metadata, the step's text
    shown = found(screen, app.secrets)
    assert {"pipeline z", "agent", f"step text {app.reasoning_step}"} <= shown, shown
