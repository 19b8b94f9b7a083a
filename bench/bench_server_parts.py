"""The server's own part of two things a reviewer waits on, in one process, no browser (issue 22):

- `switch`: `n` as ReviewState.step_item runs it (the queue's neighbour, the trajectory, its claim
  results, its spectrum), and the two queue reads it stands on (`queue_neighbour`, a page of 12);
- `label`: `a` as ReviewState.save runs it (the verdict written, its item's state synced), on
  successive items;
- `conflicts`: the Conflicts tab's read (ConflictQueue.refresh: the open conflicts a reviewer may see);
- `stats`: the Stats tab's Bokeh models: StatsPanel made, refreshed (the services) and turned into a
  document's models (`get_root`), as a first opening of the tab does;
- `signals`: the triage signals of every trajectory stored, as a campaign that wrote them all ends
  (`triage.store_signals`, after dropping those the copy holds), then the triage's inputs read (once each).

The database is copied, never changed. To measure the code before a change beside the code after it,
run this script with PYTHONPATH set to each checkout (e.g. a `git worktree` of the earlier commit).

Run: nice .venv/bin/python bench/bench_server_parts.py --db DIR/scale-N.duckdb [--repeats 8]
     [--part switch,label,conflicts,stats,signals]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def ms(call) -> float:
    t = time.perf_counter()
    call()
    return 1000 * (time.perf_counter() - t)


def bench_switch(store, repeats: int) -> dict:
    from reviewer.review_state import ReviewState

    state = ReviewState(store, reviewer="bench-switch")
    state.open_first()
    switches = [ms(lambda: state.step_item(1)) for _ in range(repeats)]
    args = state.queue_args()
    current = state.item.trajectory_id
    neighbour = [ms(lambda: state.queue.neighbour(current, 1, "bench-switch", **args)) for _ in range(repeats)]
    page = [ms(lambda: state.queue.page("bench-switch", 0, 12, **args)) for _ in range(repeats)]
    return {"step_item": switches, "queue_neighbour": neighbour, "queue_page": page}


def bench_label(store, repeats: int) -> dict:
    from reviewer.review_state import ReviewState

    state = ReviewState(store, reviewer="bench-label")
    state.open_first()
    saves = []
    for _ in range(repeats):
        saves.append(ms(lambda: state.writer.save("verdict", action="approve")))
        state.step_item(1)
    return {"save_approve": saves}


def bench_conflicts(store, repeats: int) -> dict:
    from reviewer.components.conflicts import ConflictQueue
    from reviewer.review_state import ReviewState

    view = ConflictQueue(state=ReviewState(store, reviewer="bench-conflicts"))
    return {"refresh": [ms(view.refresh) for _ in range(repeats)]}


def bench_signals(store, repeats: int) -> dict:
    """What the end of a campaign that wrote every trajectory of the store costs (triage.store_signals on
    all its spectra, the copy's stored signals dropped first), then the read a Stats opening makes of them;
    once each."""
    from reviewer.services import triage

    store.triage.clear_signals()  # the builder stores them, as campaigns do: this times that step
    return {"store_all": [ms(lambda: triage.store_signals(store, None))],
            "inputs_after": [ms(lambda: triage.triage_inputs(store))]}


def bench_stats(store, repeats: int) -> dict:
    import panel as pn
    from bokeh.document import Document

    from reviewer.components.stats_panel import StatsPanel
    from reviewer.review_state import ReviewState

    out: dict = {"make": [], "refresh": [], "models": []}
    for _ in range(repeats):
        t = time.perf_counter()
        panel = StatsPanel(state=ReviewState(store, reviewer="bench-stats"))
        t1 = time.perf_counter()
        panel.refresh()
        t2 = time.perf_counter()
        pn.panel(panel).get_root(Document())
        t3 = time.perf_counter()
        for key, value in zip(("make", "refresh", "models"), (t1 - t, t2 - t1, t3 - t2), strict=True):
            out[key].append(1000 * value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--part", default="switch,stats")
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    from reviewer.store import Store

    parts = {"switch": bench_switch, "label": bench_label, "conflicts": bench_conflicts, "stats": bench_stats,
             "signals": bench_signals}
    with tempfile.TemporaryDirectory(prefix="bench_server_parts_") as tmp:
        db = Path(tmp) / args.db.name
        shutil.copyfile(args.db, db)
        with Store(db) as store:
            for name in args.part.split(","):
                for key, times in parts[name](store, args.repeats).items():
                    print(f"{name}.{key}: median {statistics.median(times):.0f} ms, "
                          f"range {min(times):.0f}-{max(times):.0f} ms (n={len(times)})", flush=True)


if __name__ == "__main__":
    main()
