"""The main area's tabs tell the review state which one is on screen (`ReviewState.main_tab`), which
views that re-read after labels use to skip work while hidden; opening one builds and re-reads it."""
from __future__ import annotations

import panel as pn

from layouts.app import create_app
from layouts.audit import LazyTab
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


def test_a_prepared_tab_is_built_and_put_in_once_and_opening_it_only_refreshes():
    """A served page prepares the Stats tab a moment after it loaded (layouts.audit.prepare_after_load):
    built, filled with what needs no computing and put in the hidden tab, so that opening it refreshes
    it and sends nothing else."""
    built, calls = [], []

    class Part(pn.viewable.Viewer):
        def prepare(self):
            calls.append("prepare")

        def refresh(self):
            calls.append("refresh")

        def __panel__(self):
            return pn.pane.Markdown("part")

    tab = LazyTab(lambda: built.append(1) or Part())
    tab.prepare()
    assert built == [1] and calls == ["prepare"] and len(tab.objects) == 1
    tab.open()
    tab.open()
    assert built == [1] and calls == ["prepare", "refresh", "refresh"] and len(tab.objects) == 1
    tab.prepare()  # built before: nothing
    assert built == [1] and calls == ["prepare", "refresh", "refresh"]

    opened_first = LazyTab(lambda: built.append(2) or Part())
    opened_first.open()
    opened_first.prepare()
    assert built == [1, 2] and calls[3:] == ["refresh"]
