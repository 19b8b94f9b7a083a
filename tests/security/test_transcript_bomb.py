"""Issue 45, finding 3: a Transcript bomb. A 3 MB chat import (150 steps, each a 20,000-character
Markdown table) took ~115 s of the server's event loop to show in the Transcript: the per-step cap
held, nothing bounded the whole. The Transcript now shows a page of steps at a time
(reviewer.components.trajectory_player.transcript_pages), the next on demand."""
from __future__ import annotations

import pytest
from security.payloads import table_bomb_steps

from agents.trajectory import AgentInfo, Trajectory
from reviewer.components import trajectory_player
from reviewer.components.trajectory_player import TRANSCRIPT_PAGE_COST, Transcript, step_cost, transcript_pages
from reviewer.review_state import ReviewState


def bomb_trajectory(spectrum_id: str) -> Trajectory:
    traj = Trajectory(spectrum_id=spectrum_id, task="cv", agent=AgentInfo(name="chat", backend="openai", model="x"))
    for text in table_bomb_steps():
        traj.add("think", text=text)
    traj.add("answer", text="<answer>\\boxed{NO}</answer>", answer={"answer": "NO"})
    traj.outcome = {"status": "answered", "answer": "NO"}
    return traj


@pytest.fixture
def bomb(demo_store):
    spectrum = demo_store.spectra.list_spectra(limit=1)[0]["spectrum_id"]
    traj = bomb_trajectory(spectrum)
    demo_store.trajectories.save_trajectory(traj)
    return demo_store, traj


def test_the_bomb_is_three_megabytes_of_markdown_under_the_per_step_cap():
    texts = table_bomb_steps()
    assert len(texts) == 150 and sum(map(len, texts)) > 2_900_000
    assert all(len(t) <= 20_000 for t in texts)


def test_the_transcript_converts_one_bounded_page_at_a_time(bomb, monkeypatch):
    store, traj = bomb
    converted = []
    real = trajectory_player.step_html
    monkeypatch.setattr(trajectory_player, "step_html", lambda step, total: converted.append(step.index) or real(step, total))
    state = ReviewState(store, reviewer="ann")
    assert state.open_item(trajectory_id=traj.id)
    transcript = Transcript(state=state)
    transcript.build()
    first = list(converted)
    assert first == list(range(len(first))) and 1 <= len(first) < 10
    assert sum(step_cost(traj.steps[i]) for i in first) <= TRANSCRIPT_PAGE_COST
    assert transcript._more.visible and transcript._more.label.startswith(f"Show steps {len(first) + 1}-")
    while transcript._more.visible:  # every step can still be read, a page per click
        before = len(converted)
        transcript._more.clicks += 1
        assert 0 < len(converted) - before < 10
    assert converted == list(range(len(traj.steps))) and transcript.steps_shown == len(traj.steps)


def test_pages_cover_every_step_once_and_a_short_trajectory_is_one_page(demo_store):
    state = ReviewState(demo_store, reviewer="ann")
    state.open_first()
    assert len(transcript_pages(state.steps)) == 1  # an agent's own trajectory: all at once, as before
    steps = bomb_trajectory("x").steps
    pages = transcript_pages(steps)
    assert [i for page in pages for i in page] == list(range(len(steps)))
    assert all(len(page) >= 1 for page in pages)


def pages_loaded_until(url: str, done, took: list) -> None:
    """Another reviewer's page loads, a second apart, until `done` is set (at least one). Paced as a
    person opens pages: back to back, page builds alone hold the event loop (that is the page-load
    budget's part, reviewer/page_limits.py, which the test server sets wide)."""
    import time

    import requests

    while not took or not done.wait(1.0):
        start = time.monotonic()
        assert requests.get(url, timeout=300).status_code == 200
        took.append(time.monotonic() - start)


@pytest.mark.ui
def test_opening_the_bombs_transcript_leaves_another_reviewers_pages_quick(tmp_path, page):
    import threading

    from browser import open_as, open_tab
    from playwright.sync_api import expect
    from served_app import ServedApp, page_load_limit, seeded_db

    from reviewer.store import Store

    db, _ = seeded_db(tmp_path)
    with Store(db) as store:
        traj = bomb_trajectory(store.spectra.list_spectra(limit=1)[0]["spectrum_id"])
        store.trajectories.save_trajectory(traj)
    app = ServedApp(db, tmp_path / "panel.log")
    try:
        open_as(page, app, "mallory", f"&trajectory={traj.id}")
        limit = page_load_limit(f"{app.url}?reviewer=ann")
        took, opened = [], threading.Event()
        other = threading.Thread(target=pages_loaded_until, args=(f"{app.url}?reviewer=ann", opened, took))
        other.start()
        open_tab(page, "Transcript")
        expect(page.locator(".sr-transcript-more button")).to_contain_text("Show steps", timeout=120_000)
        opened.set()
        other.join(timeout=300)
        assert took and max(took) < limit, f"another reviewer's page took {max(took):.1f} s (limit {limit:.1f} s)"
        page.locator(".sr-transcript-more button").click()  # the next page comes on demand
        second = transcript_pages(traj.steps)[1]
        expect(page.locator(".sr-transcript")).to_contain_text(f"Step {second.stop}/", timeout=120_000)
    finally:
        app.stop()


def test_one_step_shows_a_bounded_text_tool_call_and_report():
    """A single imported step may carry megabytes in its tool call and report as well as its text: each
    is shown up to TEXT_SHOWN_MAX characters, with how many more there are."""
    from reviewer.components.step_view import TEXT_SHOWN_MAX, step_html

    traj = Trajectory(spectrum_id="x", task="cv", agent=AgentInfo(name="chat", backend="openai", model="x"))
    step = traj.add("tool_call", text="t" * 10**6, tool_name="zoom", tool_args={"note": "a" * 10**6})
    answer = traj.add("answer", text="NO", answer={"answer": "NO", "report": "r " * 10**6, "why": "w" * 10**6})
    assert len(step_html(step)) < 3 * TEXT_SHOWN_MAX + 10_000
    assert len(step_html(answer)) < 3 * TEXT_SHOWN_MAX + 10_000
    assert "more characters not shown" in step_html(answer)
