"""Store write latency: single-label writes as the app makes them (one autocommit insert on the
thread's cursor), alone and from several threads at once, plus trajectory save/load.

    .venv/bin/python bench/bench_store.py [--n 2000] [--threads 4] [--ingest] [--dir DIR]

Prints median / p95 / max in ms. Uses a temporary DuckDB file on disk (commits are fsync'd, so the
disk's sync latency is most of a write). `--ingest` also times `ingest_paths` over the shared
real-spectra corpus, first run and re-run.
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

from agents.trajectory import AgentInfo, Trajectory, Verdict
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1e3 for s in seconds)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(f"{label:<44} n={len(ms):<6} median {statistics.median(ms):6.2f} ms   "
          f"p95 {p95:6.2f} ms   max {ms[-1]:7.2f} ms")


def single_writes(store: Store, n: int) -> None:
    kinds = [
        ("add_review", lambda i: store.labels.add_review(f"traj-{i % 50}", "ann", "approve", comment="ok")),
        ("add_rating", lambda i: store.labels.add_rating(f"traj-{i % 50}", "ann", i % 6, "v1")),
        ("add_annotation", lambda i: store.labels.add_annotation(f"traj-{i % 50}", "ann", "note", step_idx=i % 9,
                                                                 flags=["wrong_tool_args"])),
        ("add_vi_label", lambda i: store.labels.add_vi_label(f"spec-{i % 50}", "ann", quality=i % 5, issues="R", z=0.1)),
    ]
    for name, write in kinds:
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            write(i)
            times.append(time.perf_counter() - t0)
        summary(f"{name} (1 thread)", times)


def threaded_writes(store: Store, n: int, threads: int) -> None:
    times: list[float] = []
    lock = threading.Lock()

    def work(k: int) -> None:
        local = []
        for i in range(n // threads):
            t0 = time.perf_counter()
            store.labels.add_rating(f"traj-{i % 50}", f"rev-{k}", i % 6, "v1")
            local.append(time.perf_counter() - t0)
        with lock:
            times.extend(local)

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    t0 = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    wall = time.perf_counter() - t0
    summary(f"add_rating ({threads} threads at once)", times)
    print(f"{'':<44} {len(times) / wall:.0f} writes/s overall")


def trajectories(store: Store, n: int) -> None:
    saves, loads = [], []
    for i in range(n):
        traj = Trajectory(spectrum_id=f"spec-{i}", task="a", agent=AgentInfo(name="vet", backend="rules"))
        traj.add("prompt", text="task text", image_sha=traj.add_image(bytes([i % 256]) * 30_000 + str(i).encode()))
        for k in range(8):
            traj.add("tool_call", tool_name="zoom", tool_args={"wave_min": 6400 + k, "wave_max": 6700})
            traj.add("tool_result", text=f"EW {k}", data={"ew": k * 1.5})
        traj.add("verdict", verdict=Verdict(who="rules", value="KEEP"))
        traj.add("answer", answer={"answer": "YES"})
        t0 = time.perf_counter()
        store.trajectories.save_trajectory(traj)
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.trajectories.load_trajectory(traj.id)
        loads.append(time.perf_counter() - t0)
    summary("save_trajectory (19 steps + 1 image)", saves)
    summary("load_trajectory (19 steps)", loads)


def ingest_corpus(store: Store) -> None:
    from shared_data import spectra_dir

    folder = spectra_dir()
    if folder is None:
        print("ingest: shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
        return
    for run in ("first run", "re-run"):
        t0 = time.perf_counter()
        result = ingest_paths(store, [folder], progress=False)
        print(f"ingest shared corpus, {run:<9}: {time.perf_counter() - t0:6.2f} s  files {result.files_seen}  "
              f"added {result.added}  already {result.skipped_existing}  failed {len(result.failed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--ingest", action="store_true", help="also time ingesting the shared corpus")
    parser.add_argument("--dir", default=None,
                        help="folder for the temporary database (e.g. /dev/shm to leave out disk sync)")
    args = parser.parse_args()
    print(f"{date.today()}  {platform.node()}  {platform.processor() or platform.machine()}  "
          f"python {platform.python_version()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"database folder: {tmp}")
        store = Store(Path(tmp) / "bench.duckdb")
        single_writes(store, args.n)
        threaded_writes(store, args.n, args.threads)
        trajectories(store, max(args.n // 10, 20))
        if args.ingest:
            ingest_corpus(store)
        store.close()


if __name__ == "__main__":
    main()
