"""The viewer in a real browser: load, pick a spectrum, type a range, smooth, lines, screenshot."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.ui

X_RANGE_JS = """
() => {
  const doc = window.Bokeh && Bokeh.documents[0];
  if (!doc) return null;
  const models = doc._all_models ? [...doc._all_models.values()] : [...doc.all_models];
  const ranges = models.filter(m => m.constructor.name === 'Range1d' || (m.type === 'Range1d'));
  // The wavelength axis is the range with the largest values (Angstrom), flux is far smaller.
  ranges.sort((a, b) => Math.abs(b.end) - Math.abs(a.end));
  return ranges.length ? [ranges[0].start, ranges[0].end] : null;
}
"""


def open_app(page, url):
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(".sr-spectrum-table .tabulator-row", timeout=60_000)
    page.wait_for_function(X_RANGE_JS.replace("() =>", "() => (") + ")() !== null", timeout=60_000)


def test_viewer_select_zoom_smooth_lines(served_app, page, artifacts):
    open_app(page, served_app.url)
    assert "Traceback" not in page.content()

    # Select the SDSS broad-line QSO through the search box and the list.
    page.fill(".sr-search input", "0853")
    page.wait_for_function("document.querySelectorAll('.sr-spectrum-table .tabulator-row').length === 1")
    page.click(".sr-spectrum-table .tabulator-row >> nth=0")
    page.wait_for_function("document.querySelector('.sr-metadata').innerText.includes('SDSS')")

    before = page.evaluate(X_RANGE_JS)
    page.fill(".sr-wave-min input", "6400")
    page.fill(".sr-wave-max input", "6700")
    page.click(".sr-apply button")
    page.wait_for_function(f"({X_RANGE_JS})()[0] === 6400 && ({X_RANGE_JS})()[1] === 6700", timeout=20_000)
    after = page.evaluate(X_RANGE_JS)
    assert after != before and after == [6400, 6700]
    assert "6400.0" in page.inner_text(".sr-status")

    page.click(".sr-smoothing button:has-text('gaussian')")
    page.click(".sr-lines button:has-text('sky')")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "viewer.png"), full_page=False)
    assert page.console_errors == []
    assert "Traceback" not in served_app.log_text()
