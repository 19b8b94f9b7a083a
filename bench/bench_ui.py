"""Browser responsiveness, measured in Debian's Chromium through Playwright:

1. click a spectrum in the list -> the new spectrum's data is in the plot and painted;
2. key press `j` -> the next trajectory step (its text and its render) is visible;
3. key press `n` -> the next queue item (its trajectory, and its spectrum when it differs) is painted;
4. page loads: a fresh database's first page (server started on an empty file), and later loads.

Each timing is taken inside the page: it starts when the click / key event is dispatched and ends at
the animation frame after the one in which the change was detected (so the change has been painted).
With --overlay, each timed step and item switch starts with a redshift candidate's template model
drawn over the data (the first row of the z tab's candidate list, chosen untimed before the presses).
Run: .venv/bin/python bench/bench_ui.py [--repeats 40] [--overlay]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from ui_timing import ServedApp, launch, machine, seeded_db, summary

# The largest ColumnDataSource with a flux column is the flux curve: a few of its values identify the
# spectrum shown (LAMOST spectra often share one wavelength grid, so x alone does not).
FLUX_SIGNATURE = """() => {
  const doc = window.Bokeh && Bokeh.documents[0];
  if (!doc) return null;
  const models = doc._all_models ? [...doc._all_models.values()] : [...doc.all_models];
  let best = null;
  for (const m of models) {
    if (m.type !== 'ColumnDataSource') continue;  // BokehJS is minified: use the model type name
    const flux = m.data.flux;
    if (!flux) continue;
    const n = flux.length;
    if (!best || n > best.n) best = {n, a: flux[Math.floor(n / 3)], b: flux[Math.floor(n / 2)], x: m.data.wave[0]};
  }
  return best ? `${best.n}:${best.x}:${best.a}:${best.b}` : null;
}"""
MODEL_DRAWN = """() => {
  const doc = window.Bokeh && Bokeh.documents[0];
  if (!doc) return false;
  const models = doc._all_models ? [...doc._all_models.values()] : [...doc.all_models];
  return models.some(m => m.type === 'ColumnDataSource' && m.data.model && m.data.model.length > 0);
}"""
STEP_SHOWN = """([host, want]) => {
  const root = host.shadowRoot || host;
  return root.textContent.includes(want);
}"""
# Dispatch the click in the page and wait, frame by frame, for the flux data to change.
TIMED_CLICK = f"""(row) => new Promise(resolve => {{
  const signature = {FLUX_SIGNATURE};
  const before = signature();
  const start = performance.now();
  const cell = row.querySelector('td') || row;
  cell.dispatchEvent(new MouseEvent('mousedown', {{bubbles: true}}));
  cell.dispatchEvent(new MouseEvent('mouseup', {{bubbles: true}}));
  cell.click();
  const poll = () => {{
    if (signature() !== before) requestAnimationFrame(() => resolve(performance.now() - start));
    else requestAnimationFrame(poll);
  }};
  requestAnimationFrame(poll);
}})"""
TIMED_ITEM = f"""([head, wantFluxChange, wantModelGone]) => new Promise(resolve => {{
  const signature = {FLUX_SIGNATURE};
  const modelDrawn = {MODEL_DRAWN};
  const before = signature();
  const text = () => (head.shadowRoot || head).textContent;
  const headBefore = text();
  const start = performance.now();
  document.dispatchEvent(new KeyboardEvent('keydown', {{key: 'n', bubbles: true}}));
  const poll = () => {{
    const done = text() !== headBefore && (!wantFluxChange || signature() !== before) &&
                 (!wantModelGone || !modelDrawn());
    if (done) requestAnimationFrame(() => resolve(performance.now() - start));
    else requestAnimationFrame(poll);
  }};
  requestAnimationFrame(poll);
}})"""
# TIMED_ITEM, given up after 60 s (-1) instead of waiting for ever
TIMED_ITEM_OR_TIMEOUT = f"""(args) => Promise.race([({TIMED_ITEM})(args),
  new Promise(resolve => setTimeout(() => resolve(-1), 60000))])"""
TIMED_KEY = """([host, image, want, needImage]) => new Promise(resolve => {
  const root = host.shadowRoot || host;
  const imgOf = () => (image.shadowRoot || image).querySelector('img');
  const srcBefore = imgOf() ? imgOf().src : '';
  const start = performance.now();
  document.dispatchEvent(new KeyboardEvent('keydown', {key: 'j', bubbles: true}));
  const poll = () => {
    const shown = root.textContent.includes(want);
    const img = imgOf();
    const imageOk = !needImage || (img && img.src !== srcBefore && img.complete);
    if (shown && imageOk) requestAnimationFrame(() => resolve(performance.now() - start));
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})"""


def tab(page, title, area=""):
    import re
    page.locator(f"{area} .bk-tab".strip()).filter(has_text=re.compile(f"^{title}$")).first.click()


def draw_model(page) -> bool:
    """Choose the first redshift candidate in the z tab and wait for its template on the plot (untimed);
    False when the item has no candidate."""
    tab(page, "z", ".sr-right-tabs")
    rows = page.locator(".sr-candidates .sr-row")
    try:
        rows.first.wait_for(timeout=10_000)
    except Exception:  # no candidate for this item: nothing to draw
        return False
    rows.first.click()
    page.wait_for_function(MODEL_DRAWN, timeout=60_000)
    page.locator(".sr-step-view").first.click()  # keys act on the page again
    return True


def bench_spectrum_switch(page, app, repeats: int) -> list[float]:
    page.goto(f"{app.url}?reviewer=bench", wait_until="domcontentloaded")
    page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=120_000)
    tab(page, "Spectra")
    rows = page.locator(".sr-spectra-table .sr-row")
    rows.first.wait_for()
    n_rows = rows.count()
    rows.first.click()  # a known starting point, then always a different row than the one shown
    page.wait_for_timeout(1000)
    times = []
    for i in range(repeats + 3):
        target = rows.nth((i + 1) % n_rows).element_handle()
        ms = page.evaluate(TIMED_CLICK, target)
        if i >= 3:  # warm-up: first renders of each code path
            times.append(ms)
    return times


by_kind: dict[str, list[float]] = {"image": [], "text": []}


def trajectory_kinds(app, trajectory_id: str) -> list[str]:
    """Step kinds of the benchmarked trajectory, read before the server opened the database."""
    return app.kinds[trajectory_id]


def bench_step_switch(page, app, first: str, repeats: int, overlay: bool = False) -> list[float]:
    page.goto(f"{app.url}?reviewer=bench&trajectory={first}", wait_until="domcontentloaded")
    view = page.locator(".sr-step-view")
    view.first.wait_for(timeout=120_000)
    page.locator(".sr-step-view").first.click()
    if overlay and not draw_model(page):
        raise RuntimeError("--overlay: the benchmarked trajectory has no redshift candidate")
    host = view.first.element_handle()
    image = page.locator(".sr-step-image").first.element_handle()
    kinds = trajectory_kinds(app, first)
    n_steps = len(kinds)
    times = []
    current = 1
    for i in range(repeats + 3):
        forward = current < n_steps
        _key, current = ("j", current + 1) if forward else ("0", current)
        if not forward:  # back to the start with 'k' presses, untimed
            for _ in range(n_steps - 1):
                page.keyboard.press("k")
            current = 1
            page.wait_for_function(STEP_SHOWN, arg=[host, f"Step 1/{n_steps}"], timeout=30_000)
            continue
        with_image = kinds[current - 1] in ("tool_result", "prompt")
        ms = page.evaluate(TIMED_KEY, [host, image, f"Step {current}/{n_steps}", with_image])
        if i >= 3:
            times.append(ms)
            (by_kind["image"] if with_image else by_kind["text"]).append(ms)
    return times


def bench_item_switch(page, url: str, queue: list, repeats: int, timeout: int = 120_000,
                      overlay: bool = False) -> list[float]:
    """`n` through the queue (pairs of trajectory and spectrum ids, read beforehand) from its first item;
    the plot is expected to change only when the spectrum does. With `overlay`, each press leaves an
    item whose candidate's model is drawn (the press then also clears it)."""
    times: list[float] = []
    while len(times) < repeats:
        page.goto(f"{url}?reviewer=bench&trajectory={queue[0][0]}", wait_until="domcontentloaded")
        page.locator(".sr-step-view").first.wait_for(timeout=timeout)
        page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=timeout)
        page.locator(".sr-step-view").first.click()
        head = page.locator(".sr-trajectory-head").first.element_handle()
        for i in range(1, len(queue)):
            modelled = overlay and draw_model(page)
            ms = page.evaluate(TIMED_ITEM_OR_TIMEOUT, [head, queue[i][1] != queue[i - 1][1], modelled])
            if ms < 0:
                raise RuntimeError(f"key n: item {i} of the queue never showed")
            if i > 2:
                times.append(ms)
            if len(times) >= repeats:
                break
    return times


def bench_page_loads(browser, app, repeats: int) -> list[float]:
    """A new browser page on the served app -> the first step's text and the plot are painted."""
    times = []
    for _ in range(repeats):
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        start = time.perf_counter()
        page.goto(f"{app.url}?reviewer=bench{_}", wait_until="domcontentloaded")
        page.locator(".sr-step-view").filter(has_text="Step 1").first.wait_for(timeout=120_000)
        page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=120_000)
        times.append(1000 * (time.perf_counter() - start))
        page.close()
    return times


def bench_fresh_database(browser, tmp: Path) -> dict:
    """`panel serve reviewer` on an empty database file: server start to a usable first page."""
    start = time.perf_counter()
    app = ServedApp(tmp / "fresh.duckdb", tmp / "fresh.log")
    try:
        listening = time.perf_counter() - start
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        t0 = time.perf_counter()
        page.goto(f"{app.url}?reviewer=fresh", wait_until="domcontentloaded")
        page.locator(".sr-step-view").filter(has_text="Step 1").first.wait_for(timeout=300_000)
        page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=120_000)
        first_page = time.perf_counter() - t0
        page.close()
    finally:
        app.stop()
    return {"listening_s": listening, "first_page_s": first_page, "total_s": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--only", default="fresh,spectrum,step,item,load",
                        help="comma-separated measures to take (default: all)")
    parser.add_argument("--overlay", action="store_true",
                        help="a template model drawn before each timed step and item switch")
    parser.add_argument("--samples", type=Path, help="write every timing (ms) of j and n to this JSON file "
                                                    "(bench/bench_ui_ab.py pools them)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    skipped = {"n": 0, "median": float("nan"), "p95": float("nan"), "max": float("nan")}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db, first = seeded_db(Path(tmp))
        from reviewer.store import Store

        store = Store(db)
        kinds = [s.kind for s in store.trajectories.load_trajectory(first).steps]
        queue = [(r["trajectory_id"], r["spectrum_id"]) for r in store.queue.queue_items("bench", limit=100)]
        store.close()
        with sync_playwright() as pw:
            browser = launch(pw)
            fresh = bench_fresh_database(browser, Path(tmp)) if "fresh" in only else None
            app = ServedApp(db, Path(tmp) / "panel.log")
            app.kinds, app.queue = {first: kinds}, queue
            try:
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                spectra = summary(bench_spectrum_switch(page, app, args.repeats)) if "spectrum" in only else skipped
                step_ms = bench_step_switch(page, app, first, args.repeats, args.overlay) if "step" in only else []
                item_ms = bench_item_switch(page, app.url, app.queue, args.repeats, overlay=args.overlay) \
                    if "item" in only else []
                steps, items = (summary(ms) if ms else skipped for ms in (step_ms, item_ms))
                loads = summary(bench_page_loads(browser, app, 10)) if "load" in only else skipped
                browser.close()
            finally:
                app.stop()
    if args.samples:
        args.samples.write_text(json.dumps({"j": step_ms, "n": item_ms, "machine": machine()}))
    print(f"Machine: {machine()}\n")
    if fresh:
        print(f"Fresh database: server listening after {fresh['listening_s']:.1f} s (demo seeded at start-up), "
              f"first usable page {fresh['first_page_s']:.1f} s after the request\n")
    print("| interaction | n | median ms | p95 ms | max ms |\n|---|---|---|---|---|")
    for name, s in (("click spectrum in list -> new plot painted", spectra),
                    ("key `j` -> next step (text + render) painted", steps),
                    ("key `n` -> next queue item painted", items),
                    ("later page load -> first step and plot painted", loads)):
        print(f"| {name} | {s['n']} | {s['median']:.0f} | {s['p95']:.0f} | {s['max']:.0f} |")
    for kind, values in by_kind.items():
        if values:
            s = summary(values)
            print(f"| ... steps with {'a render' if kind == 'image' else 'text only'} | {s['n']} | {s['median']:.0f} | "
                  f"{s['p95']:.0f} | {s['max']:.0f} |")


if __name__ == "__main__":
    main()
