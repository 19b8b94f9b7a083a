"""The claim checker on verify's own text (issue 50, item 7): every labelled spectrum of the shared corpus
verified (or the trajectories a previous run saved), each trajectory's claims checked, and the right
answers (agents.verify.evaluation.Row.agrees: class, and z within the class's km/s tolerance) that
carry a contradicted claim listed with the claims. A right answer should carry none: its rejected
rivals are not its claims, and Earth's atmosphere is no evidence against a star at rest.

    .venv/bin/python bench/bench_claims_verify.py [--save trajs.jsonl.gz | --trajectories trajs.jsonl.gz]
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from shared_data import manifest_rows, shared_data_dir, spectra_dir  # noqa: E402


def _verified(save: str | None):
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum
    from agents.verify.evaluation import is_labelled, split_file

    tdir = str(shared_data_dir() / "redrock-templates")
    with gzip.open(save or "/dev/null", "wt") as out:
        for r in manifest_rows():
            if not is_labelled(r):
                continue
            path, target = split_file(r["file"])
            traj = verify_spectrum(read_spectrum(spectra_dir() / path, target), template_dir=tdir)
            d = {"file": r["file"], "class": r["class"], "z": float(r["z"]), "survey": r["survey"],
                 "traj": json.loads(traj.to_json())}
            if save:
                out.write(json.dumps(d) + "\n")
            yield d


def _saved(path: str):
    with gzip.open(path, "rt") as fh:
        for line in fh:
            yield json.loads(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", help="write the verify trajectories here (JSON lines, gzip)")
    ap.add_argument("--trajectories", help="check these saved trajectories instead of verifying again")
    args = ap.parse_args()
    from agents.claims import check_trajectory
    from agents.spectra import read_spectrum
    from agents.trajectory import Trajectory
    from agents.verify.evaluation import Row, split_file

    start = time.perf_counter()
    n = right = right_bad = claims = 0
    for d in _saved(args.trajectories) if args.trajectories else _verified(args.save):
        n += 1
        traj = Trajectory.model_validate(d["traj"])
        b = traj.outcome.get("brief") or {}
        if not Row(d["file"], d["class"], d["z"], b.get("type"), b.get("redshift"), "LOW").agrees:
            continue
        right += 1
        path, target = split_file(d["file"])
        results = check_trajectory(traj, read_spectrum(spectra_dir() / path, target))
        claims += len(results)
        bad = [r for r in results if r.verdict == "contradicted"]
        if bad:
            right_bad += 1
            print(f"{d['file']} ({d['class']}, answered {b.get('type')} z={b.get('redshift')}):")
            for r in bad:
                print(f"    step {r.step_index}: {r.claim.text!r}: {r.reason[:140]}")
    print(f"{n} labelled spectra, {right} right answers ({claims} claims checked); right answers with a "
          f"contradicted claim: {right_bad}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
