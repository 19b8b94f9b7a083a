"""The rules agent's measurement claims judged two ways (issue 50, item 7): by the function that made
them (agents.tools.measure through the Monte-Carlo Measurer: what the checker did before, a circular
check) and by the second method (agents.claims.second: another continuum and estimator, what it does
now). Every spectrum of the shared corpus (or every --step-th), every vet task: the claims, how many
each way supports, where they disagree, and how far the second method's value lies from the agent's
number in units of its tolerance.

    .venv/bin/python bench/bench_claims_second.py [--step N] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from shared_data import manifest_rows, spectra_dir  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1, help="every N-th manifest row")
    ap.add_argument("--json", help="write the disagreements here")
    args = ap.parse_args()
    import numpy as np

    import kb
    from agents.claims import Measurer, extract_claims
    from agents.claims.check import Context, _check_measure, _kb_value, _rounding
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    n = same_ok = second_ok = both = 0
    disagree, ratios, t_second, failed = [], [], 0.0, []
    start = time.perf_counter()
    rows = manifest_rows()[:: args.step]
    for row in rows:
        path, _, target = row["file"].partition("#")
        try:
            spec = read_spectrum(spectra_dir() / path, target or None)
        except Exception as exc:  # a file the reader refuses is not this bench's concern
            print(f"skip {row['file']}: {exc}")
            continue
        measurer = Measurer.from_spectrum(spec)
        for task in kb.tasks():
            try:
                traj = vet_spectrum(spec, task)
            except Exception as exc:  # the agent's failure, not the checker's: counted, left out
                failed.append(f"{row['file']} [{task}]: {type(exc).__name__}")
                continue
            ctx = Context(measurer, z=0.0, z_source="stellar task", task=task)
            for step in traj.steps:
                if step.kind not in ("think", "answer") or not step.text:
                    continue
                for claim in extract_claims(step.text):
                    if claim.kind != "measure":
                        continue
                    old = _kb_value(claim.quantity, ctx)
                    if old.value is None:
                        continue
                    ok_old = abs(claim.value - old.value) <= _rounding(claim) + 3.0 * (old.sigma or 0.0)
                    t0 = time.perf_counter()
                    new = _check_measure(claim, ctx)
                    t_second += time.perf_counter() - t0
                    if new.verdict == "unverifiable":
                        continue
                    ok_new = new.verdict == "supported"
                    n += 1
                    same_ok += ok_old
                    second_ok += ok_new
                    both += ok_old == ok_new
                    if new.tolerance:
                        ratios.append(abs(claim.value - new.measured) / new.tolerance)
                    if ok_old != ok_new:
                        disagree.append({"file": row["file"], "task": task, "claim": claim.text,
                                         "same_function": old.value, "second": new.measured,
                                         "tolerance": new.tolerance, "reason": new.reason})
    elapsed = time.perf_counter() - start
    r = np.array(ratios)
    print(f"{len(rows)} spectra x {len(kb.tasks())} tasks: {n} measurement claims judged both ways")
    print(f"supported by the agent's own function: {same_ok}; by the second method: {second_ok}; "
          f"same verdict: {both} ({100 * both / max(n, 1):.2f} %)")
    if r.size:
        print(f"|claim - second| / tolerance: median {np.median(r):.3f}, p99 {np.percentile(r, 99):.3f}, "
              f"max {r.max():.3f}")
    print(f"second-method check: {1000 * t_second / max(n, 1):.2f} ms a claim; whole run {elapsed:.0f} s")
    if failed:
        print(f"vet_spectrum failed on {len(failed)} (spectrum, task) pairs, left out: {failed[:3]}")
    for d in disagree[:20]:
        print(f"  {d['file']} [{d['task']}] {d['claim']}: second {d['second']} (tol {d['tolerance']})")
    if args.json:
        Path(args.json).write_text(json.dumps(disagree, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
