"""Issue 49, item 2: the upkeep a file needs before its pages (the demo on an empty file, the cross-match,
the consensus) is done once per process and file, by the server as it starts, not on every page load."""
from __future__ import annotations

from reviewer.services.upkeep import prepare_for_pages, prepare_once
from reviewer.store import Store


def test_the_first_page_of_a_process_prepares_the_file_and_later_ones_do_not(tmp_path):
    with Store(tmp_path / "fresh.duckdb") as store:
        assert store.spectra.count_spectra() == 0
        assert prepare_once(store) is True  # the demo seeded into the empty file
        seeded = store.spectra.count_spectra()
        assert seeded > 0
        assert prepare_once(store) is False


def test_a_page_after_the_servers_start_does_no_upkeep(tmp_path, wait_for_background_renders):
    """The server prepared the file as it started (reviewer/app_hooks.py); a page load then opens the
    review page without seeding, cross-matching or syncing again."""
    from layouts.app import create_app

    path = tmp_path / "served.duckdb"
    with Store(path) as store:
        prepare_for_pages(store)  # what on_server_loaded does
        trajectories = store.trajectories.count_trajectories()
        page = create_app(path)
        assert page.state.item is not None  # the review page, on the prepared file
        assert prepare_once(store) is False and store.trajectories.count_trajectories() == trajectories
        wait_for_background_renders()
