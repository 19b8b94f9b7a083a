"""The screen in Chromium (issue 46, item 1-2; issue 19, items 9-10): at 1440x900 and 1920x1080 the plot's
data area covers a third of the window with the player, the agent's render (>= 300 px) and the verdict
buttons on the same screen, and `f` gives the spectrum the whole window; a 67-step FORMA trajectory
fits (its strip grouped by stage, the report read whole in place, nothing scrolls the page or overflows
sideways); and the lists follow writes made by the CLI. Every wait is on a condition."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from bokeh_probe import MODELS
from browser import open_as as open_page
from browser import open_side_panel, open_tab
from playwright.sync_api import expect
from served_app import REPO_ROOT, ServedApp, seeded_db

from agents.trajectory import Trajectory
from reviewer.server_endpoint import endpoint_path
from reviewer.services.step_stages import STAGES
from reviewer.store import Store

pytestmark = pytest.mark.ui
WIDTH, HEIGHT = 1440, 900
MIN_DATA_SHARE = 0.33  # of the window: the spectrum gets the room (issue 46)

# the spectrum figure's data area (its frame), as BokehJS laid it out
DATA_AREA_JS = "() => {" + MODELS + """
  const fig = models.find(m => m.name === 'spectrum-figure');
  return fig ? [fig.inner_width, fig.inner_height] : null;
}"""
PAGE_SCROLL_JS = "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"


def lengthened(traj: Trajectory, steps: int) -> Trajectory:
    """`traj` with tool results of its middle stage repeated in place until it has `steps` steps: a FORMA
    trajectory as long as the strip must hold, grouped by the same stages (the demo's longest has 60
    steps since verify's line analysis assigns each feature once; it had 67)."""
    grown = traj.model_copy(deep=True, update={"id": "long-" + traj.id[:12]})
    lines = [i for i, step in enumerate(grown.steps) if step.kind == "tool_result"]
    extra = [step.model_copy() for step in (grown.steps[i] for i in lines)][:max(0, steps - len(grown.steps))]
    at = lines[len(lines) // 2] + 1
    grown.steps = [*grown.steps[:at], *extra, *grown.steps[at:]]
    for index, step in enumerate(grown.steps):
        step.index = index
    return grown


@pytest.fixture(scope="module")
def longest(tmp_path_factory):
    """The served demo and its longest FORMA trajectory, made 67 steps long."""
    tmp = tmp_path_factory.mktemp("fit")
    db, _ = seeded_db(tmp)
    with Store(db) as store:
        verify = [r for r in store.queue.queue_items(limit=1000) if r["task"] == "verify"]
        trajs = [Trajectory.from_json(store.trajectories.load_trajectory(r["trajectory_id"]).to_json()) for r in verify]
        traj = lengthened(max(trajs, key=lambda t: len(t.steps)), 67)
        store.trajectories.save_trajectory(traj)
    assert len(traj.steps) >= 67, len(traj.steps)
    app = ServedApp(db, tmp / "panel.log")
    app.traj = traj
    yield app
    app.stop()


def open_as(page, app, reviewer, extra=""):
    page.set_default_navigation_timeout(120_000)  # a busy 2-core machine can take a while to build the page
    open_page(page, app, reviewer, extra)


def inside_screen(page, selector: str, width: int = WIDTH, height: int = HEIGHT) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, (selector, box)
    return box


def wait_for_data_share(page, width: int, height: int, share: float = MIN_DATA_SHARE) -> float:
    """Wait until the plot's data area covers `share` of the window (the page fits the plot's height to
    the window once the browser has reported its size); return the share reached."""
    page.wait_for_function(f"(([w, h]) => w * h >= {share} * {width} * {height})(({DATA_AREA_JS})() || [0, 0])",
                           timeout=30_000)
    w, h = page.evaluate(DATA_AREA_JS)
    return w * h / (width * height)


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080)], ids=["1440x900", "1920x1080"])
def test_the_spectrum_gets_the_room_with_the_agents_render_beside_the_verdict(longest, browser, artifacts, size):
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        open_as(page, longest, f"fit-{width}", f"&trajectory={longest.traj.id}")
        share = wait_for_data_share(page, width, height)
        print(f"data area at {width}x{height}: {share:.0%} of the window")
        page.screenshot(path=str(artifacts / f"fit-{width}x{height}.png"))
        for selector in (".sr-plot", ".sr-player", ".sr-step-strip", ".sr-step-image", ".sr-approve", ".sr-override",
                         ".sr-reject"):
            inside_screen(page, selector, width, height)
        render = page.locator(".sr-step-image").first.bounding_box()
        assert render["width"] >= 300, render
        # the plot is above the player, the player above the step text, which starts on the first screen
        plot, player, step = (page.locator(s).first.bounding_box() for s in (".sr-plot", ".sr-player", ".sr-step-view"))
        assert plot["y"] + plot["height"] <= player["y"] + 6 and player["y"] < step["y"] < height
        # f: the full-window spectrum (both side panels folded), and back
        page.keyboard.press("f")
        expect(page.locator("#right-sidebar")).to_be_hidden()
        full = wait_for_data_share(page, width, height, share + 0.1)
        page.keyboard.press("f")
        expect(page.locator("#right-sidebar")).to_be_visible()
        expect(page.locator(".sr-approve")).to_be_in_viewport()
        print(f"full window: {full:.0%}")
    finally:
        context.close()


def test_a_67_step_trajectory_fits(longest, screen):
    traj = longest.traj
    open_as(screen, longest, "fit2", f"&trajectory={traj.id}")
    strip = screen.locator(".sr-step-strip .sr-strip")
    expect(screen.locator(".sr-step-strip button")).to_have_count(len(traj.steps))
    # grouped by FORMA stage, in order
    expect(screen.locator(".sr-step-strip .sr-stage")).to_have_text([s.upper() for s in STAGES], ignore_case=True)
    # every step's button shows without scrolling the strip
    screen.wait_for_function("box => box.scrollHeight <= box.clientHeight + 1", arg=strip.element_handle(),
                             timeout=30_000)  # once laid out
    strip_box = screen.locator(".sr-step-strip").first.bounding_box()
    last_button = screen.locator(".sr-step-strip button").last.bounding_box()
    assert last_button["y"] + last_button["height"] <= strip_box["y"] + strip_box["height"] + 1
    # the report, read in place and whole: no scroll box of its own (the main column scrolls, the page does not)
    screen.locator(".sr-player-last").click()
    expect(screen.locator(".sr-step-view")).to_contain_text(f"Step {len(traj.steps)}/{len(traj.steps)}")
    report = screen.locator(".sr-step-view .sr-step-text")
    expect(report).to_contain_text("Verification report")
    view = screen.locator(".sr-step-view").first.element_handle()
    screen.wait_for_function("box => box.scrollHeight <= box.clientHeight + 1", arg=view, timeout=30_000)
    end = report.locator(":scope > *").last
    end.scroll_into_view_if_needed()
    expect(end).to_be_in_viewport()
    assert screen.evaluate("() => window.scrollY") == 0
    # the left panel (queue, metadata) starts folded on a window this narrow; its button opens it, with the
    # metadata and the queue's filters on the first screen, folded or not
    expect(screen.locator("#sidebar")).to_be_hidden()
    screen.locator("#sidebar-button").click()
    for heading in (".sr-metadata-card", ".sr-queue-filters-card"):
        head = screen.locator(f"{heading} .card-header").first
        expect(head).to_be_visible()
        box = head.bounding_box()
        assert box["y"] + box["height"] <= HEIGHT, (heading, box)
    # the page itself neither scrolls down nor sideways
    scroll_w, scroll_h = screen.evaluate(PAGE_SCROLL_JS)
    assert scroll_w <= WIDTH and scroll_h <= HEIGHT, (scroll_w, scroll_h)
    # no control of the right column runs past its edge, in any of its tabs
    column = screen.locator(".sr-right-tabs").first.bounding_box()
    edge = column["x"] + column["width"]
    for tab in ("Review", "Note", "View", "z", "VI"):
        open_tab(screen, tab, ".sr-right-tabs")
        controls = screen.locator(".sr-right-tabs").locator(
            "button:visible, input:visible, select:visible, label:visible, .bk-input-group:visible")
        expect(controls.first).to_be_visible()
        rights = controls.evaluate_all("els => els.map(e => [e.textContent.trim().slice(0, 30),"
                                       " e.getBoundingClientRect().right])")
        over = [(text, right) for text, right in rights if right > edge + 1]
        assert not over, (tab, edge, over)


def wait_for_where(page, selector: str, text: str) -> None:
    expect(page.locator(selector)).to_contain_text(text, timeout=30_000)


def specreview(cwd, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYTHONUNBUFFERED="1")
    done = subprocess.run([sys.executable, "-m", "reviewer.cli", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    return done


def test_lists_follow_a_cli_write(browser, tmp_path, shared_spectra, manifest):
    """A reviewer on the queue's second page, then on the Spectra list: `specreview ingest` and `vet`
    from the command line show in the counts within seconds, and the reviewer stays where they were."""
    from browser import new_page

    db, _ = seeded_db(tmp_path)
    with Store(db) as store:
        queue = store.queue.queue_items(limit=1000)
        spectra = store.spectra.count_spectra()
    total, size = len(queue), 12
    pick = next(r for r in manifest if "LAMOST-LRS" in r["survey"])
    work = tmp_path / "work"
    work.mkdir()
    name = pick["file"].split("/")[-1]
    shutil.copy(shared_spectra / pick["file"], work / name)
    app = ServedApp(db, tmp_path / "panel.log")
    pages = new_page(browser, WIDTH, HEIGHT)
    page = next(pages)
    try:
        on_page_two = queue[size + 1]
        open_as(page, app, "follow")
        open_side_panel(page)
        page.locator(".sr-queue-next-page button").click()
        wait_for_where(page, ".sr-queue-where", f"{size + 1}–{2 * size} of {total}")
        page.locator(".sr-queue-table .sr-row").nth(1).click()
        selected = page.locator(".sr-queue-table .sr-selected")
        expect(selected).to_contain_text(str(on_page_two["object_id"]))
        expect(selected.locator("[data-field=task]")).to_have_text(on_page_two["task"])
        open_tab(page, "Spectra")
        wait_for_where(page, ".sr-spectra-where", f"of {spectra}")
        specreview(work, "ingest", "--db", str(db), "--no-progress", name)
        wait_for_where(page, ".sr-spectra-where", f"1–12 of {spectra + 1}")
        open_tab(page, "Queue")
        specreview(work, "vet", "--db", str(db), "--task", "a", "--no-progress", name)
        # the new item counts; the reviewer keeps their page and their row
        wait_for_where(page, ".sr-queue-where", f"{size + 1}–{2 * size} of {total + 1}")
        expect(selected).to_have_count(1)
        expect(selected).to_contain_text(str(on_page_two["object_id"]))
        expect(selected.locator("[data-field=task]")).to_have_text(on_page_two["task"])
        assert endpoint_path(db).exists()  # the writes went through the serving app
    finally:
        pages.close()
        app.stop()
    log = app.log_text()
    assert "Traceback" not in log, log[-3000:]
