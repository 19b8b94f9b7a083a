"""Per-arm display in Chromium at 1440x900 (issue 19 item 4): a DESI coadd is drawn arm by arm in
prospect's colours, and the View tab's arm toggle hides exactly that arm's pixels in the page's own
Bokeh models. Every wait is on a condition."""
from __future__ import annotations

import pytest
from bokeh_probe import MODELS
from browser import open_as, open_tab
from served_app import ServedApp

from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui
GALAXY = "39633345008634465"  # the demo's DESI galaxy (b/r/z arms)

# the arms multi-line: [{arm, color, lo, hi, n}] and the merged flux line's finite wavelengths' count
ARMS_JS = "() => {" + MODELS + """
  const r = models.find(m => m.type === 'GlyphRenderer' && m.name === 'spectrum-arms');
  if (!r) return null;
  const d = r.data_source.data;
  return Array.from(d.arm).map((arm, i) => {
    const xs = Array.from(d.xs[i]), ys = Array.from(d.ys[i]);
    const drawn = xs.filter((x, j) => Number.isFinite(ys[j]));
    return {arm, color: d.color[i], lo: Math.min(...xs), hi: Math.max(...xs), n: drawn.length};
  });
}"""

# finite flux pixels of the merged line within [lo, hi]
FLUX_IN_JS = "([lo, hi]) => {" + MODELS + """
  const src = models.filter(m => m.type === 'ColumnDataSource' && m.data && m.data.wave && m.data.flux)
                    .sort((a, b) => b.data.wave.length - a.data.wave.length)[0];
  if (!src) return -1;
  let n = 0;
  for (let i = 0; i < src.data.wave.length; i++) {
    const w = src.data.wave[i];
    if (w >= lo && w <= hi && Number.isFinite(src.data.flux[i])) n++;
  }
  return n;
}"""


def wait_flux_in(page, lo: float, hi: float, n: int) -> None:
    """Wait until the merged line has exactly `n` finite pixels in [lo, hi] (its source and the arms'
    may arrive in different messages)."""
    page.wait_for_function(f"([lo, hi, n]) => ({FLUX_IN_JS})([lo, hi]) === n", arg=[lo, hi, n], timeout=60_000)


@pytest.fixture(scope="module")
def desi_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arms")
    store = Store(tmp / "arms.duckdb")
    seed_demo_if_empty(store)
    tid = next(r["trajectory_id"] for r in store.queue.queue_items(limit=100)
               if r["task"] == "verify" and r["object_id"] == GALAXY)
    store.close()
    app = ServedApp(tmp / "arms.duckdb", tmp / "panel.log")
    app.tid = tid
    yield app
    app.stop()


def test_toggling_an_arm_hides_exactly_its_pixels(desi_app, screen):
    open_as(screen, desi_app, "ann", f"&trajectory={desi_app.tid}")
    screen.wait_for_function(f"(({ARMS_JS})() || []).map(a => a.arm).join() === 'B,R,Z'", timeout=60_000)
    arms = {a["arm"]: a for a in screen.evaluate(ARMS_JS)}
    assert len({a["color"] for a in arms.values()}) == 3
    red = arms["R"]
    # the red arm's own run of pixels (each arm is one run: the overlaps are split at their middle)
    inner = [red["lo"], red["hi"]]
    wait_flux_in(screen, *inner, red["n"])

    open_tab(screen, "View")
    screen.locator(".sr-arms button").filter(has_text="R (red)").click()
    screen.wait_for_function(f"(({ARMS_JS})() || []).map(a => a.arm).join() === 'B,Z'", timeout=60_000)
    wait_flux_in(screen, *inner, 0)  # the merged line loses exactly those pixels
    after = {a["arm"]: a for a in screen.evaluate(ARMS_JS)}
    assert after["B"]["n"] == arms["B"]["n"] and after["Z"]["n"] == arms["Z"]["n"]
    wait_flux_in(screen, arms["B"]["lo"], arms["B"]["hi"], arms["B"]["n"])

    screen.locator(".sr-arms button").filter(has_text="R (red)").click()
    screen.wait_for_function(f"(({ARMS_JS})() || []).map(a => a.arm).join() === 'B,R,Z'", timeout=60_000)
    wait_flux_in(screen, *inner, red["n"])
