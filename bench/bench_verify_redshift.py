"""Redshift accuracy of verify in velocity, and the honesty of its stated errors (issue 50, items 1-2).

Every GALAXY and QSO of the shared corpus with a survey redshift (agents.verify.evaluation.is_labelled)
is verified from its flux; for each: dv = c (z - z_cat) / (1 + z_cat) in km/s, the stated 1-sigma
(brief redshift_rms, in km/s) and the credibility. Summaries: |dv| median and p90, the fraction of
|dv| <= stated sigma (coverage: honest errors cover ~68 %), per split. The split is fixed: a spectrum
is held out when crc32 of its manifest `file` entry is divisible by 3 (`held_out`), so the rules
were tuned on the other two thirds.

    .venv/bin/python bench/bench_verify_redshift.py [--json out.json] [--only SUBSTRING]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from shared_data import manifest_rows, shared_data_dir, spectra_dir  # noqa: E402

C_KMS = 299792.458


def held_out(entry: str) -> bool:
    return zlib.crc32(entry.encode()) % 3 == 0


def summary(rows: list[dict]) -> str:
    if not rows:
        return "n 0"
    answered = [r for r in rows if r["z"] is not None]
    adv = sorted(abs(r["dv"]) for r in answered)
    cov = [abs(r["dv"]) <= r["sigma"] for r in answered if r["sigma"]]
    mh = [abs(r["dv"]) for r in answered if r["cred"] in ("HIGH", "MEDIUM")]
    p90 = adv[min(len(adv) - 1, round(0.9 * (len(adv) - 1)))] if adv else float("nan")
    cat = sum(d > 1000 for d in adv)
    return (f"n {len(rows)}, with z {len(answered)}; |dv| > 1000 km/s {cat}; |dv| median {statistics.median(adv):.0f} km/s, "
            f"p90 {p90:.0f} km/s; 1-sigma coverage {100 * sum(cov) / max(len(cov), 1):.0f} % "
            f"({sum(cov)}/{len(cov)}); MEDIUM+HIGH {len(mh)}, of which within 50 km/s "
            f"{sum(d <= 50 for d in mh)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the per-spectrum rows here")
    ap.add_argument("--only", help="only manifest entries containing this")
    args = ap.parse_args()
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum
    from agents.verify.evaluation import is_labelled, split_file

    tdir = str(shared_data_dir() / "redrock-templates")
    out = []
    for r in manifest_rows():
        if not is_labelled(r) or r["class"] not in ("GALAXY", "QSO"):
            continue
        if args.only and args.only not in r["file"]:
            continue
        path, target = split_file(r["file"])
        spec = read_spectrum(spectra_dir() / path, target)
        t0, c0 = time.perf_counter(), time.process_time()
        b = verify_spectrum(spec, template_dir=tdir).outcome["brief"]
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        zc = float(r["z"])
        z = b["redshift"]
        row = {"file": r["file"], "class": r["class"], "z_cat": zc, "type": b["type"], "z": z,
               "dv": None if z is None else C_KMS * (z - zc) / (1 + zc),
               "sigma": None if b["redshift_rms"] is None else C_KMS * b["redshift_rms"] / (1 + zc),
               "cred": b["credibility"], "held_out": held_out(r["file"]), "seconds": round(dt, 3),
               "cpu_seconds": round(cpu, 3)}
        out.append(row)
        dv = "-" if row["dv"] is None else f"{row['dv']:+8.0f}"
        sg = "-" if row["sigma"] is None else f"{row['sigma']:6.0f}"
        print(f"{'H' if row['held_out'] else 'T'} {r['class']:<6} {zc:8.5f} {b['type']:<7} dv {dv} "
              f"sigma {sg} {b['credibility']:<6} {dt:5.2f}s {r['file']}", flush=True)
    print("all      :", summary(out))
    print("tuned    :", summary([r for r in out if not r["held_out"]]))
    print("held out :", summary([r for r in out if r["held_out"]]))
    for cls in ("GALAXY", "QSO"):
        print(f"{cls:<9}:", summary([r for r in out if r["class"] == cls]))
    print(f"verify time per spectrum: median {1e3 * statistics.median(r['seconds'] for r in out):.0f} ms wall, "
          f"{1e3 * statistics.median(r['cpu_seconds'] for r in out):.0f} ms CPU "
          f"(total CPU {sum(r['cpu_seconds'] for r in out):.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
