"""In a real browser: a LAMOST star observed twice (real files of the shared corpus) opens with both
epochs in the Same-object panel, and ticking the second draws it over the plot; the metadata's links
out open in a new tab without a handle on the page, and the page itself requests nothing outside
the app's server."""
from __future__ import annotations

import struct
import zlib
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from bokeh_probe import MODELS
from browser import new_page
from playwright.sync_api import expect
from served_app import ServedApp

from agents.trajectory import AgentInfo, Trajectory
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

pytestmark = pytest.mark.ui

FIRST = "lamost_junhui_ccf/spec-55859-F5907_sp03-090.fits.gz"  # 2011-10-24
SECOND = "lamost_junhui_ccf/spec-55915-F5591503_sp09-174.fits.gz"  # 2011-12-19, the same star
OTHER = "lamost_junhui_ccf/spec-55859-F5902_sp03-232.fits.gz"

# the overlay's multi-line: how many curves, points in the first, its colour and spectrum
OVERLAY_JS = "() => {" + MODELS + """
  const r = models.find(m => m.type === 'GlyphRenderer' && m.name === 'same-object-overlay');
  if (!r) return 'absent';
  const d = r.data_source.data;
  return {n: d.xs.length, points: d.xs.length ? d.xs[0].length : 0, color: d.color.length ? d.color[0] : null,
          name: d.name.length ? d.name[0] : null};
}"""


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(range(16)) for _ in range(8))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 16, 8, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _trajectory(spectrum_id: str, path: str, answer: str, minutes: int) -> Trajectory:
    t0 = datetime(2026, 1, 2, 3, 4, tzinfo=UTC) + timedelta(minutes=minutes)
    traj = Trajectory(spectrum_id=spectrum_id, source_path=path, target=None, task="a",
                      agent=AgentInfo(name="vet", backend="rules", model=None, version="0.1.0"), created_at=t0)
    image = traj.add_image(_png())
    traj.add("prompt", text="Is this a white dwarf?", image_sha=image, created_at=t0)
    traj.add("answer", answer={"answer": answer}, text=answer, created_at=t0 + timedelta(seconds=1))
    traj.outcome = {"answer": answer}
    return traj


@pytest.fixture(scope="module")
def sky_app(tmp_path_factory, shared_spectra):
    tmp = tmp_path_factory.mktemp("sky")
    store = Store(tmp / "sky.duckdb")
    files = [shared_spectra / f for f in (FIRST, SECOND, OTHER)]
    summary = ingest_paths(store, files, progress=False, with_file_ids=True)
    ids = [summary.file_ids[str(f)][0] for f in files]
    for i, (sid, f, answer) in enumerate(zip(ids, files, ("YES", "NO", "NO"), strict=True)):
        store.trajectories.save_trajectory(_trajectory(sid, str(f), answer, i))
    store.close()
    app = ServedApp(tmp / "sky.duckdb", tmp / "panel.log")
    yield app, ids
    app.stop()


@pytest.fixture
def sky_page(browser):
    yield from new_page(browser, 1600, 1000)


def _open(page, app, spectrum_id):
    page.goto(f"{app.url}?reviewer=ann&spectrum={spectrum_id}", wait_until="domcontentloaded")
    expect(page.locator(".sr-same-object")).to_contain_text("2 spectra", timeout=60_000)


def test_same_object_panel_lists_both_epochs_and_overlays_the_second(sky_app, sky_page, artifacts):
    app, (first, second, _) = sky_app
    page = sky_page
    _open(page, app, first)
    panel = page.locator(".sr-same-object")
    for text in ("2011-10-24", "2011-12-19", "a/vet: YES", "a/vet: NO"):
        expect(panel).to_contain_text(text)
    assert page.evaluate(OVERLAY_JS) == {"n": 0, "points": 0, "color": None, "name": None}
    page.locator(".sr-same-object-overlay input[type=checkbox]").first.check()
    page.wait_for_function(f"({OVERLAY_JS})().n === 1", timeout=30_000)
    drawn = page.evaluate(OVERLAY_JS)
    assert drawn["name"] == second and drawn["points"] > 3000 and drawn["color"].startswith("#")
    page.screenshot(path=str(artifacts / "same_object_overlay.png"), full_page=False)
    assert page.console_errors == []
    assert "Traceback" not in app.log_text()


def test_links_open_in_a_new_tab_and_the_page_requests_nothing_outside(sky_app, sky_page):
    app, (first, _, _) = sky_app
    page = sky_page
    outside: list[str] = []
    host = urlsplit(app.url).netloc

    def guard(route):
        url = route.request.url
        if urlsplit(url).netloc == host or url.startswith(("data:", "blob:")):
            route.continue_()
        else:  # recorded, never sent: the test machine must not reach the internet either
            outside.append(url)
            route.abort()

    page.context.route("**/*", guard)
    _open(page, app, first)
    links = page.locator(".sr-metadata-links a")
    expect(links).to_have_count(2)  # the LAMOST DR8 page by obsid, the Legacy Survey viewer
    for i in range(2):
        assert links.nth(i).get_attribute("target") == "_blank"
        assert links.nth(i).get_attribute("rel") == "noopener noreferrer"
    lamost = links.first.get_attribute("href")
    assert lamost == "https://www.lamost.org/dr8/v2.0/spectrum/view?obsid=203090"
    page.wait_for_load_state("networkidle")
    assert outside == []  # the page loaded, with its links, asking nothing of another site

    with page.context.expect_page() as opened:
        links.first.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab is not page and len(page.context.pages) == 2
    assert tab.evaluate("window.opener") is None  # noopener: the new tab has no handle on the review page
    assert outside == [lamost]  # only the tab the reviewer opened asked for it (and was stopped here)
    assert page.url.startswith(app.url)  # the review page stayed where it was
