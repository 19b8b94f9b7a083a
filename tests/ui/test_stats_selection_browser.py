"""Issue 47, item 7, in a real browser: a box dragged over points of a Stats plot (low credibility with
judge-human disagreement) narrows the queue to those items, with a chip saying how many; the chip lifts it."""
from __future__ import annotations

import pytest
from bokeh_probe import FIGURE_GLYPHS_JS
from browser import open_as, open_side_panel, open_tab
from playwright.sync_api import expect
from served_app import ServedApp

from reviewer.components.stats_selection import JUDGE_TITLE
from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.labels import LabelService
from reviewer.store import Store

pytestmark = pytest.mark.ui

# [x0, x1, y0, y1] of a box in the judge plot's data: the LOW row (y -2), disagreement 2 and more
LOW_AND_FAR = [1.6, 5.2, -2.45, -1.55]
# where a box in data coordinates of the figure titled `title` lies on the page: [left, top, right, bottom] px
# (the figure first scrolled to the middle of the main area, which scrolls by itself: the mouse acts on what is
# in view)
BOX_ON_PAGE_JS = """([title, box]) => {
  const view = Bokeh.index.query_one(v => v.model && v.model.title && v.model.title.text === title && v.frame);
  if (!view) return null;
  const main = document.querySelector('.main'), shown = main.getBoundingClientRect();
  const figure = view.canvas.el.getBoundingClientRect();
  main.scrollTop += (figure.top + figure.height / 2) - (shown.top + shown.height / 2);
  const at = view.canvas.el.getBoundingClientRect(), frame = view.frame;
  const x = v => at.left + frame.x_scale.compute(v), y = v => at.top + frame.y_scale.compute(v);
  return [x(box[0]), y(box[3]), x(box[1]), y(box[2])];
}"""


@pytest.fixture(scope="module")
def judged_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stats-selection")
    db = tmp / "judged.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    labels = LabelService(store)
    verify = sorted(store.trajectories.list_trajectories(task="verify"), key=lambda r: r["id"])
    low = [r["id"] for r in verify if r["credibility"] == "LOW"][:4]
    high = [r["id"] for r in verify if r["credibility"] == "HIGH"][:1]
    for tid, person, judged in ((low[0], 5, 1), (low[1], 0, 4), (low[2], 3, 3), (low[3], 4, 3), (high[0], 5, 0)):
        labels.write_score("ann", tid, person, "1")
        store.labels.add_rating(tid, "offline:claims-1", judged, "1", rater_kind="llm")
    far_low = store.queue.queue_items(selected_ids=low[:2])
    store.close()  # the server process must own the file
    app = ServedApp(db, tmp / "panel.log")
    app.far_low_objects = sorted(str(r["object_id"]) for r in far_low)
    yield app
    app.stop()


def test_a_box_over_low_credibility_and_disagreement_narrows_the_queue(judged_app, screen):
    open_as(screen, judged_app, "ann")
    open_side_panel(screen)  # the queue beside the Stats tab
    rows = screen.locator(".sr-queue-table .sr-row")
    expect(rows).not_to_have_count(0)
    open_tab(screen, "Stats")
    screen.wait_for_function(f"(({FIGURE_GLYPHS_JS})({JUDGE_TITLE!r})['Scatter'] || 0) >= 1", timeout=60_000)
    box = screen.wait_for_function(f"() => ({BOX_ON_PAGE_JS})([{JUDGE_TITLE!r}, {LOW_AND_FAR}])",
                                   timeout=30_000).json_value()
    left, top, right, bottom = box
    screen.mouse.move(left, top)
    screen.mouse.down()
    screen.mouse.move((left + right) / 2, (top + bottom) / 2, steps=4)
    screen.mouse.move(right, bottom, steps=4)
    screen.mouse.up()
    chip = screen.locator(".sr-queue-selection")
    expect(chip).to_contain_text("2 items selected in Stats", timeout=30_000)
    expect(rows).to_have_count(2, timeout=30_000)
    shown = rows.all_inner_texts()  # the two far-apart LOW items, by their objects
    assert sorted(next(o for o in judged_app.far_low_objects if o in text) for text in shown) == \
        judged_app.far_low_objects
    chip.click()
    expect(chip).to_be_hidden(timeout=30_000)
    expect(rows).not_to_have_count(2, timeout=30_000)
