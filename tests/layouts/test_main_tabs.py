"""The main area's tabs tell the review state which one is on screen (`ReviewState.main_tab`), which
views that re-read after labels use to skip work while hidden; opening one builds and re-reads it."""
from __future__ import annotations

from layouts.app import create_app
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def test_switching_the_main_tabs_names_the_one_on_screen(tmp_path):
    path = tmp_path / "tabs.duckdb"
    with Store(path) as store:
        seed_demo_if_empty(store)
    page = create_app(path)
    tabs = page.main[0]
    state = page.state
    assert state.main_tab == "review"
    for index, name in enumerate(["transcript", "conflicts", "curation", "stats", "review"], start=1):
        tabs.active = index % 5
        assert state.main_tab == name
    tabs.active = 2
    state.open_item(trajectory_id=state.queue.page(state.reviewer, 1, 1, **state.queue_args())[0]["trajectory_id"])
    assert tabs.active == 0 and state.main_tab == "review"  # opening an item shows it
