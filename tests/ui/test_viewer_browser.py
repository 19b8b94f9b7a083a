"""The viewer in a real browser: load, pick a spectrum, type a range, smooth, lines, screenshot."""
from __future__ import annotations

import pytest
from bokeh_probe import SOURCE_COLUMN_JS, X_RANGE_JS
from browser import open_tab
from playwright.sync_api import expect

pytestmark = pytest.mark.ui


def open_app(page, url):
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(".sr-queue-table .sr-row", state="attached", timeout=60_000)
    page.wait_for_function(f"({X_RANGE_JS})() !== null", timeout=60_000)


def test_viewer_select_zoom_smooth_lines(served_app, page, artifacts):
    open_app(page, served_app.url)
    assert "Traceback" not in page.content()

    # Select the SDSS broad-line QSO through the search box and the list.
    open_tab(page, "Spectra")
    page.wait_for_selector(".sr-spectra-table .sr-row", state="visible")
    page.fill(".sr-search input", "0853")
    rows = page.locator(".sr-spectra-table .sr-row")
    expect(rows).to_have_count(1)  # Panel renders in shadow roots: Playwright locators pierce them
    rows.first.click()
    expect(page.locator(".sr-metadata")).to_contain_text("0853-52374-0240")

    before = page.evaluate(X_RANGE_JS)
    open_tab(page, "View")
    page.fill(".sr-wave-min input", "6400")
    page.fill(".sr-wave-max input", "6700")
    page.click(".sr-apply button")
    page.wait_for_function(f"({X_RANGE_JS})()[0] === 6400 && ({X_RANGE_JS})()[1] === 6700", timeout=20_000)
    after = page.evaluate(X_RANGE_JS)
    assert after != before and after == [6400, 6700]
    expect(page.locator(".sr-status")).to_contain_text("6400.0")

    # Gaussian smoothing: the drawn flux changes and its pixel-to-pixel wiggle (total variation) drops
    wiggle = ("(flux) => { let s = 0, n = 0; for (let i = 1; i < flux.length; i++) {"
              " const d = flux[i] - flux[i - 1]; if (Number.isFinite(d)) { s += Math.abs(d); n++; } } return s / n; }")
    flux_js = f"() => ({SOURCE_COLUMN_JS})(['flux', 'flux'])"
    raw = page.evaluate(f"({wiggle})(({flux_js})())")
    page.click(".sr-smoothing button:has-text('gaussian')")
    page.wait_for_function(f"({wiggle})(({flux_js})()) < 0.7 * {raw}", timeout=20_000)
    # sky lines: none in 6400-6700 Å; with the window widened, the night-sky lines are marked
    assert page.evaluate(f"({SOURCE_COLUMN_JS})(['sky', 'x'])") == []
    page.click(".sr-lines button:has-text('sky')")
    page.fill(".sr-wave-min input", "5500")
    page.click(".sr-apply button")
    page.wait_for_function(f"(({SOURCE_COLUMN_JS})(['sky', 'x']) || []).length >= 3", timeout=20_000)
    sky = page.evaluate(f"({SOURCE_COLUMN_JS})(['sky', 'x'])")
    assert any(abs(x - 5577.3) < 1 for x in sky) and any(abs(x - 6300.3) < 1 for x in sky)
    page.screenshot(path=str(artifacts / "viewer.png"), full_page=False)
    assert page.console_errors == []
    assert "Traceback" not in served_app.log_text()
