"""Where a vet campaign's time goes, per spectrum, for docs/benchmarks.md (issue 22, item 2):
read_spectrum, vet_spectrum (task a), check_trajectory, and storing the trajectories with their claim
results in groups of 32 (save_trajectories + save_claims_of in one transaction, as the vet command's
writer does), on every LAMOST file of the corpus, one process, imports warm (the second of two passes).

    PYTHONPATH=TREE .venv/bin/python bench/bench_campaign_parts.py [--limit N]

Run it with PYTHONPATH set to another checkout (a git worktree of an earlier commit) to time that
checkout's code the same way; alternate the two for a before/after on a shared machine.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if not os.environ.get("PYTHONPATH"):  # this checkout's code (with PYTHONPATH=TREE: that tree's)
    sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # last: tests/agents (no __init__) must not shadow agents/
from shared_data import manifest_rows, spectra_dir  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    import agents
    from agents.claims import check_trajectory
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum
    from reviewer.services.claims import claim_rows
    from reviewer.services.ingest import ingest_paths
    from reviewer.store import Store

    base = spectra_dir()
    files = list(dict.fromkeys(str(base / r["file"]) for r in manifest_rows()
                               if "LAMOST" in r["survey"] and "#" not in r["file"]))[:args.limit]
    parts = {}
    for _ in range(2):  # the first pass warms the imports and caches
        parts = {"read": 0.0, "vet": 0.0, "check": 0.0}
        done = []
        for f in files:
            t0 = time.perf_counter()
            spec = read_spectrum(f)
            t1 = time.perf_counter()
            traj = vet_spectrum(spec, "a", "rules")
            t2 = time.perf_counter()
            results = check_trajectory(traj, spec)
            parts["read"] += t1 - t0
            parts["vet"] += t2 - t1
            parts["check"] += time.perf_counter() - t2
            done.append((traj, results))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(str(Path(tmp) / "parts.duckdb"))
        ids = ingest_paths(store, files, progress=False, with_file_ids=True).file_ids
        for f, (traj, _) in zip(files, done, strict=True):
            traj.spectrum_id = ids[f][0]  # the stored spectrum, as `specreview vet` gives it
        t0 = time.perf_counter()
        for i in range(0, len(done), 32):
            group = done[i:i + 32]
            with store.transaction():
                store.trajectories.save_trajectories([traj for traj, _ in group])
                store.claims.save_claims_of("bench", [(traj.id, claim_rows(res)) for traj, res in group])
        parts["store"] = time.perf_counter() - t0
        store.close()
    tree = Path(agents.__file__).resolve().parents[1]
    print(f"{datetime.now():%Y-%m-%d %H:%M}, {platform.machine()} python {platform.python_version()}, "
          f"code of {tree.name}, {len(files)} LAMOST files: "
          + ", ".join(f"{k} {1000 * v / len(files):.2f}" for k, v in parts.items()) + " ms a spectrum")


if __name__ == "__main__":
    main()
