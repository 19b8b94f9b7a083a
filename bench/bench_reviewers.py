"""Many reviewers at once (issue 22, item 5): K sessions review on one served database for D seconds, each
pressing `a` (approve; timed to the acknowledgement) then `n` (next item; timed to the next item shown), as
fast as the page answers. Per session: p95 of `n` and of `a` -> acknowledgement;
afterwards, every approval the pages acknowledged is in the database exactly once (one current verdict per
reviewer and trajectory; a press whose acknowledgement did not come within 60 s may be stored too, and no more).

Two kinds of session (`--clients`):
- `bokeh` (the default): K clients that speak the page's protocol to the server and draw nothing
  (bench/bokeh_client.py), all in this process: "shown" is the server's patch arriving that changes the
  acknowledgement (`a`) or the item's address (`n`).
  The server's cost is the same as K browsers'; the clients' own cost is small and reported.
- `browser`: K Chromium contexts (Playwright's async API, one Chromium), "shown" is painted. On a 2-core
  machine the server, Chromium and the K pages share the same cores, so beyond a few sessions the pages wait
  on their own browsers, not on the server.

Run: nice .venv/bin/python bench/bench_reviewers.py --db DIR/scale-100000.duckdb [--sessions 20] [--seconds 180]
     [--think S] [--clients bokeh|browser] [--json FILE]   (the database is copied, never changed; --think: seconds each reviewer
     looks at an item before the next verdict, on average, 0 = as fast as the page answers)
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import STEP_ONE, TIMED_KEY_ACK, VIEWPORT, Served
from bench_ui import TIMED_ITEM_OR_TIMEOUT
from ui_timing import CHROMIUM_ARGS, machine, summary


def looks(name: str, think: float):
    """A reviewer's pauses: first a wait of 0-`think` s (people do not start in step), then 0.5-1.5x `think`
    before each next verdict, drawn from a generator seeded by the reviewer's name (the same every run)."""
    rng = random.Random(name)
    yield rng.uniform(0, think)
    while True:
        yield rng.uniform(0.5, 1.5) * think


async def open_client(app: Served, name: str, start_at: str | None):
    from bokeh_client import ReviewClient

    client = ReviewClient(app.url, name, {"trajectory": start_at} if start_at else None)
    await client.open()
    await client.wait_for_item()
    return client


async def review_client(client, name: str, seconds: float, think: float = 0.0) -> dict:
    times: dict[str, list[float]] = {"a": [], "n": []}
    failed = {"a": 0, "n": 0}
    until = time.monotonic() + seconds
    pauses = looks(name, think)
    await asyncio.sleep(next(pauses))
    while time.monotonic() < until:
        # `n`: the item's address changes (the head's text may read the same for two items)
        for key, model, attr in (("a", client.ack, "text"), ("n", client.address, "query")):
            ms = await client.press(key, model, attr)  # -1: nothing changed within 60 s
            if ms >= 0:
                times[key].append(ms)
            else:
                failed[key] += 1
        await asyncio.sleep(next(pauses))  # a reviewer's look at the item before the next verdict
    client.close()
    return {"name": name, "times": times, "failed": failed}


async def run_clients(app: Served, names: list[str], seconds: float, starts: list[str | None], think: float) -> list[dict]:
    clients = [await open_client(app, n, s) for n, s in zip(names, starts, strict=True)]
    return await asyncio.gather(*(review_client(c, n, seconds, think) for c, n in zip(clients, names, strict=True)))


async def open_page(browser, app: Served, name: str, start_at: str | None):
    """A reviewer's page, shown. Opened one after another, as reviewers arrive: every browser here is on
    127.0.0.1, whose page-load budget (reviewer/page_limits.py) bench_scale.Served raises for its server."""
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    extra = f"&trajectory={start_at}" if start_at else ""
    await page.goto(f"{app.url}?reviewer={name}{extra}", wait_until="domcontentloaded", timeout=600_000)
    host = page.locator(".sr-step-view").first
    await host.wait_for(timeout=600_000)
    await page.wait_for_function(STEP_ONE, arg=await host.element_handle(), timeout=600_000)
    await host.click()
    return context, page


async def review(context, page, name: str, seconds: float, think: float = 0.0) -> dict:
    ack = await page.locator(".sr-ack").first.element_handle()
    head = await page.locator(".sr-trajectory-head").first.element_handle()
    times: dict[str, list[float]] = {"a": [], "n": []}
    failed = {"a": 0, "n": 0}
    until = time.monotonic() + seconds  # each session's own minutes, from its page shown
    pauses = looks(name, think)
    await asyncio.sleep(next(pauses))
    while time.monotonic() < until:
        for key, call, arg in (("a", TIMED_KEY_ACK, ["a", ack]), ("n", TIMED_ITEM_OR_TIMEOUT, [head, False])):
            ms = await page.evaluate(call, arg)  # -1: nothing changed within 60 s
            if ms >= 0:
                times[key].append(ms)
            else:
                failed[key] += 1
        await asyncio.sleep(next(pauses))  # a reviewer's look at the item before the next verdict
    await context.close()
    return {"name": name, "times": times, "failed": failed}


async def run(app: Served, names: list[str], seconds: float, starts: list[str | None], think: float) -> list[dict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        pages = [await open_page(browser, app, n, s) for n, s in zip(names, starts, strict=True)]
        results = await asyncio.gather(*(review(c, p, n, seconds, think)
                                         for (c, p), n in zip(pages, names, strict=True)))
        await browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds each reviewer looks at an item before the next `a`, on average: drawn from 0.5-1.5x this, "
                             "after a first wait of 0-1x (0: as fast as the page answers)")
    parser.add_argument("--clients", choices=("bokeh", "browser"), default="bokeh",
                        help="sessions that speak the protocol and draw nothing, or Chromium pages")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from reviewer.store import Store

    res: dict = {"machine": machine(), "sessions": args.sessions, "seconds": args.seconds, "think": args.think,
                 "clients": args.clients}
    print(res["machine"], flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_reviewers_") as tmp:
        db = Path(tmp) / "reviewers.duckdb"
        shutil.copyfile(args.db, db)
        with Store(db) as store:  # each reviewer starts at another place of the queue
            ids = [r["trajectory_id"] for r in store.queue.queue_items(limit=args.sessions * 40)]
        starts = [ids[i * 40] if i * 40 < len(ids) else None for i in range(args.sessions)]
        names = [f"rev{i:02d}" for i in range(args.sessions)]
        app = Served(db, Path(tmp) / "serve.log")
        try:
            t, cpu, own = time.perf_counter(), app.cpu_s(), time.process_time()
            drive = run_clients if args.clients == "bokeh" else run
            results = asyncio.run(drive(app, names, args.seconds, starts, args.think))
            res["wall_s"] = time.perf_counter() - t
            # this process's share: the Bokeh clients' own cost (with browsers, Playwright's driver alone)
            res["bench_cpu_share"] = (time.process_time() - own) / res["wall_s"]
            # the server's share of one core over the run: near 1, the server is what the pages wait on;
            # well under it, the browsers on the same cores are
            res["server_cpu_share"] = (app.cpu_s() - cpu) / res["wall_s"]
            res["server_rss_mb"] = app.rss_mb()
        finally:
            app.stop()
        with Store(db) as store:
            stored = store.db.rows(
                "SELECT reviewer, count(*) AS rows, count(DISTINCT trajectory_id) AS items FROM reviews "
                "WHERE reviewer IN (SELECT unnest(?::VARCHAR[])) GROUP BY reviewer", [names])
    by_name = {r["reviewer"]: r for r in stored}
    rows = []
    for r in results:
        acks = len(r["times"]["a"])
        kept = by_name.get(r["name"], {"rows": 0, "items": 0})
        rows.append({"name": r["name"], "a": summary(r["times"]["a"]) if acks else None,
                     "n": summary(r["times"]["n"]) if r["times"]["n"] else None, "failed": r["failed"],
                     "acknowledged": acks, "stored_rows": kept["rows"], "stored_items": kept["items"]})
    res["per_session"] = rows
    every_a = [t for r in results for t in r["times"]["a"]]
    every_n = [t for r in results for t in r["times"]["n"]]
    res["all"] = {"a": summary(every_a) if every_a else None, "n": summary(every_n) if every_n else None}
    print("| session | `a` -> ack n | median ms | p95 ms | `n` n | median ms | p95 ms | acknowledged (+ no ack in 60 s) "
          "| stored rows / items |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, n = r["a"] or {}, r["n"] or {}
        print(f"| {r['name']} | {a.get('n', 0)} | {a.get('median', float('nan')):.0f} | {a.get('p95', float('nan')):.0f} | "
              f"{n.get('n', 0)} | {n.get('median', float('nan')):.0f} | {n.get('p95', float('nan')):.0f} | "
              f"{r['acknowledged']} (+{r['failed']['a']}) | {r['stored_rows']} / {r['stored_items']} |")
    # once: no item labelled twice by one reviewer, every acknowledged approval stored, and nothing stored
    # beyond the presses made (a press whose acknowledgement did not come within 60 s may be stored)
    once = all(r["stored_rows"] == r["stored_items"] and
               r["acknowledged"] <= r["stored_rows"] <= r["acknowledged"] + r["failed"]["a"] for r in rows)
    print(f"all sessions: a p95 {res['all']['a']['p95']:.0f} ms (n={res['all']['a']['n']}), "
          f"n p95 {res['all']['n']['p95']:.0f} ms (n={res['all']['n']['n']}); every acknowledged label stored once: "
          f"{once}; server RSS {res['server_rss_mb']:.0f} MB, CPU {res['server_cpu_share']:.0%} of a core over "
          f"{res['wall_s']:.0f} s (the {args.clients} clients' process: {res['bench_cpu_share']:.0%}); {machine()}")
    res["stored_once"] = once
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
