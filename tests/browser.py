"""Pages in Debian's Chromium for the browser tests (tests/ui, tests/security); the `browser` fixture
is in tests/conftest.py."""
from __future__ import annotations

import re

from playwright.sync_api import expect


def new_page(browser, width: int, height: int, console: bool = True):
    """A page in a fresh context; `console_errors` collects page errors (and console errors)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.console_errors = []
    if console:
        pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda err: pg.console_errors.append(str(err)))
    yield pg
    context.close()


def open_tab(page, title, area=""):
    """Click the tab titled `title` (within `area`, a CSS selector, when titles repeat)."""
    page.locator(f"{area} .bk-tab".strip()).filter(has_text=re.compile(f"^{re.escape(title)}$")).first.click()


def open_as(page, app, reviewer, extra=""):
    """Open the review page as `reviewer` (no login) and wait for the first step and the plot fitted to the
    window; focus the page."""
    page.goto(f"{app.url}?reviewer={reviewer}{extra}", wait_until="domcontentloaded")
    expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=60_000)
    wait_for_fitted_plot(page)
    page.locator(".sr-step-view").first.click()  # focus the page, not an input


def wait_for_fitted_plot(page):
    """Wait until the plot's height is the one the page fits to the window (layouts.audit.fit_plot_to_window:
    set once the browser has reported the window's size, so the layout holds still from then on)."""
    from bokeh_probe import MODELS

    from layouts.audit import PLOT_CHROME_PX, PLOT_HEIGHT_PX

    page.wait_for_function("() => {" + MODELS + f"""
      const fig = models.find(m => m.name === 'spectrum-figure');
      const want = Math.max({PLOT_HEIGHT_PX}, window.innerHeight - {PLOT_CHROME_PX});
      return fig && fig.height === want && fig.inner_height > 0;
    }}""", timeout=60_000)


def open_side_panel(page):
    """Unfold the left panel (queue, spectra, metadata), as a reviewer does with its button: it starts
    folded in a window narrower than reviewer.components.keyboard.NARROW_WINDOW_PX."""
    panel = page.locator("#sidebar")
    for _ in range(3):  # a click the busy page took before its own folding ran: once more
        if panel.is_hidden():
            page.locator("#sidebar-button").click()
        try:
            expect(panel).to_be_visible(timeout=10_000)
            break
        except AssertionError:
            continue
    expect(panel).to_be_visible()
    # it slides in (0.2 s): clicks land where they aim once it is at its full width
    page.wait_for_function("() => { const r = document.getElementById('sidebar').getBoundingClientRect();"
                           " return r.left >= 0 && r.width >= 300; }", timeout=10_000)


# Every text node of the page, shadow roots included
PAGE_TEXT_JS = """() => {
  const out = [document.documentElement.textContent || ''];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) { out.push(el.shadowRoot.textContent || ''); walk(el.shadowRoot); }
    }
  };
  walk(document);
  return out.join('\\n');
}"""
MODELS_JS = "() => (window.Bokeh ? Bokeh.documents : []).map(d => d.to_json_string(false))"
