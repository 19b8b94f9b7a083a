"""Label writes under load: N browser contexts (default 20) each write M labels (default 500) through
the served app's keyboard, all at once. Reports how many rows reached DuckDB (expected N x M, none
duplicated) and the store write latency the server measured for each label.

Run: .venv/bin/python bench/bench_labels.py [--reviewers 20 --labels 500]
"""
from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path

from ui_timing import ServedApp, launch, machine, seeded_db, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--labels", type=int, default=500)
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    from reviewer.store import Store

    os.environ["SPECREVIEW_LOG_WRITES"] = "1"  # the server logs each write's latency
    with tempfile.TemporaryDirectory() as tmp:
        db, first = seeded_db(Path(tmp))
        app = ServedApp(db, Path(tmp) / "panel.log")
        try:
            with sync_playwright() as pw:
                browser = launch(pw)
                pages = []
                for i in range(args.reviewers):
                    pg = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
                    pg.goto(f"{app.url}?reviewer=bench{i:02d}&trajectory={first}", wait_until="domcontentloaded")
                    pages.append(pg)
                for pg in pages:
                    expect(pg.locator(".sr-step-view")).to_contain_text("Step 1", timeout=180_000)
                    pg.locator(".sr-step-view").first.click()
                start = time.perf_counter()
                for k in range(args.labels):
                    for pg in pages:
                        pg.keyboard.press(str(k % 6))
                for pg in pages:
                    expect(pg.locator(".sr-ack")).to_contain_text(f"#{args.labels} this session", timeout=600_000)
                wall = time.perf_counter() - start
                browser.close()
        finally:
            app.stop()
        latencies = [float(v) for v in re.findall(r"label-write-ms ([0-9.]+)", app.log_text())]
        store = Store(db)
        rows = [r for r in store.labels.label_history("ratings", trajectory_id=first) if r["rater"].startswith("bench")]
        store.close()
    expected = args.reviewers * args.labels
    lat = summary(latencies)
    print(f"Machine: {machine()}\n")
    print(f"{args.reviewers} reviewers x {args.labels} labels: {len(rows)} rows in DuckDB (expected {expected}), "
          f"{len({r['id'] for r in rows})} distinct ids, {wall:.1f} s wall ({expected / wall:.0f} labels/s)")
    print(f"store write latency over {lat['n']} writes: median {lat['median']:.2f} ms, p95 {lat['p95']:.2f} ms, "
          f"max {lat['max']:.2f} ms")


if __name__ == "__main__":
    main()
