"""An answer only where the data can decide (issue 50, item 5): the rules policy on the shared corpus as
observed (per task: right, wrong, refused) and on real stars degraded to a low S/N per pixel (fixed-seed
Gaussian noise, ivar replaced: tests/degrade.py): how often each is answered YES, NO or refused.

    .venv/bin/python bench/bench_vet_snr.py [--seeds 10] [--json OUT] [--compare BEFORE.json]

The decision is the rules policy's (agents.tools.judgeable.assess, then agents.vet.evidence.evaluate:
what vet_spectrum answers with the rules backend, without recording a trajectory). --compare lists the
corpus spectra whose outcome changed against an earlier run's --json.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the repo first and tests/ last: tests/agents (a folder without __init__) must not shadow agents/
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))
from degrade import degrade  # noqa: E402
from shared_data import manifest_rows, spectra_dir  # noqa: E402

import kb  # noqa: E402
from agents.spectra import read_spectrum  # noqa: E402
from agents.tools.judgeable import assess  # noqa: E402
from agents.tools.measure import Arrays  # noqa: E402
from agents.vet.calibrate import truth  # noqa: E402
from agents.vet.evidence import evaluate  # noqa: E402

# stars answered YES as observed: the A2 stars of three LAMOST releases (task a), the SDSS DA white dwarf (wd)
DEGRADED = [("a", "lamost_astrospectro/spec-55862-B6212_sp01-010.fits.gz"),
            ("a", "lamost_junhui_ccf/spec-55859-F5907_sp04-075.fits.gz"),
            ("a", "lamost_learninglamost/spec-55862-B6212_sp06-137.fits"),
            ("wd", "sdss_wdtools/sample_spectrum.fits")]
SNRS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


def outcome(arrays: Arrays, task: dict, meta: dict) -> str:
    judged = assess(arrays, task, measured_noise=not meta.get("ivar_estimated"))
    if not judged.judgeable:
        return "unjudgeable"
    if judged.decided_no:  # the windows present decide it (vet_spectrum adds a witness leaf to the rule)
        return "NO"
    return evaluate(task, arrays)[1].answer


def corpus() -> dict:
    base, out = spectra_dir(), {}
    for row in manifest_rows():
        path, _, target = row["file"].partition("#")
        try:
            spec = read_spectrum(base / path, target or None)
            arrays = Arrays.from_spectrum(spec)
        except Exception:  # unreadable or refused by the reader: not part of any task's figures
            continue
        for tid, task in kb.tasks().items():
            t = truth(task, row)
            if t is not None:
                out[f"{tid}|{row['file']}"] = {"task": tid, "truth": "YES" if t else "NO",
                                               "outcome": outcome(arrays, task, spec.meta)}
    return out


def summary(results: dict) -> dict:
    table: dict = {}
    for r in results.values():
        c = table.setdefault(r["task"], Counter())
        c["right" if r["outcome"] == r["truth"] else "refused" if r["outcome"] == "unjudgeable" else "wrong"] += 1
    return {k: dict(v) for k, v in sorted(table.items())}


def degraded(seeds: int) -> dict:
    base, out = spectra_dir(), {}
    for tid, rel in DEGRADED:
        spec = read_spectrum(base / rel)
        task = kb.task(tid)
        row = {"observed": outcome(Arrays.from_spectrum(spec), task, spec.meta)}
        for snr in SNRS:
            row[str(snr)] = dict(Counter(outcome(Arrays.from_spectrum(degrade(spec, snr, seed)), task, {})
                                         for seed in range(seeds)))
        out[f"{tid}|{rel}"] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = {"when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "corpus": corpus(),
           "degraded": degraded(args.seeds)}
    res["summary"] = summary(res["corpus"])
    res["wall_s"] = round(time.perf_counter() - t0, 1)
    print(f"# {res['when']}, {res['wall_s']} s")
    print("corpus (as observed), per task:")
    for tid, c in res["summary"].items():
        print(f"  {tid}: {c}")
    print(f"degraded ({args.seeds} seeds per S/N):")
    for key, row in res["degraded"].items():
        print(f"  {key}: observed {row['observed']}")
        for snr in SNRS:
            print(f"    S/N {snr}: {row[str(snr)]}")
    if args.compare:
        before = json.loads(args.compare.read_text())["corpus"]
        changed = [(k, before[k]["outcome"], r["outcome"], r["truth"]) for k, r in res["corpus"].items()
                   if k in before and before[k]["outcome"] != r["outcome"]]
        print(f"changed against {args.compare.name}: {len(changed)}")
        for k, b, a, t in changed:
            print(f"  {k}: {b} -> {a} (truth {t})")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
