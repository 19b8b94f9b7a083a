"""The review cockpit in Chromium at 1440x900: each way to open an item shows and labels the same
item, the plot tells the truth in both frames, labels say what the reviewer meant, one screen holds
what a review needs, and the Stats plots draw. Every wait is on a condition."""
from __future__ import annotations

import re
import time

import pytest
from bokeh_probe import (
    AXIS_LABELS_JS,
    FIGURE_GLYPHS_JS,
    FIGURE_PRESENT_JS,
    FIGURE_ROWS_JS,
    LABEL_X_JS,
    LEGENDS_OVER_DATA_JS,
    PEAK_NEAR_JS,
    SHADE_JS,
    STATS_GLYPHS_JS,
    X_RANGE_JS,
)
from browser import open_side_panel, open_tab, wait_for_fitted_plot
from playwright.sync_api import expect
from served_app import ServedApp

from agents.trajectory import Trajectory
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui
GALAXY = "39633345008634465"  # the DESI emission-line galaxy of the demo, z = 0.3687
OPEN_CAMPAIGN = "cockpit-open"  # the Stats tests' page: an open (not blind) campaign of the team's labels


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cockpit")
    db = tmp / "cockpit.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    queue = store.queue.queue_items(limit=100)
    trajectories = {r["trajectory_id"]: Trajectory.from_json(store.trajectories.load_trajectory(r["trajectory_id"]).to_json())
                    for r in queue}
    galaxy_verify = next(r for r in queue if r["task"] == "verify" and r["object_id"] == GALAXY)
    store.labels.add_review(galaxy_verify["trajectory_id"], "bo", "override", {"type": "QSO", "z": 0.37})
    # the team's labels the Stats tab is read from, given in an open campaign (`specreview session --open`):
    # its page shows everyone's figures; under blind review a reviewer sees only those of their own labels
    # (tests/security/test_blind_walk.py)
    settled = [r for r in queue if r["object_id"] != GALAXY][:8]
    settled += [r for r in queue if r["task"] == "verify" and r["object_id"] != GALAXY][:4]
    sid = store.sessions.create_session(OPEN_CAMPAIGN, "verdicts",
                                        [r["trajectory_id"] for r in [*queue[:5], *settled]], blind=False)
    for who, scores in (("ann", [4, 3, 5, 2, 4]), ("bo", [3, 3, 4, 1, 5])):
        for row, score in zip(queue, scores, strict=False):
            store.labels.add_rating(row["trajectory_id"], who, score, "1", session_id=sid)
    # settled human labels for the accuracy, kappa and coverage plots: vet items and verify items
    for i, row in enumerate(settled):
        for who in ("cal", "dov"):
            action = "reject" if (i == 3 and who == "dov") else "approve"
            store.labels.add_review(row["trajectory_id"], who, action, session_id=sid)
    store.close()
    app = ServedApp(db, tmp / "panel.log")
    app.queue, app.trajectories, app.galaxy_verify = queue, trajectories, galaxy_verify["trajectory_id"]
    yield app
    app.stop()


def open_as(page, app, reviewer, extra=""):
    page.goto(f"{app.url}?reviewer={reviewer}{extra}", wait_until="domcontentloaded")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=60_000)
    page.wait_for_function(f"({X_RANGE_JS})() !== null", timeout=60_000)
    wait_for_fitted_plot(page)



def no_server_errors(app):
    """No exception raised in the project's code and no document-lock error. (Tornado logs a closed
    socket when a test navigates away while the server writes: that is the browser leaving.)"""
    log = app.log_text()
    ours = re.findall(r'File "[^"]*/(?:reviewer|layouts|agents)/[^"]*"', log)
    assert not ours and "RuntimeError" not in log and "_pending_writes" not in log, log[-3000:]


def shade_is(page, window):
    expected = "null" if window is None else f"[{window[0]}, {window[1]}]"
    page.wait_for_function(f"JSON.stringify(({SHADE_JS})()) === JSON.stringify({expected})", timeout=20_000)


def test_queue_and_step_clicks_show_and_label_the_same_item(cockpit, screen):
    open_as(screen, cockpit, "ann")
    open_side_panel(screen)
    rows = screen.locator(".sr-queue-table .sr-row")
    target = next(r for r in cockpit.queue[:12] if r["object_id"] != cockpit.queue[0]["object_id"])
    position = [r["trajectory_id"] for r in cockpit.queue].index(target["trajectory_id"])
    rows.nth(position).click()
    expect(screen.locator(".sr-metadata")).to_contain_text(str(target["object_id"]))
    traj = cockpit.trajectories[target["trajectory_id"]]
    shade_is(screen, traj.zoom_at(0))
    zoomed = next(s.index for s in traj.steps if traj.zoom_at(s.index) is not None)
    screen.locator(".sr-step-strip button").nth(zoomed).click()
    expect(screen.locator(".sr-step-view")).to_contain_text(f"Step {zoomed + 1}/")
    shade_is(screen, traj.zoom_at(zoomed))
    # bo's verdict on the galaxy must never show on another object
    expect(screen.locator(".sr-others")).not_to_contain_text("bo")
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("a")
    expect(screen.locator(".sr-ack")).to_contain_text("approve")
    # the queue's columns follow the acknowledgement: "Me" on the item's row
    expect(screen.locator(".sr-queue-table .sr-selected [data-field=mine]")).to_have_text("✓")
    # now the item's own other reviewers show (if any), and still nothing from another object
    expect(screen.locator(".sr-others")).to_contain_text(re.compile("No other reviewer|cal"))
    expect(screen.locator(".sr-others")).not_to_contain_text("bo:")
    store_row = cockpit.trajectories[target["trajectory_id"]]
    assert store_row.spectrum_id == target["spectrum_id"]
    no_server_errors(cockpit)
    assert screen.console_errors == []


def test_choosing_a_spectrum_moves_the_review_form_with_it(cockpit, screen):
    open_as(screen, cockpit, "cy")
    open_side_panel(screen)
    open_tab(screen, "Spectra")
    screen.locator(".sr-search input").fill("0853")
    rows = screen.locator(".sr-spectra-table .sr-row")
    expect(rows).to_have_count(1)
    rows.first.click()
    expect(screen.locator(".sr-metadata")).to_contain_text("0853-52374-0240")
    expect(screen.locator(".sr-trajectory-head")).to_be_visible()
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("r")
    expect(screen.locator(".sr-ack")).to_contain_text("reject")
    # reload: the URL followed the item, and the saved verdict is on the spectrum that was shown
    screen.reload(wait_until="domcontentloaded")
    expect(screen.locator(".sr-metadata")).to_contain_text("0853-52374-0240", timeout=60_000)
    expect(screen.locator(".sr-saved")).to_contain_text("Your verdict: reject")
    no_server_errors(cockpit)


def test_the_curation_board_shows_one_page_and_a_row_opens_its_item(cockpit, screen):
    open_as(screen, cockpit, "cur")
    open_tab(screen, "Curation")
    rows = screen.locator(".sr-board-table .sr-row")
    total = len(cockpit.queue)
    expect(screen.locator(".sr-board-where")).to_contain_text(f"1–15 of {total}")
    expect(rows).to_have_count(15)  # one page, not the whole board
    screen.locator(".sr-board-next-page button").click()
    expect(screen.locator(".sr-board-where")).to_contain_text(f"16–30 of {total}")
    expect(rows.first).to_contain_text("draft")
    obj = rows.nth(2).locator("[data-field=object]").inner_text().split("·")[0].strip()
    rows.nth(2).click()
    expect(screen.locator(".sr-metadata")).to_contain_text(obj)  # opened, and the Review tab shows it
    no_server_errors(cockpit)


def test_identical_override_refused_no_stale_label_and_undo(cockpit, screen):
    open_as(screen, cockpit, "dee")
    # a yes/no override starts at the other answer; chosen back to the agent's own, `o` is refused
    expect(screen.locator(".sr-approve button")).to_contain_text(re.compile("Approve: (YES|NO)"))
    agent = re.search("Approve: (YES|NO)", screen.locator(".sr-approve button").inner_text()).group(1)
    expect(screen.locator(".sr-override button")).to_contain_text("YES" if agent == "NO" else "NO")
    screen.locator(".sr-override-answer button").filter(has_text=agent).click()
    expect(screen.locator(".sr-override button")).to_contain_text(agent)
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("o")  # the draft is the agent's own answer: refused, nothing saved
    expect(screen.locator(".sr-error")).to_contain_text("must differ from the agent's answer")
    expect(screen.locator(".sr-saved")).not_to_contain_text("Your verdict")
    # a verify galaxy: choose QSO, then open a verify star: the override proposes nothing (the z tab's
    # candidate is asked for), neither the galaxy's choice nor the star's own answer
    galaxy = cockpit.galaxy_verify
    star = next(r["trajectory_id"] for r in cockpit.queue if r["task"] == "verify" and r["answer"] == "STAR")
    open_as(screen, cockpit, "dee", f"&trajectory={galaxy}")
    screen.locator(".sr-override-type select").select_option("QSO")
    expect(screen.locator(".sr-override button")).to_contain_text("QSO")
    open_as(screen, cockpit, "dee", f"&trajectory={star}")
    expect(screen.locator(".sr-override button")).to_have_text("Override → choose z in the z tab (o)")
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("o")
    expect(screen.locator(".sr-error")).to_contain_text("z tab")
    screen.keyboard.press("a")
    expect(screen.locator(".sr-saved")).to_contain_text("Your verdict: approve (STAR")
    screen.keyboard.press("u")
    expect(screen.locator(".sr-ack")).to_contain_text("undo: verdict 'approve' (STAR")
    expect(screen.locator(".sr-saved")).not_to_contain_text("Your verdict")


def test_rest_frame_keeps_halpha_on_its_line(cockpit, screen):
    open_as(screen, cockpit, "eli", f"&trajectory={cockpit.galaxy_verify}")
    open_tab(screen, "View")
    screen.locator(".sr-preset-halpha button").click()
    z = 0.368744
    screen.wait_for_function(f"Math.abs(({X_RANGE_JS})()[0] - {6400 * (1 + z)}) < 5", timeout=20_000)
    for rest in (False, True):
        if rest:
            screen.locator(".sr-frame button").click()
            screen.wait_for_function(f"Math.abs(({X_RANGE_JS})()[0] - 6400) < 5", timeout=20_000)
        screen.wait_for_function(f"({LABEL_X_JS})('H-alpha') !== null", timeout=20_000)
        marker = screen.evaluate(LABEL_X_JS, "H-alpha")
        assert marker == pytest.approx(6564.6 * (1 if rest else 1 + z), abs=2)
        peak = screen.evaluate(PEAK_NEAR_JS, [marker, 40])
        assert peak == pytest.approx(marker, abs=8 / (1 + z) if rest else 8)  # the emission line is there
        labels = screen.evaluate(AXIS_LABELS_JS)
        assert any(("Rest-frame" in text) == rest and "wavelength" in text.lower() for text in labels)


def test_one_screen_holds_what_a_review_needs(cockpit, screen, artifacts):
    traj = cockpit.trajectories[cockpit.galaxy_verify]
    badge_step = next(s.index for s in traj.steps if s.verdict is not None)
    open_as(screen, cockpit, "fee", f"&trajectory={cockpit.galaxy_verify}")
    screen.locator(".sr-step-strip button").nth(badge_step).click()
    expect(screen.locator(".sr-step-view .sr-verdict")).to_be_visible()
    # the step's text starts on this screen and reads on under it (the main column scrolls); the rubric's
    # scores are on it, the rubric's table (six rows of text) reads on under them in the right column
    checks = {"plot": ".sr-plot", "player": ".sr-player", "render": ".sr-step-image", "approve": ".sr-approve",
              "override": ".sr-override", "reject": ".sr-reject", "rubric scores": ".sr-score"}
    assert screen.locator(".sr-step-view").first.bounding_box()["y"] < 900
    screen.screenshot(path=str(artifacts / "cockpit-1440x900.png"))
    # one layout pass per item switch (reviewer/components/layout_batch.py): a BokehJS upgrade that
    # renames what it wraps would silently make every switch slow again
    assert screen.evaluate("() => window.__srLayoutBatch?.installed === true")
    for what, selector in checks.items():
        box = screen.locator(selector).first.bounding_box()
        assert box is not None, what
        assert box["x"] >= 0 and box["y"] >= 0, (what, box)
        assert box["x"] + box["width"] <= 1440 and box["y"] + box["height"] <= 900, (what, box)


AFTER_PAINT_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def test_the_review_column_keeps_its_layout_from_item_to_item(cockpit, screen):
    """Items differ in step count (15 to 67) and in their summary's length; the plot, the player and
    the step view stay where they are. A column that grows or shrinks moves the plot under the
    reviewer's eye and makes BokehJS lay out and repaint the whole column on every `n`."""
    walk = cockpit.queue[:5]
    counts = [len(cockpit.trajectories[r["trajectory_id"]].steps) for r in walk]
    assert len(set(counts)) >= 3 and counts[-1] > 40, counts  # short and long trajectories, a long one last
    open_as(screen, cockpit, "ida", f"&trajectory={cockpit.queue[0]['trajectory_id']}")
    screen.locator(".sr-step-view").first.click()
    selectors = [".sr-plot", ".sr-player", ".sr-step-strip", ".sr-step-view", ".sr-review-main"]

    def boxes():  # where each starts and its width; the step text's height is its text's (the column scrolls)
        return [(s, {k: v for k, v in screen.locator(s).first.bounding_box().items()
                     if k != "height" or s not in (".sr-step-view", ".sr-review-main")}) for s in selectors]

    first = boxes()
    # nor from step to step: steps with claims (their buttons) and without
    with_claims = 0
    for index in range(1, counts[0]):
        screen.keyboard.press("j")
        expect(screen.locator(".sr-step-view")).to_contain_text(f"Step {index + 1}/{counts[0]}")
        screen.evaluate(AFTER_PAINT_JS)
        with_claims += screen.locator(".sr-claim-list button").count() > 0
        assert boxes() == first, index
    assert with_claims > 0  # the walk crossed steps with claims
    screen.keyboard.press("k")  # back to a step of the first item before `n`
    for row in walk[1:]:
        screen.keyboard.press("n")
        steps = len(cockpit.trajectories[row["trajectory_id"]].steps)
        expect(screen.locator(".sr-step-view")).to_contain_text(f"Step 1/{steps}")
        expect(screen.locator(".sr-step-strip button")).to_have_count(steps)
        screen.evaluate(AFTER_PAINT_JS)
        assert boxes() == first, (row["trajectory_id"], steps)
    # a long trajectory's strip scrolls within itself: its last step's button comes into view
    for _ in range(steps - 1):
        screen.keyboard.press("j")
    expect(screen.locator(".sr-step-view")).to_contain_text(f"Step {steps}/{steps}")
    last = screen.locator(".sr-step-strip button.sr-current")
    expect(last).to_have_text(re.compile(rf"^{steps}"))
    expect(last).to_be_in_viewport()
    no_server_errors(cockpit)


def test_the_queue_turns_its_page_to_follow_n_and_b(cockpit, screen):
    """`n` from the last row of a page: the item shows, then the queue turns to the page that holds it,
    with its row selected; `b` turns back."""
    size, total = 12, len(cockpit.queue)
    last_of_first, first_of_second = cockpit.queue[size - 1], cockpit.queue[size]
    open_as(screen, cockpit, "jo", f"&trajectory={last_of_first['trajectory_id']}")
    open_side_panel(screen)
    where, selected = screen.locator(".sr-queue-where"), screen.locator(".sr-queue-table .sr-selected")
    expect(where).to_contain_text(f"1–{size} of {total}")
    screen.locator(".sr-step-view").first.click()
    screen.keyboard.press("n")
    steps = len(cockpit.trajectories[first_of_second["trajectory_id"]].steps)
    expect(screen.locator(".sr-step-view")).to_contain_text(f"Step 1/{steps}")
    expect(where).to_contain_text(f"{size + 1}–{2 * size} of {total}")
    expect(selected).to_have_count(1)
    expect(selected).to_contain_text(str(first_of_second["object_id"]))
    screen.keyboard.press("b")
    expect(where).to_contain_text(f"1–{size} of {total}")
    expect(selected).to_contain_text(str(last_of_first["object_id"]))
    # an item opened by its address shows the queue's page that holds it
    open_as(screen, cockpit, "jo", f"&trajectory={first_of_second['trajectory_id']}")
    expect(where).to_contain_text(f"{size + 1}–{2 * size} of {total}")
    expect(selected).to_contain_text(str(first_of_second["object_id"]))
    no_server_errors(cockpit)


def test_stats_plots_draw_glyphs(cockpit, screen):
    open_as(screen, cockpit, "gil", f"&session={OPEN_CAMPAIGN}")
    open_tab(screen, "Stats")
    screen.wait_for_function(f"(({STATS_GLYPHS_JS})()['VBar'] || 0) >= 2", timeout=30_000)
    glyphs = screen.evaluate(STATS_GLYPHS_JS)
    assert glyphs.get("VBar", 0) >= 2  # rating distribution; accuracy and F1 per task
    assert glyphs.get("Line", 0) >= 1  # accuracy against coverage
    assert glyphs.get("Rect", 0) >= 1  # Spearman between raters
    assert glyphs.get("Scatter", 0) >= 1  # the credibility tiers on the coverage curve
    # a CDF per rater: one line each of the multi-line
    assert screen.evaluate(FIGURE_ROWS_JS, "Rating CDF per rater").get("MultiLine", 0) >= 2
    expect(screen.locator(".sr-stats")).to_contain_text("Cohen's kappa on verdicts")
    pair = screen.locator(".sr-kappa-table tbody tr").filter(has_text="cal").filter(has_text="dov")
    expect(pair.first).to_be_visible()  # the kappa table has the pair of reviewers who share verdicts
    no_server_errors(cockpit)


def test_a_page_is_sent_the_stats_plots_before_the_tab_is_opened(cockpit, screen):
    """Issue 22: a moment after a page has loaded, the Stats tab's plots are sent to it, hidden
    (layouts.audit.prepare_after_load), so that opening the tab waits neither for their making nor for
    their drawing; opening it then fills and shows them."""
    from reviewer.components.stats_panel import CALIBRATION_TITLE

    open_as(screen, cockpit, "kim", f"&session={OPEN_CAMPAIGN}")
    screen.wait_for_function(FIGURE_PRESENT_JS, arg=CALIBRATION_TITLE, timeout=30_000)
    expect(screen.locator(".sr-stats")).to_be_hidden()  # in the page, not on screen: the Review tab is
    open_tab(screen, "Stats")
    probe = f"(({FIGURE_GLYPHS_JS})({CALIBRATION_TITLE!r})['MultiLine'] || 0) >= 1"
    screen.wait_for_function(probe, timeout=30_000)
    expect(screen.locator(".sr-stats")).to_be_visible()
    screen.wait_for_function(f"(({STATS_GLYPHS_JS})()['VBar'] || 0) >= 2", timeout=30_000)
    no_server_errors(cockpit)


def test_stats_calibrated_abstention_plot_draws_and_states_the_triage_numbers(cockpit, screen):
    """The accuracy-by-priority plot draws its interval areas and accuracy curves from the verdicts of
    the fixture, and the statement under it is `specreview triage --json`'s pooled row."""
    from reviewer.components.stats_panel import CALIBRATION_TITLE

    open_as(screen, cockpit, "hal", f"&session={OPEN_CAMPAIGN}")
    open_tab(screen, "Stats")
    probe = f"(({FIGURE_GLYPHS_JS})({CALIBRATION_TITLE!r})['MultiLine'] || 0) >= 1"
    screen.wait_for_function(probe, timeout=30_000)
    glyphs = screen.evaluate(FIGURE_GLYPHS_JS, CALIBRATION_TITLE)
    assert glyphs.get("Patches", 0) >= 1, glyphs  # the bootstrap interval, an area per task and agent
    assert glyphs.get("MultiLine", 0) >= 1 and glyphs.get("Scatter", 0) >= 1, glyphs  # accuracy per priority bin
    statement = screen.locator(".sr-abstention")
    expect(statement).to_contain_text("target accuracy 0.98")
    expect(statement).to_contain_text("unreviewed answers")
    # a stricter target restates the numbers (the widget alone, no Refresh)
    box = screen.locator(".sr-abstention-target input")
    box.fill("0.95")
    box.press("Enter")
    expect(statement).to_contain_text("target accuracy 0.95", timeout=20_000)
    no_server_errors(cockpit)


# each Stats block's box in the page, and each table's overflow
STATS_BOXES_JS = """(blocks) => blocks.map(b => { const r = b.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom]; })"""
TABLE_OVERFLOW_JS = "(holders) => holders.map(h => [h.scrollWidth - h.clientWidth, h.scrollHeight - h.clientHeight])"


def test_stats_lays_out_without_covered_data_clipped_tables_or_blank_scroll(cockpit, screen):
    """Issue 19, item 9: in the Stats tab no legend is drawn over a plot's data, no table is cut off
    (every column and row in view without a scroll bar of its own), no two blocks overlap or leave
    the centre column, and the column ends where the last block ends."""
    from reviewer.components.stats_panel import CALIBRATION_TITLE

    open_as(screen, cockpit, "ivy", f"&session={OPEN_CAMPAIGN}")
    open_tab(screen, "Stats")
    probe = f"(({FIGURE_GLYPHS_JS})({CALIBRATION_TITLE!r})['MultiLine'] || 0) >= 1"
    screen.wait_for_function(probe, timeout=60_000)
    expect(screen.locator(".sr-abstention-table tbody tr")).not_to_have_count(0)
    assert screen.evaluate(LEGENDS_OVER_DATA_JS) == []
    # the tables shown: kappa, abstention (the step failure modes and the judges against people are
    # hidden until a step is judged and a judge's scores meet people's)
    holders = screen.locator(".sr-stats .sr-stats-table >> visible=true")
    expect(holders).to_have_count(2)
    for dx, dy in holders.evaluate_all(TABLE_OVERFLOW_JS):
        assert dx <= 1 and dy <= 1, (dx, dy)
    blocks = screen.locator(".sr-stats .sr-stats-plot, .sr-stats .sr-stats-table, .sr-abstention")
    boxes = [b for b in blocks.evaluate_all(STATS_BOXES_JS) if b[2] > b[0] and b[3] > b[1]]
    assert len(boxes) >= 9  # 6 plots, 2 tables, the statement
    column = screen.locator(".sr-stats").first.bounding_box()
    for i, (l1, t1, r1, b1) in enumerate(boxes):
        assert l1 >= column["x"] - 1 and r1 <= column["x"] + column["width"] + 1, (boxes[i], column)
        for l2, t2, r2, b2 in boxes[i + 1:]:
            assert min(r1, r2) - max(l1, l2) <= 1 or min(b1, b2) - max(t1, t2) <= 1, (boxes[i], (l2, t2, r2, b2))
    below_last = screen.evaluate("""() => { const main = document.querySelector('.main');
        main.scrollTop = main.scrollHeight; return main.getBoundingClientRect().bottom; }""")
    last = screen.locator(".sr-stats").first.bounding_box()
    assert below_last - (last["y"] + last["height"]) < 120  # no blank scroll after the last block
    no_server_errors(cockpit)


def test_a_fresh_database_serves_a_usable_page_quickly(browser, tmp_path):
    app = ServedApp(tmp_path / "fresh.duckdb", tmp_path / "fresh.log")
    try:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        start = time.monotonic()
        page.goto(f"{app.url}?reviewer=new", wait_until="domcontentloaded")
        expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=10_000)
        first = time.monotonic() - start
        outside = [u for u in requests if not u.startswith(("http://127.0.0.1", "ws://127.0.0.1", "blob:", "data:"))]
        assert outside == [], outside  # no request leaves the machine
        assert "demo ready" in app.log_text()  # the log says what the server did
        context.close()
    finally:
        app.stop()
    print(f"fresh database: first usable page {first:.1f} s after the request")
