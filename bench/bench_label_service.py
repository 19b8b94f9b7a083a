"""Label writes through the review state and the label service (rules, store, consensus update), as
a key press makes them, on a seeded demo database; beside the bare store write for comparison.
Run: .venv/bin/python bench/bench_label_service.py [--n 200]"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def timed(fn, n: int) -> str:
    times = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        times.append(1000 * (time.perf_counter() - start))
    times.sort()
    return f"n={n} median {statistics.median(times):.2f} ms, p95 {times[int(0.95 * (n - 1))]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "labels.duckdb")
        seed_demo_if_empty(store)
        state = ReviewState(store, reviewer="bench")
        state.open_first()
        tid = state.item.trajectory_id
        print("score through the service (key 0-5):  ", timed(lambda i: state.writer.save("score", score=i % 6), args.n))
        print("verdict through the service (a / r):  ",
              timed(lambda i: state.writer.save("verdict", action="approve" if i % 2 else "reject"), args.n))
        print("bare store write (add_review):        ", timed(lambda i: store.labels.add_review(tid, "raw", "approve"), args.n))
        store.close()


if __name__ == "__main__":
    main()
