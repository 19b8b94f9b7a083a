"""When each part of the Stats tab appears, opened in Chromium on a built database (issue 22, item 1).

    .venv/bin/python bench/trace_stats.py --db DIR/scale-1000000.duckdb [--repeats 3]   (a bench_scale.py --keep DIR database)

Clicks the Stats tab in fresh pages and prints, for each opening, the time (ms from the click) of
every change of what the tab shows on screen: the number of plots, how many Bokeh has drawn, the length of the
abstention statement, and the status line. Each round: the first opening (`--settle` s after the
server's first page has shown its item, or `--after-verdict` s after a verdict written `--settle` s
after the page showed its item), an opening in another page with nothing written since (`--settle` s
after it showed its item), and that page's Refresh. What bench_scale.py times as "ready" and
"settled", taken apart. A page prepares the tab 0.5 s after it loaded (layouts.audit.PREPARE_AFTER_LOAD_MS):
`--settle 0` times an opening before that.
"""
from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from bench_scale import CLEANUP_ARGS, DEEP, TIMED_KEY_ACK, Served, open_review_page
from ui_timing import launch, machine

TRACE = """(tab) => new Promise(resolve => {
  %s
  const start = performance.now();
  const seen = [];
  let last = null, quiet = null;
  tab.click();
  const poll = () => {
    const now = performance.now();
    const plots = deep('.sr-stats-plot').filter(shown);
    const drawn = plots.filter(p => deep('canvas', p.shadowRoot || p).some(painted)).length;
    const said = deep('.sr-abstention').filter(shown).map(text).join('').length;
    const status = deep('.sr-stats-status').filter(shown).map(text).join('').trim().slice(0, 50);
    const sig = `plots ${plots.length}, drawn ${drawn}, statement ${said} chars, status "${status}"`;
    if (sig !== last) { seen.push([Math.round(now - start), sig]); last = sig; quiet = now; }
    if (now - quiet > 2000 && drawn > 0 && said > 0) resolve(seen);
    else if (now - start > 60000) resolve(seen);
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})"""


def opened(page, tab_name: str = "Stats") -> list:
    tab = page.locator(".sr-main-tabs .bk-tab").filter(has_text=re.compile(f"^{tab_name}$")).first.element_handle()
    return page.evaluate(TRACE % DEEP, tab)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--after-verdict", type=float, default=1.0,
                        help="seconds from the verdict's acknowledgement to the click on the tab (the scenario, not a wait "
                             "for something: 0 opens it at once, while the figures are computed again)")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds a page is looked at, from showing its item to the verdict (or the click)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(machine())
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        app = Served(args.db, Path(tmp) / "server.log", "reviewer", CLEANUP_ARGS)
        browser = launch(pw)
        try:
            for i in range(args.repeats):
                # a verdict first (after the first round): what the figures are read from has changed
                page, _ = open_review_page(browser, app, f"trace{i}")
                page.wait_for_timeout(1000 * args.settle)
                if i:
                    page.locator(".sr-step-view").first.click()
                    page.evaluate(TIMED_KEY_ACK, ["a", page.locator(".sr-ack").first.element_handle()])
                    page.wait_for_timeout(1000 * args.after_verdict)
                kind = ("first opening after the server started" if i == 0
                        else f"opening {args.after_verdict:g} s after a verdict")
                for label, page_now in ((kind, page), ("another page, nothing written since", None)):
                    if page_now is None:
                        page.close()
                        page, _ = open_review_page(browser, app, f"again{i}")
                        page.wait_for_timeout(1000 * args.settle)
                    print(f"{label} ({i + 1}):")
                    for at, what in opened(page):
                        print(f"  {at:6d} ms  {what}")
                # the same page's Refresh button: the tab is built, only the figures are computed and filled
                button = page.locator(".sr-stats-refresh button").first.element_handle()
                print(f"Refresh, nothing written since ({i + 1}):")
                for at, what in page.evaluate(TRACE % DEEP, button):
                    print(f"  {at:6d} ms  {what}")
                page.close()
        finally:
            browser.close()
            app.stop()


if __name__ == "__main__":
    main()
