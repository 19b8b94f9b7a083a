"""What a campaign's plan (issue 47, items 1 and 6) costs a key press, on a seeded demo database: a verdict
written through the label service with no campaign, in a campaign without a plan, and in one with two
reviewers per item (the holders read in the verdict's transaction); and the queue's `n` and first page
with and without the plan's filter. Each kind is timed in turns, so that the machine's load falls on all
alike. On a checkout from before campaigns had plans (no reviewer.services.campaigns) it times the first two
and the open campaign's reads: the baseline (PYTHONPATH=that-checkout).

Run: .venv/bin/python bench/bench_campaign_plan.py [--n 200] [--without-plan]"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.items import find_campaign, trajectory
from reviewer.services.labels import LabelService
from reviewer.services.listing import QueueListing
from reviewer.store import Store


def summary(times: list[float]) -> str:
    times = sorted(times)
    return f"median {statistics.median(times):.2f} ms, p95 {times[int(0.95 * (len(times) - 1))]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--without-plan", action="store_true",
                        help="time only what a checkout from before plans can: to compare with its baseline")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        seed_demo_if_empty(store)
        ids = [r["id"] for r in sorted(store.trajectories.list_trajectories(task="verify"),
                                       key=lambda r: (r["created_at"], r["id"]))]
        store.sessions.create_session("open", "verdicts", ids, [])
        campaigns = {"none": None, "open": find_campaign(store, "open")}
        try:
            from reviewer.services.campaigns import create_campaign
        except ImportError:  # a checkout from before plans: the baseline
            create_campaign = None
        if create_campaign is not None and not args.without_plan:
            create_campaign(store, "planned", task="verify", reviewers=[f"r{i}" for i in range(4)], per_item=2)
            campaigns["planned"] = find_campaign(store, "planned")
        items = ids
        trajectories = {tid: trajectory(store, tid) for tid in items}
        labels, listing = LabelService(store), QueueListing(store)
        writes: dict[str, list[float]] = {k: [] for k in campaigns}
        read_kinds = [k for k in ("open", "planned") if k in campaigns]
        reads: dict[str, list[float]] = {f"{k} {what}": [] for k in read_kinds for what in ("n", "page")}
        for i in range(args.n):
            tid = items[i % len(items)]
            reviewer = f"r{(i // len(items)) % 2}"  # two reviewers on each item: the planned one stays within 2
            for kind, campaign in campaigns.items():
                start = time.perf_counter()
                labels.write_verdict(reviewer, trajectories[tid], "reject" if i % 2 else "approve", campaign=campaign)
                writes[kind].append(1000 * (time.perf_counter() - start))
            for kind in read_kinds:
                sid = campaigns[kind]["id"]
                start = time.perf_counter()
                listing.neighbour(tid, 1, "r3", session_id=sid, state="all")
                reads[f"{kind} n"].append(1000 * (time.perf_counter() - start))
                start = time.perf_counter()
                listing.page("r3", 0, 12, session_id=sid, state="all")
                reads[f"{kind} page"].append(1000 * (time.perf_counter() - start))
        store.close()
    print(f"verdict writes, n={args.n} each, {len(items)} items")
    for kind, times in writes.items():
        print(f"  campaign {kind:8s} {summary(times)}")
    print("queue reads for a reviewer with no verdicts")
    for kind, times in reads.items():
        print(f"  {kind:13s} {summary(times)}")


if __name__ == "__main__":
    main()
