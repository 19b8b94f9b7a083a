"""Survey scale (issue 11): the review app on a 100k-trajectory database, measured in Debian's Chromium
beside a bare Panel page with one Bokeh plot served and measured in the same run (the floor).

The database is made from real trajectories: the demo is seeded, then its spectra, trajectories, steps
and claim results are copied under new ids in SQL (65 demo trajectories x copies, ~23 steps each), with a
label load on ~10% of the items (3 reviewers' verdicts, some disagreeing; scores; curation events; VI
labels), the stored consensus synced and the triage signals stored (as the campaigns that wrote such
trajectories do at their end: specreview vet, verify, import). Measured:

- page load (first after server start, and later ones) -> first step and plot painted;
- the same page load 5, 15 and 60 s after the server process started, over a few fresh server starts
  (part `startup`; issue 48: start-up work must not slow the pages of the first minute), with the
  server's CPU use each second;
- key `n` -> next queue item painted (p50 / p95), as bench_ui.py;
- queue filter change (a select's value changed -> the queue table's rows changed, painted);
- first opening of the Stats / Conflicts / Curation tabs -> their content painted (and settled);
- label write: key `a` -> the acknowledgement shown;
- server RSS with 1, 5 and 10 open browser sessions and after they close (Panel's unused-session
  check set to 1 s);
- the same tab services in-process (server time), `specreview export parquet` wall time and peak RSS;
- `specreview vet` end-to-end throughput (ingest, vet, claims, store) against the agent's own loop.

Run: .venv/bin/python bench/bench_scale.py [--n 100000] [--keep DIR] [--skip vet,export,...] [--only startup]
[--starts 3] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_ui import FLUX_SIGNATURE, TIMED_ITEM_OR_TIMEOUT, bench_item_switch  # imports ui_timing, which puts tests/ on sys.path
from served_app import free_port, wait_for_port
from ui_timing import REPO, ServedApp, launch, machine, summary

VIEWPORT = {"width": 1440, "height": 900}
# closed sessions discarded within ~2 s; the server logs its session count every second (debug level)
CLEANUP_ARGS = ["--check-unused-sessions", "1000", "--unused-session-lifetime", "1000", "--log-level", "debug",
                "--stats-log-frequency", "1000"]
REVIEWERS = ("alice", "bob", "carol")

FLOOR_APP = '''"""The floor: a bare Panel page with one Bokeh plot (and a button that changes its data)."""
import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

wave = np.linspace(3700.0, 9100.0, 3900)
rng = np.random.default_rng(0)
source = ColumnDataSource({"wave": wave, "flux": np.sin(wave / 50.0) + rng.normal(0, 0.1, wave.size)})
plot = figure(width=900, height=360, output_backend="canvas")
plot.line("wave", "flux", source=source)
button = pn.widgets.Button(name="next", css_classes=["floor-next"])


def next_spectrum(_):
    source.data = {"wave": wave, "flux": np.sin(wave / 50.0 + rng.random()) + rng.normal(0, 0.1, wave.size)}


button.on_click(next_spectrum)
pn.Column(button, pn.pane.Bokeh(plot)).servable(title="floor")
'''

# --- in-page helpers ------------------------------------------------------------------------------
DEEP = """const deep = (sel, root = document, out = []) => {
  root.querySelectorAll(sel).forEach(e => out.push(e));
  root.querySelectorAll('*').forEach(e => { if (e.shadowRoot) deep(sel, e.shadowRoot, out); });
  return out;
};
// on screen: rendered, not inside a hidden tab or a pane not shown (a page holds the Stats tab hidden before it is opened)
const shown = e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0;
// a canvas Bokeh has drawn into (its centre pixel not transparent: the frame's fill), not only made
const painted = c => {
  if (!c.width || !c.height) return false;
  const g = c.getContext('2d');
  return !g || g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data[3] > 0;
};
// the words shown in an element (and its shadow root): a shadow root's textContent holds its stylesheets too
const text = e => {
  const walk = document.createTreeWalker(e.shadowRoot || e, NodeFilter.SHOW_TEXT);
  let out = '';
  while (walk.nextNode()) if (walk.currentNode.parentNode.nodeName !== 'STYLE') out += walk.currentNode.nodeValue;
  return out;
};"""

TIMED_CLICK_FLUX = f"""(button) => new Promise(resolve => {{
  const signature = {FLUX_SIGNATURE};
  const before = signature();
  const start = performance.now();
  button.click();
  const poll = () => {{
    if (signature() !== before) requestAnimationFrame(() => resolve(performance.now() - start));
    else if (performance.now() - start > 60000) resolve(-1);
    else requestAnimationFrame(poll);
  }};
  requestAnimationFrame(poll);
}})"""

TIMED_FILTER = f"""([select, value, table]) => new Promise(resolve => {{
  {DEEP}
  const rows = () => deep('.sr-row', table.shadowRoot || table).map(r => r.textContent).join('|');
  const before = rows();
  const start = performance.now();
  select.value = value;
  select.dispatchEvent(new Event('change', {{bubbles: true}}));
  const poll = () => {{
    if (rows() !== before) requestAnimationFrame(() => resolve(performance.now() - start));
    else if (performance.now() - start > 60000) resolve(-1);
    else requestAnimationFrame(poll);
  }};
  requestAnimationFrame(poll);
}})"""

TIMED_KEY_ACK = """([key, ack]) => new Promise(resolve => {
  const shown = () => (ack.shadowRoot || ack).textContent;
  const before = shown();
  const start = performance.now();
  document.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
  const poll = () => {
    if (shown() !== before) requestAnimationFrame(() => resolve(performance.now() - start));
    else if (performance.now() - start > 60000) resolve(-1);
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})"""


# What each tab shows once its content is there: (ready, signature of what is drawn).
TAB_CONTENT = {
    # the reviewers' plots, shown first; the abstention (every trajectory's signals) follows
    "Stats:plots": """() => {
      const plots = deep('.sr-stats-plot').filter(shown);
      const drawn = plots.filter(p => deep('canvas', p.shadowRoot || p).some(painted)).length;
      return [drawn > 0, `${plots.length}:${drawn}`];
    }""",
    "Stats": """() => {
      const plots = deep('.sr-stats-plot').filter(shown);
      const drawn = plots.filter(p => deep('canvas', p.shadowRoot || p).some(painted)).length;
      const said = deep('.sr-abstention').filter(shown).map(text).join('');
      return [drawn > 0 && said.length > 0, `${plots.length}:${drawn}:${said.length}`];
    }""",
    "Conflicts": """() => {
      const rows = deep('.sr-conflict-table').flatMap(t => deep('.sr-row', t.shadowRoot || t));
      const detail = deep('.sr-conflict-detail').map(text).join('');
      return [detail.trim().length > 0 && (rows.length > 0 || detail.includes('No open conflicts')),
              `${rows.length}:${detail.length}`];
    }""",
    "Curation": """() => {
      const rows = deep('.sr-board-table').flatMap(t => deep('.sr-row', t.shadowRoot || t));
      return [rows.length > 0, `${rows.length}:${rows.length ? rows[0].textContent : ''}`];
    }""",
}


def timed_tab(content: str) -> str:
    """Click the tab; resolve when its content is there and has not changed for 1.5 s: the time it was
    first there (ready) and the time of its last change (settled), each at the next animation frame."""
    return f"""(tab) => new Promise(resolve => {{
  {DEEP}
  const content = {content};
  const start = performance.now();
  tab.click();
  let ready = null, last = null, sig = null;
  const poll = () => {{
    const now = performance.now();
    const [ok, s] = content();
    if (ok && ready === null) ready = now;
    if (s !== sig) {{ sig = s; last = now; }}
    if (ready !== null && now - last > 1500) resolve({{ready: ready - start, settled: Math.max(ready, last) - start}});
    else if (now - start > 120000) resolve({{ready: -1, settled: -1}});
    else requestAnimationFrame(poll);
  }};
  requestAnimationFrame(poll);
}})"""


# --- served apps ----------------------------------------------------------------------------------
class Served(ServedApp):
    """ServedApp with any app path and extra `panel serve` arguments (session clean-up)."""

    def __init__(self, db: Path | None, log: Path, app: str | Path = "reviewer", extra: list[str] = ()):
        self.db, self.log, self.port, self.app = db, log, free_port(), app
        # every page of a bench comes from 127.0.0.1, where reviewers would come from their own addresses:
        # the per-address page-load budget (reviewer/page_limits.py: 10 s of page building) would refuse
        # a bench's later pages with 429 (at 1M trajectories the first page alone takes ~30 s to build)
        env = {"SPECREVIEW_PAGE_BURST_SECONDS": "3600", "SPECREVIEW_PAGES_IN_FLIGHT": "1000",
               **os.environ, "PYTHONUNBUFFERED": "1"}
        if db is not None:
            env["SPECREVIEW_DB"] = str(db)
        started = time.perf_counter()
        with open(log, "w") as log_fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "panel", "serve", str(app), "--address", "127.0.0.1", "--port", str(self.port),
                 "--num-procs", "1", "--allow-websocket-origin", f"127.0.0.1:{self.port}", *extra],
                cwd=REPO, env=env, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_port(self.port, self.proc, timeout=900)
        self.started, self.listening_s = started, time.perf_counter() - started

    def ready_s(self, timeout: float = 900) -> float | None:
        """Seconds from the start to the app's log saying its database is ready (reviewer.app_hooks: the
        work done before any page), waited for; None when it never says so (no database, an older app)."""
        while time.perf_counter() - self.started < timeout and self.proc.poll() is None:
            found = re.search(r"database \S+ ready in ([\d.]+) s", self.log_text())
            if found:
                return time.perf_counter() - self.started
            time.sleep(0.2)
        return None

    def quiet_after_s(self, share: float = 0.05, window: float = 1.0, timeout: float = 900) -> float:
        """Seconds until the server used less than `share` of a core over `window` s: the background work
        its start and first page began (the Stats figures, a first fill of stored signals) is done."""
        start, used = time.perf_counter(), self.cpu_s()
        while time.perf_counter() - start < timeout:
            time.sleep(window)
            now = self.cpu_s()
            if now - used < share * window:
                return time.perf_counter() - start
            used = now
        return float("nan")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{Path(str(self.app)).stem}"

    def sessions(self) -> int | None:
        """The server's last logged count of its sessions (--stats-log-frequency, debug log level)."""
        found = re.findall(r"has (\d+) sessions with", self.log_text())
        return int(found[-1]) if found else None

    def cpu_s(self) -> float:
        """CPU seconds the server process has used (user + system), from /proc."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        try:
            import psutil

            return psutil.Process(self.proc.pid).memory_info().rss / 2**20
        except ImportError:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


# the step view shows "Step 1/N" inside its shadow root (text a locator's has_text does not reach, and
# the view itself sits in other components' shadow roots, which document.querySelector does not enter)
STEP_ONE = """(host) => ((host.shadowRoot || host).textContent || '').includes('Step 1/')"""


def wait_for_first_step(page, timeout: int) -> None:
    host = page.locator(".sr-step-view").first
    host.wait_for(timeout=timeout)
    page.wait_for_function(STEP_ONE, arg=host.element_handle(), timeout=timeout)


def open_review_page(browser, app: Served, reviewer: str, trajectory: str | None = None, timeout: int = 300_000):
    page = browser.new_page(viewport=VIEWPORT)
    start = time.perf_counter()
    extra = f"&trajectory={trajectory}" if trajectory else ""
    page.goto(f"{app.url}?reviewer={reviewer}{extra}", wait_until="domcontentloaded", timeout=timeout)
    wait_for_first_step(page, timeout)
    page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=timeout)
    return page, 1000 * (time.perf_counter() - start)


def open_floor_page(browser, app: Served, timeout: int = 120_000):
    page = browser.new_page(viewport=VIEWPORT)
    start = time.perf_counter()
    page.goto(app.url, wait_until="domcontentloaded", timeout=timeout)
    page.wait_for_function(f"({FLUX_SIGNATURE})() !== null", timeout=timeout)
    return page, 1000 * (time.perf_counter() - start)


def session_memory(app: Served, opener) -> dict:
    """Server RSS (MB) before, with 1, 5 and 10 open browser pages, after closing them, and after a second
    round of 10 opened and closed (memory freed by the first round is reused: little growth); with the
    server's own count of its sessions (its stats log) after each close."""
    time.sleep(3)
    out = {"idle": app.rss_mb()}
    pages = []
    for target in (1, 5, 10):
        while len(pages) < target:
            pages.append(opener(len(pages))[0])
        time.sleep(3)
        out[str(target)] = app.rss_mb()
    for page in pages:
        page.close()
    time.sleep(10)  # sessions are discarded 1 s after their websocket closes, checked every second
    out["closed"], out["sessions_closed"] = app.rss_mb(), app.sessions()
    pages = [opener(10 + k)[0] for k in range(10)]
    time.sleep(3)
    out["10_again"] = app.rss_mb()
    for page in pages:
        page.close()
    time.sleep(10)
    out["closed_again"], out["sessions_closed_again"] = app.rss_mb(), app.sessions()
    out["per_session"] = (out["10"] - out["1"]) / 9
    return out


# --- pages in the first minute after the server starts ------------------------------------------
STARTUP_AT_S = (5.0, 15.0, 60.0)  # issue 48, item 3: each within 1.2x of the others at 100k


class CpuTrace:
    """The server's CPU use (cores busy) in each `step` s from its start, sampled in a thread of the bench."""

    def __init__(self, app: Served, step: float = 1.0):
        import threading

        self.app, self.step, self.samples = app, step, []  # (s since the server started, CPU s used by then)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.step):
            try:
                self.samples.append((time.perf_counter() - self.app.started, self.app.cpu_s()))
            except (FileNotFoundError, ProcessLookupError):
                return

    def stop(self) -> list[tuple[float, float]]:
        """(s since start, cores busy over the step before it) for each sample."""
        self._stop.set()
        self._thread.join()
        pairs = zip(self.samples, self.samples[1:], strict=False)
        return [(round(b[0], 1), round((b[1] - a[1]) / max(1e-9, b[0] - a[0]), 2)) for a, b in pairs]


def bench_startup(browser, db: Path, tmp: Path, starts: int) -> dict:
    """Pages loaded STARTUP_AT_S seconds after the server process started (a fresh server for each
    round, a fresh browser page for each load, the measure of every other page load here: first step
    and plot painted), over `starts` server starts; with each start's listening and ready times and the
    server's CPU use each second (what runs beside the pages)."""
    rounds = []
    for k in range(starts):
        # Bokeh's own session lifetimes, not CLEANUP_ARGS': a page whose websocket came more than 1 s after
        # its document was built (every page of a busy start) had it discarded and built a second one
        app = Served(db, tmp / f"startup{k}.log", "reviewer", ["--log-level", "debug"])
        trace = CpuTrace(app)
        loads = {}
        try:
            for at in STARTUP_AT_S:
                time.sleep(max(0.0, app.started + at - time.perf_counter()))  # the load is timed from its request
                began = time.perf_counter() - app.started
                page, ms = open_review_page(browser, app, f"startup{at:g}")
                page.close()
                loads[f"{at:g}"] = {"began_s": round(began, 1), "ms": round(ms)}
        finally:
            app.stop(signal.SIGTERM)
            cpu = trace.stop()
        # the start-up hook's own time (reviewer.app_hooks: the work before pages; a page asked for meanwhile waits)
        said = re.search(r"database \S+ ready in ([\d.]+) s", app.log_text())
        hook = float(said.group(1)) if said else None
        rounds.append({"listening_s": round(app.listening_s, 1), "hook_s": hook, "loads": loads, "cpu": cpu})
        print(f"  start {k}: listening {app.listening_s:.1f} s, start-up hook {hook} s, loads "
              + ", ".join(f"{at} s: {v['ms']} ms (began at {v['began_s']} s)" for at, v in loads.items())
              + "; cores busy per s: " + " ".join(f"{c:.1f}" for _, c in cpu[:75]), flush=True)
    by_at = {f"{at:g}": [r["loads"][f"{at:g}"]["ms"] for r in rounds] for at in STARTUP_AT_S}
    medians = {at: sorted(v)[len(v) // 2] for at, v in by_at.items()}
    return {"rounds": rounds, "by_at": by_at, "median_ms": medians,
            "spread": max(medians.values()) / max(1, min(medians.values()))}


# --- the database ---------------------------------------------------------------------------------
def build_db(db: Path, n: int) -> dict:
    """Demo seeded, then copied in SQL to >= n trajectories, with a label load; returns counts and times."""
    import kb
    from reviewer.services.conflicts import sync_verdict_states
    from reviewer.services.demo import seed_demo_if_empty
    from reviewer.store import Store

    info: dict = {}
    t0 = time.perf_counter()
    store = Store(db)
    x = store.db.execute
    seed_demo_if_empty(store)
    info["seed_s"] = time.perf_counter() - t0
    base = int(store.db.scalar("SELECT count(*) FROM trajectories"))
    copies = math.ceil(n / base)
    t1 = time.perf_counter()
    x(f"INSERT INTO spectra SELECT * EXCLUDE (i) REPLACE (spectrum_id || '-' || i AS spectrum_id, "
      f"coalesce(object_id, file_name) || '-' || i AS object_id) FROM spectra, range(1, {copies}) c(i)")
    x(f"INSERT INTO trajectories SELECT * EXCLUDE (i) REPLACE (id || '-' || i AS id, spectrum_id || '-' || i "
      f"AS spectrum_id, created_at + i * INTERVAL 1 SECOND AS created_at) FROM trajectories, range(1, {copies}) c(i)")
    x(f"INSERT INTO steps SELECT * EXCLUDE (i) REPLACE (trajectory_id || '-' || i AS trajectory_id) "
      f"FROM steps, range(1, {copies}) c(i)")
    x(f"INSERT INTO claim_results SELECT * EXCLUDE (i) REPLACE (trajectory_id || '-' || i AS trajectory_id) "
      f"FROM claim_results, range(1, {copies}) c(i)")
    info["copy_s"] = time.perf_counter() - t1

    # Labels on ~10% of the items: alice on all of them, bob on half, carol on a quarter; each
    # approves ~95% (rejects or overrides the rest), independently, so ~10% of the shared items conflict.
    t2 = time.perf_counter()
    rubric = str(kb.load("rubrics")["reasoning"]["version"])
    x("CREATE TEMP TABLE bench_sample AS SELECT id, task, answer, answer_z, (hash(id) >> 2)::BIGINT AS h "
      "FROM trajectories "
      "WHERE hash(id) % 10 = 0")
    x("INSERT INTO reviewers SELECT name, now() FROM (VALUES ('alice'), ('bob'), ('carol')) r(name) "
      "ON CONFLICT DO NOTHING")
    x("CREATE TEMP TABLE bench_who AS SELECT * FROM (VALUES ('alice', 0, 1), ('bob', 1, 2), ('carol', 2, 4)) "
      "r(name, k, every)")
    x("""INSERT INTO reviews (id, trajectory_id, reviewer, action, label, created_at)
        SELECT uuid()::VARCHAR, id, name, action,
               CASE WHEN action <> 'override' THEN NULL
                    WHEN task = 'verify' THEN json_object('type', CASE WHEN answer = 'STAR' THEN 'GALAXY' ELSE 'STAR' END,
                                                          'z', CASE WHEN answer = 'STAR' THEN 0.1 ELSE 0.0 END)
                    ELSE json_object('answer', CASE WHEN answer = 'YES' THEN 'NO' ELSE 'YES' END) END,
               TIMESTAMPTZ '2026-10-01 00:00:00+00' + (h % 2000000) * INTERVAL 1 SECOND + k * INTERVAL 1 HOUR
        FROM (SELECT s.*, w.name, w.k,
                     CASE WHEN (h // 7 + 3 * k) % 37 = 0 THEN 'reject'
                          WHEN (h // 11 + 5 * k) % 41 = 0 THEN 'override' ELSE 'approve' END AS action
              FROM bench_sample s, bench_who w WHERE (h // 10) % w.every = 0)""")
    x(f"""INSERT INTO ratings (id, trajectory_id, rater, rater_kind, score, rubric_version, created_at)
        SELECT uuid()::VARCHAR, id, rater, kind, score, '{rubric}', TIMESTAMPTZ '2026-10-01 00:00:00+00'
               + (h % 2000000) * INTERVAL 1 SECOND + INTERVAL 5 MINUTE
        FROM (SELECT id, h, 'alice' AS rater, 'human' AS kind, ((h // 13) % 6)::DOUBLE AS score FROM bench_sample
              UNION ALL SELECT id, h, 'bob', 'human', least(5, greatest(0, (h // 13) % 6 + (h // 17) % 3 - 1))::DOUBLE
                        FROM bench_sample WHERE (h // 10) % 2 = 0
              UNION ALL SELECT id, h, 'llm:bench-judge', 'llm', ((h // 19) % 6)::DOUBLE FROM bench_sample)""")
    # curation: 1 in 20 reviewed items revised by alice, audited by bob and carol (carol asks for changes
    # on 1 in 5), then voted on by all three
    x("""INSERT INTO curation_events (id, trajectory_id, reviewer, event, value, created_at)
        SELECT uuid()::VARCHAR, id, reviewer, event, value,
               TIMESTAMPTZ '2026-10-20 00:00:00+00' + (h % 100000) * INTERVAL 1 SECOND + step * INTERVAL 1 HOUR
        FROM (SELECT id, h, 'alice' AS reviewer, 'revise' AS event, NULL AS value, 0 AS step FROM bench_sample
                WHERE (h // 10) % 20 = 0
              UNION ALL SELECT id, h, 'bob', 'audit', 'approve', 1 FROM bench_sample WHERE (h // 10) % 20 = 0
              UNION ALL SELECT id, h, 'carol', 'audit', CASE WHEN (h // 200) % 5 = 0 THEN 'request_changes'
                        ELSE 'approve' END, 2 FROM bench_sample WHERE (h // 10) % 20 = 0
              UNION ALL SELECT id, h, name, 'vote', 'accept', 3 FROM bench_sample, bench_who
                        WHERE (h // 10) % 20 = 0 AND (h // 200) % 5 <> 0)""")
    # VI labels: alice and bob on 1 spectrum in 20; bob's redshift differs on 1 in 7 of them
    x("""INSERT INTO vi_labels (id, spectrum_id, reviewer, quality, issues, z, spectype, created_at)
        SELECT uuid()::VARCHAR, spectrum_id, name, 4, '',
               coalesce(pipeline_z, 0) + CASE WHEN name = 'bob' AND hash(spectrum_id) % 7 = 0 THEN 0.2 ELSE 0 END,
               pipeline_class, TIMESTAMPTZ '2026-10-10 00:00:00+00' + k * INTERVAL 1 HOUR
        FROM spectra, bench_who WHERE hash(spectrum_id) % 20 = 0 AND name IN ('alice', 'bob')""")
    # the current verdicts and scores the store keeps with each label it writes (these were written in bulk)
    from reviewer.store.schema import KEPT_ON_WRITE

    for table, fill in KEPT_ON_WRITE:
        x(f"DELETE FROM {table}")
        x(fill)
    # the triage weights a running survey has stored (the defaults: what `specreview triage` saves before
    # enough verdicts to fit); without any, the first verdict's priority refresh fits them on every item
    from reviewer.services import triage

    model = triage.default_model()
    store.triage.save_triage_model(model.kind, list(model.features), [float(w) for w in model.weights])
    info["labels_s"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    info["synced"] = sync_verdict_states(store)
    info["sync_s"] = time.perf_counter() - t3
    # the triage signals, stored as the campaigns that wrote these trajectories would have at their end
    # (specreview vet / verify / import): left to the server, its first read computes them (~90 s at 1M)
    t4 = time.perf_counter()
    info["signals_stored"] = triage.store_signals(store, None)
    info["signals_s"] = time.perf_counter() - t4
    x("CHECKPOINT")
    for table in ("spectra", "trajectories", "steps", "claim_results", "reviews", "ratings", "curation_events",
                  "vi_labels", "verdict_state"):
        info[table] = int(store.db.scalar(f"SELECT count(*) FROM {table}"))
    info["conflicts"] = int(store.db.scalar("SELECT count(*) FROM verdict_state WHERE scope = '' AND status = 'conflict'"))
    store.close()
    info["build_s"] = time.perf_counter() - t0
    info["db_mb"] = db.stat().st_size / 2**20
    return info


def db_facts(db: Path) -> tuple[dict, list, str]:
    """Counts, the first 100 queue items of reviewer `bench` as (trajectory id, spectrum file and target:
    the copies of a spectrum share its file, so its plot does not change between them) and the first id."""
    from reviewer.store import Store

    store = Store(db)
    facts = {t: int(store.db.scalar(f"SELECT count(*) FROM {t}")) for t in ("trajectories", "steps", "reviews")}
    queue = []
    for row in store.queue.queue_items("bench", limit=100):
        spec = store.spectra.get_spectrum(row["spectrum_id"]) or {}
        queue.append((row["trajectory_id"], (spec.get("source_path"), spec.get("target"))))
    store.close()
    return facts, queue, queue[0][0]


def service_times(db: Path, limit_s: int = 120) -> dict:
    """The tabs' services in-process (server time, no browser), each run twice (cold, then warm); one
    taking more than `limit_s` is given up (-1)."""
    from reviewer.services import stats, triage
    from reviewer.services.conflicts import conflict_queue
    from reviewer.services.curation import curation_board, curation_page
    from reviewer.store import Store

    store = Store(db)
    out = {}
    calls = {"stats.review_stats": lambda: stats.review_stats(store),
             "triage.triage_report": lambda: triage.triage_report(store, 0.98),
             "conflicts.conflict_queue": lambda: conflict_queue(store),
             "curation.curation_board": lambda: curation_board(store),
             # what the Curation tab reads when it opens: its first page (and the count)
             "curation.curation_page": lambda: curation_page(store, limit=15)[0],
             "curation.curation_page(not draft)": lambda: curation_page(store, state="not draft", limit=15)[0]}
    def give_up(*_):
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, give_up)
    for name, call in calls.items():
        times, size = [], None
        for _ in range(2):
            t = time.perf_counter()
            signal.alarm(limit_s)
            try:
                result = call()
            except TimeoutError:
                times.append(-1.0)  # gave up
                break
            finally:
                signal.alarm(0)
            times.append(1000 * (time.perf_counter() - t))
            size = len(result) if isinstance(result, list) else None
        out[name] = {"cold_ms": times[0], "warm_ms": times[-1] if len(times) > 1 else -1.0, "rows": size}
        print(f"  {name}: {times} ms", flush=True)
    signal.signal(signal.SIGALRM, previous)
    store.close()
    return out


# --- browser measures -----------------------------------------------------------------------------
def bench_filters(page, app: Served, repeats: int) -> dict:
    page.goto(f"{app.url}?reviewer=bench", wait_until="domcontentloaded")
    wait_for_first_step(page, 300_000)
    page.locator(".card-header").filter(has_text="Filters").first.click()
    selects = page.locator(".sr-queue-filters select")
    selects.first.wait_for(timeout=30_000)
    by_options = {}
    for i in range(selects.count()):
        options = selects.nth(i).evaluate("s => [...s.options].map(o => o.value)")
        by_options.setdefault(tuple(options), []).append(i)
    task_i = next(v[0] for k, v in by_options.items() if "mg" in k)
    yes_no = next(v for k, v in by_options.items() if set(k) == {"any", "yes", "no"})[0]  # disagreement first
    table = page.locator(".sr-queue-table").first.element_handle()
    task = selects.nth(task_i).element_handle()
    split = selects.nth(yes_no).element_handle()
    page.wait_for_timeout(1000)
    out = {"task": [], "disagreement": []}
    cycle = ["a", "mg", "wd", "cv", "verify"]
    for i in range(repeats + 1):
        ms = page.evaluate(TIMED_FILTER, [task, cycle[i % len(cycle)], table])
        page.wait_for_timeout(300)
        if i and ms >= 0:
            out["task"].append(ms)
    page.evaluate(TIMED_FILTER, [task, "any", table])
    page.wait_for_timeout(500)
    for i in range(max(4, repeats // 2)):
        ms = page.evaluate(TIMED_FILTER, [split, "yes" if i % 2 == 0 else "any", table])
        page.wait_for_timeout(300)
        if ms >= 0:
            out["disagreement"].append(ms)
    return out


def bench_tabs(browser, app: Served, repeats: int, titles: tuple[str, ...]) -> dict:
    """Each tab opened for the first time in a fresh page (its component is built, then filled)."""
    out = {}
    for title in titles:
        content = TAB_CONTENT[title]
        ready, settled, failed = [], [], 0
        while len(ready) < repeats:
            page, _ = open_review_page(browser, app, f"tabs{len(ready) + failed}")
            page.wait_for_timeout(1000)
            name = title.split(":")[0]  # "Stats:plots": the Stats tab, a part of its content
            tab = page.locator(".sr-main-tabs .bk-tab").filter(has_text=re.compile(f"^{name}$")).first.element_handle()
            got = page.evaluate(timed_tab(content), tab)
            page.close()
            if got["ready"] < 0:  # not there within 2 minutes: once may be chance, twice is the tab
                failed += 1
                print(f"  tab {title}: nothing within 120 s; server log says:\n"
                      + "\n".join(line for line in app.log_text().splitlines()[-400:]
                                  if re.search(r"error|exception|traceback", line, re.I))[-3000:], flush=True)
                if failed >= 2 or "Stats" in title:  # Stats: the server may be busy with it for minutes
                    break
                continue
            ready.append(got["ready"])
            settled.append(got["settled"])
        out[title] = {"ready": ready or [-1.0], "settled": settled or [-1.0], "failed": failed}
        print(f"  tab {title}: ready {ready}, settled {settled}", flush=True)
    return out


def bench_label_write(browser, app: Served, first: str, repeats: int) -> list[float]:
    page, _ = open_review_page(browser, app, "benchwriter", first)
    page.locator(".sr-step-view").first.click()
    ack = page.locator(".sr-ack").first.element_handle()
    head = page.locator(".sr-trajectory-head").first.element_handle()
    times = []
    for i in range(repeats + 2):
        ms = page.evaluate(TIMED_KEY_ACK, ["a", ack])
        if i >= 2 and ms >= 0:
            times.append(ms)
        page.evaluate(TIMED_ITEM_OR_TIMEOUT, [head, False])  # on to the next item (untimed)
    page.close()
    return times


# --- CLI runs -------------------------------------------------------------------------------------
def run_measured(cmd: list[str], log: Path) -> tuple[float, float, int]:
    """(wall s, peak RSS MB of the command, exit code). The peak is taken by /usr/bin/time when there is
    one: a child forked from this (large) process counts this process's pages in its own maximum RSS."""
    timer = Path("/usr/bin/time")
    peak_file = log.with_suffix(".maxrss")
    start = time.perf_counter()
    with open(log, "w") as fh:
        if timer.exists():
            rc = subprocess.call([str(timer), "-f", "%M", "-o", str(peak_file), *cmd], stdout=fh,
                                 stderr=subprocess.STDOUT, cwd=REPO)
            wall = time.perf_counter() - start
            return wall, int(peak_file.read_text().split()[-1]) / 1024, rc
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, proc.returncode


def bench_export(db: Path, tmp: Path) -> dict:
    out = tmp / "export-pq"
    cli = str(Path(sys.executable).parent / "specreview")
    wall, peak, rc = run_measured([cli, "export", "parquet", "--db", str(db), "--out", str(out), "--force"],
                                  tmp / "export.log")
    size = sum(f.stat().st_size for f in out.glob("*.parquet")) / 2**20 if out.exists() else 0
    if rc != 0:
        print((tmp / "export.log").read_text()[-2000:], file=sys.stderr)
    shutil.rmtree(out, ignore_errors=True)
    return {"wall_s": wall, "peak_mb": peak, "rc": rc, "out_mb": size}


def bench_vet(tmp: Path, n_spectra: int) -> dict:
    """`specreview vet --task a` (rules, 1 worker) on real spectra into a fresh database, against the
    agent alone on the same spectra (read + vet_spectrum in one process)."""
    from bench_vet import load
    from shared_data import spectra_dir

    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    rows, _specs, _ = load(n_spectra)
    files = [str(spectra_dir() / r["file"].partition("#")[0]) for r in rows if "#" not in r["file"]]
    files = list(dict.fromkeys(files))
    vet_spectrum(read_spectrum(files[0]), "a")  # warm imports
    t = time.perf_counter()
    for f in files:
        vet_spectrum(read_spectrum(f), "a")
    own = len(files) / (time.perf_counter() - t)
    cli = str(Path(sys.executable).parent / "specreview")
    one = run_measured([cli, "vet", "--task", "a", "--no-progress", "--db", str(tmp / "vet1.duckdb"), files[0]],
                       tmp / "vet1.log")
    full = run_measured([cli, "vet", "--task", "a", "--no-progress", "--db", str(tmp / "vetN.duckdb"), *files],
                        tmp / "vetN.log")
    if full[2] != 0:
        print((tmp / "vetN.log").read_text()[-2000:], file=sys.stderr)
    said = re.search(r"run: .*\(([\d.]+)/s\)", (tmp / "vetN.log").read_text())  # the CLI's own vetting rate
    return {"n": len(files), "own_per_s": own, "cli_one_s": one[0], "cli_all_s": full[0],
            "cli_run_per_s": float(said.group(1)) if said else None,
            "cli_per_s": len(files) / full[0],
            "cli_per_s_after_start": (len(files) - 1) / max(1e-9, full[0] - one[0]), "cli_peak_mb": full[1]}


def bench_app(browser, db: Path, tmp: Path, queue: list, first: str, skip: set, args, res: dict) -> None:
    """The server started once: its first page once ready, then (on a server done with its start-up's
    background work) the parts memory, ui and tabs; figures into `res`."""
    app = Served(db, tmp / "panel.log", "reviewer", CLEANUP_ARGS)
    res["listening_s"] = app.listening_s
    try:
        print(f"app listening after {app.listening_s:.1f} s", flush=True)
        res["ready_s"] = app.ready_s()
        print(f"app ready after {res['ready_s'] or float('nan'):.1f} s", flush=True)
        page, ms = open_review_page(browser, app, "cold")
        res["first_load_ms"] = ms
        page.close()
        print(f"  first page {ms:.0f} ms", flush=True)
        # what follows is timed on a server done with its start-up's background work
        res["quiet_s"] = app.quiet_after_s()
        print(f"  server quiet {res['quiet_s']:.1f} s after the first page", flush=True)
        if "memory" not in skip:
            res["memory"] = session_memory(app, lambda k: open_review_page(browser, app, f"s{k}"))
            print(f"  memory {json.dumps(res['memory'])}", flush=True)
        if "ui" not in skip:
            loads = []
            for k in range(5):
                page, ms = open_review_page(browser, app, f"load{k}")
                loads.append(ms)
                page.close()
            res["load"] = summary(loads)
            print(f"  loads {loads}", flush=True)
            page = browser.new_page(viewport=VIEWPORT)
            res["item"] = summary(bench_item_switch(page, app.url, queue, args.repeats, timeout=300_000))
            print(f"  item {res['item']}", flush=True)
            filters = bench_filters(page, app, 10)
            res["filter"] = {k: summary(v) if v else None for k, v in filters.items()}
            print(f"  filters {filters}", flush=True)
            page.close()
        if "tabs" not in skip:
            res["tabs"] = bench_tabs(browser, app, 3, ("Conflicts", "Curation"))
        if "ui" not in skip:
            res["label_write"] = summary(bench_label_write(browser, app, first, min(args.repeats, 20)))
            print(f"  label write {res['label_write']}", flush=True)
        res["server_rss_end_mb"] = app.rss_mb()
        if "tabs" not in skip:  # last: it may keep the server busy for minutes
            res["tabs"].update(bench_tabs(browser, app, 3, ("Stats:plots", "Stats")))
    finally:
        app.stop(signal.SIGTERM)
        if args.keep:  # the servers' logs beside the database
            for log in tmp.glob("*.log"):
                shutil.copy(log, args.keep / log.name)


# --- main -----------------------------------------------------------------------------------------
PARTS = ("services", "floor", "startup", "app", "memory", "ui", "tabs", "export", "vet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="trajectories (default 100000)")
    parser.add_argument("--keep", type=Path, default=None, help="folder keeping (and reusing) the built database")
    parser.add_argument("--repeats", type=int, default=40, help="item switches and label writes timed")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: floor,startup,app (the server "
                        "started once: its first page and the parts ui,tabs,memory),services,export,vet")
    parser.add_argument("--only", default="", help="comma-separated parts to run, the others skipped")
    parser.add_argument("--starts", type=int, default=3, help="server starts of the startup part")
    parser.add_argument("--vet-spectra", type=int, default=40)
    parser.add_argument("--build-only", action="store_true", help="build (or find) the database, then stop")
    parser.add_argument("--json", type=Path, default=None, help="write every figure to this file too")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if args.only:
        skip |= set(PARTS) - set(args.only.split(","))
    res: dict = {"machine": machine(), "load_start": os.getloadavg(), "n": args.n}
    print(f"Machine: {res['machine']}", flush=True)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench_scale_", dir=os.environ.get("TMPDIR")) as tmp_name:
        tmp = Path(tmp_name)
        folder = args.keep or tmp
        folder.mkdir(parents=True, exist_ok=True)
        db = folder / f"scale-{args.n}.duckdb"
        if db.exists():
            print(f"reusing {db}", flush=True)
        else:
            print(f"building {db} ...", flush=True)
            building = db.with_suffix(".building")
            for stale in (building, building.with_suffix(".building.wal")):
                stale.unlink(missing_ok=True)
            res["build"] = build_db(building, args.n)
            building.rename(db)
            print(f"  {json.dumps(res['build'])}", flush=True)
        res["db"], queue, first = db_facts(db)
        print(f"  database: {res['db']}", flush=True)
        if args.build_only:
            return
        if "services" not in skip:
            print("services in-process:", flush=True)
            res["services"] = service_times(db)
        with sync_playwright() as pw:
            browser = launch(pw)
            if "floor" not in skip:
                print("floor ...", flush=True)
                (tmp / "floor.py").write_text(FLOOR_APP)
                floor = Served(None, tmp / "floor.log", tmp / "floor.py", CLEANUP_ARGS)
                try:
                    loads = []
                    for _ in range(6):
                        page, ms = open_floor_page(browser, floor)
                        loads.append(ms)
                        page.close()
                    page, _ = open_floor_page(browser, floor)
                    button = page.locator(".floor-next button").first.element_handle()
                    clicks = [page.evaluate(TIMED_CLICK_FLUX, button) for _ in range(args.repeats + 3)][3:]
                    page.close()
                    res["floor"] = {"load": summary(loads[1:]), "first_load_ms": loads[0],
                                    "roundtrip": summary(clicks),
                                    "memory": session_memory(floor, lambda k: open_floor_page(browser, floor))}
                finally:
                    floor.stop()
                print(f"  {json.dumps(res['floor'])}", flush=True)
            if "startup" not in skip:
                print(f"pages {', '.join(f'{at:g}' for at in STARTUP_AT_S)} s after the server starts ...", flush=True)
                try:
                    res["startup"] = bench_startup(browser, db, tmp, args.starts)
                finally:
                    if args.keep:  # the servers' logs beside the database
                        for log in tmp.glob("startup*.log"):
                            shutil.copy(log, args.keep / log.name)
            if "app" not in skip:
                bench_app(browser, db, tmp, queue, first, skip, args, res)
            browser.close()
        if "export" not in skip:
            print("export ...", flush=True)
            res["export"] = bench_export(db, tmp)
            print(f"  {json.dumps(res['export'])}", flush=True)
        if "vet" not in skip:
            print("vet ...", flush=True)
            res["vet"] = bench_vet(tmp, args.vet_spectra)
            print(f"  {json.dumps(res['vet'])}", flush=True)
    res["load_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))
    report(res)


def _ms(value) -> str:
    return "-" if value is None or value < 0 else f"{value:.0f}"


def _pair(s) -> str:
    return f"{_ms(s['median'])} / {_ms(s['p95'])}" if s else "-"


def report(res: dict) -> None:
    la = lambda v: " / ".join(f"{x:.1f}" for x in v)  # noqa: E731
    print(f"\nMachine: {res['machine']}; load average {la(res['load_start'])} at the start, "
          f"{la(res['load_end'])} at the end")
    db = res.get("db", {})
    print(f"Database: {db.get('trajectories')} trajectories, {db.get('steps')} steps, {db.get('reviews')} reviews"
          + (f"; built in {res['build']['build_s']:.0f} s ({res['build']['db_mb']:.0f} MB, "
             f"{res['build']['conflicts']} conflicts, consensus sync {res['build']['sync_s']:.0f} s, "
             f"triage signals of {res['build']['signals_stored']} trajectories stored in {res['build']['signals_s']:.0f} s)"
             if "build" in res else ""))
    floor = res.get("floor")
    print("\n| measure | n | median ms | p95 ms | floor (bare Panel + Bokeh) | goal |\n|---|---|---|---|---|---|")
    if res.get("ready_s"):
        print(f"| server start -> its database ready (the work done before pages) | 1 | {_ms(1000 * res['ready_s'])} "
              "| | - | |")
    if "first_load_ms" in res:
        print(f"| first page once the server is ready -> step and plot painted | 1 | {_ms(res['first_load_ms'])} | | "
              f"{_ms(floor['first_load_ms']) if floor else '-'} | |")
    if "quiet_s" in res:
        print(f"| after the first page, the server's background work (later rows wait for it) | 1 | "
              f"{_ms(1000 * res['quiet_s'])} | | - | |")
    for key, name, goal, floor_key in (
            ("load", "later page load -> step and plot painted", "<= 3000", "load"),
            ("item", "key `n` -> next item painted", "p95 <= 150", "roundtrip"),
            ("label_write", "key `a` -> acknowledgement shown", "", "roundtrip")):
        s = res.get(key)
        if s:
            f = floor[floor_key] if floor else None
            print(f"| {name} | {s['n']} | {_ms(s['median'])} | {_ms(s['p95'])} | "
                  f"{_pair(f)} | {goal} |")
    for key, s in (res.get("filter") or {}).items():
        if s:
            f = floor["roundtrip"] if floor else None
            print(f"| queue filter ({key}) -> table updated | {s['n']} | {_ms(s['median'])} | {_ms(s['p95'])} | "
                  f"{_pair(f)} | <= 200 |")
    for title, t in (res.get("tabs") or {}).items():
        ready = sorted(x for x in t["ready"] if x >= 0)
        settled = sorted(x for x in t["settled"] if x >= 0)
        if not ready:
            print(f"| open {title} tab (first time) -> content painted | {len(t['ready'])} | > 120000 | | | <= 1000 |")
        else:
            lost = f"; {t['failed']} more showed nothing in 120 s" if t.get("failed") else ""
            print(f"| open {title} tab (first time) -> content painted (settled){lost} | {len(ready)} | "
                  f"{_ms(ready[len(ready) // 2])} ({_ms(settled[len(settled) // 2])}) | {_ms(ready[-1])} "
                  f"({_ms(settled[-1])}) | | <= 1000 |")
    if res.get("startup"):
        st = res["startup"]
        print(f"\n| page load at ... s after the server process started -> step and plot painted | "
              f"{' | '.join(st['median_ms'])} |\n|---|{'---|' * len(st['median_ms'])}")
        for k, r in enumerate(st["rounds"]):
            print(f"| start {k + 1} (listening at {r['listening_s']} s, start-up hook {r['hook_s']} s) | "
                  + " | ".join(f"{v['ms']} (asked at {v['began_s']} s)" for v in r["loads"].values()) + " |")
        print(f"| median of {len(st['rounds'])} starts | " + " | ".join(_ms(v) for v in st["median_ms"].values())
              + f" |\n\nslowest median / fastest: {st['spread']:.2f} (goal <= 1.2)")
    if res.get("memory"):
        m = res["memory"]
        f = floor["memory"] if floor else None
        print("\n| server RSS MB | idle | 1 session | 5 | 10 | 10 closed | 10 more opened | closed again | "
              "per session (10 vs 1) | sessions left |\n|---|---|---|---|---|---|---|---|---|---|")
        for name, mm in (("review app", m), ("floor", f)):
            if mm:
                print(f"| {name} | {mm['idle']:.0f} | {mm['1']:.0f} | {mm['5']:.0f} | {mm['10']:.0f} | "
                      f"{mm['closed']:.0f} | {mm['10_again']:.0f} | {mm['closed_again']:.0f} | "
                      f"{mm['per_session']:.1f} | {mm['sessions_closed']}, {mm['sessions_closed_again']} |")
    if res.get("services"):
        print("\n| service in-process | cold ms | warm ms | rows |\n|---|---|---|---|")
        for name, s in res["services"].items():
            cold, warm = (_ms(s[k]) if s[k] >= 0 else "> 120000" for k in ("cold_ms", "warm_ms"))
            print(f"| {name} | {cold} | {warm} | {s['rows'] if s['rows'] is not None else ''} |")
    if res.get("export"):
        e = res["export"]
        print(f"\n`specreview export parquet`: {e['wall_s']:.1f} s, peak RSS {e['peak_mb']:.0f} MB "
              f"({e['out_mb']:.0f} MB of Parquet, exit {e['rc']}); goal <= 500 MB")
    if res.get("vet"):
        v = res["vet"]
        print(f"`specreview vet --task a` on {v['n']} spectra: {v['cli_all_s']:.1f} s = {v['cli_per_s']:.2f} "
              f"spectra/s ({v['cli_per_s_after_start']:.2f}/s after the {v['cli_one_s']:.1f} s of a one-spectrum run); "
              f"the agent alone (read + vet_spectrum): {v['own_per_s']:.2f} spectra/s; the CLI's vetting step itself "
              f"{v['cli_run_per_s']}/s (the rest: process start, ingest, claim checks, writes)")


if __name__ == "__main__":
    main()
