"""Claim checking cost per trajectory step on the shared corpus (issue 9 target: <= 20 ms).

    .venv/bin/python bench/bench_claims.py [--every N]

Runs the rules policy for every kb task on every N-th corpus spectrum, then times
agents.claims.check_trajectory (a fresh Measurer per trajectory, so measurement caching across
trajectories does not flatter the figure). Prints ms per step and per trajectory, and the verdicts.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))

from shared_data import manifest_rows, spectra_dir

import kb
from agents.claims import check_trajectory, summarize
from agents.spectra import read_spectrum
from agents.vet import vet_spectrum


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=1, help="use every N-th spectrum of the manifest")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    base = spectra_dir()
    if base is None:
        sys.exit("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    steps = trajs = 0
    elapsed = 0.0
    counts = {"supported": 0, "contradicted": 0, "unverifiable": 0}
    for row in manifest_rows()[:: args.every]:
        path, _, target = row["file"].partition("#")
        try:
            spec = read_spectrum(base / path, target or None)
        except Exception as exc:
            print(f"skip {row['file']}: {exc}")
            continue
        for task_id in kb.tasks():
            traj = vet_spectrum(spec, task_id)
            t0 = time.perf_counter()
            results = check_trajectory(traj, spec)
            elapsed += time.perf_counter() - t0
            steps += len(traj.steps)
            trajs += 1
            for k, v in summarize(results).items():
                counts[k] += v
    print(f"{trajs} trajectories, {steps} steps: {1000 * elapsed / steps:.2f} ms per step, "
          f"{1000 * elapsed / trajs:.1f} ms per trajectory; claims {counts}")


if __name__ == "__main__":
    main()
