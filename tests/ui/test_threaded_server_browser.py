"""Issue 45, finding 7: with the team server's `--num-threads`, Panel runs periodic callbacks on its thread
pool, and the Stats tab, prepared by one a moment after the page loads, changed its Bokeh figures outside
the document's lock: Bokeh raised "_pending_writes should be non-None ..." at every page and the tab's
figures were never drawn. Periodic callbacks now run under the lock (reviewer.components.next_tick.every);
the log-watching fixture (tests/conftest.py) fails the test on any exception the server logged."""
from __future__ import annotations

import pytest
from bokeh_probe import FIGURE_PRESENT_JS, STATS_GLYPHS_JS
from browser import open_as, open_tab
from playwright.sync_api import expect
from served_app import ServedApp, seeded_db

pytestmark = pytest.mark.ui


@pytest.fixture(scope="module")
def threaded_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("threaded")
    db, _ = seeded_db(tmp)
    app = ServedApp(db, tmp / "panel.log", extra_args=("--num-threads", "4"))
    yield app
    app.stop()


def test_the_stats_tab_is_drawn_while_labels_are_written(threaded_app, screen):
    from reviewer.components.stats_panel import CALIBRATION_TITLE

    open_as(screen, threaded_app, "ann")
    screen.wait_for_function(FIGURE_PRESENT_JS, arg=CALIBRATION_TITLE, timeout=60_000)  # prepared, hidden
    for key, action in (("a", "'approve'"), ("r", "'reject'")):  # each verdict refreshes what Stats reads
        screen.keyboard.press(key)
        # this key's own acknowledgement (the previous one also says "verdict"): the tab clicks below
        # must not race the verdict still being saved
        expect(screen.locator(".sr-ack")).to_contain_text(action, timeout=30_000)
        open_tab(screen, "Stats")
        # accuracy per task, drawn from the approval just saved (the demo holds no label before)
        screen.wait_for_function(f"(({STATS_GLYPHS_JS})()['VBar'] || 0) >= 1", timeout=60_000)
        open_tab(screen, "Review", ".sr-main-tabs")
        expect(screen.locator(".sr-step-view").first).to_be_visible(timeout=30_000)
        screen.locator(".sr-step-view").first.click()  # the keys go to the page again
