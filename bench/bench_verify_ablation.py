"""Counterfactual ablation of verify's answers (issue 50, item 4): erasing a strong line that carried an
answer must reject or defer it.

Every GALAXY and QSO of the shared corpus with a survey redshift (agents.verify.evaluation.is_labelled)
is verified from its flux. An answer that is accepted (credibility MEDIUM or HIGH, no human review
asked) names its strong lines (agents.verify.ablation.strong_lines: confirmed, S/N >= 10) and,
among them, those that carried it (carrying_lines: without the line the rest's joint z moves by more
than the stated 1-sigma, fewer than three credible key lines remain, it was a QSO's only broad line,
or it is the strongest line); each strong line is erased in turn (agents.verify.ablation.line_range / remove_range, as
`specreview ablate --remove-range` does) and the spectrum verified again. The outcome
(agents.verify.ablation.outcome) is 'deferred' (LOW or human review), 'rejected' (another class or
z) or 'kept'. Reported: the answers accepted, and of the ablations (every carrying line, and the
strongest line alone) how many were rejected or deferred, per class and per split (held out:
crc32 of the manifest entry % 3 == 0, as bench/bench_verify_redshift.py).

    .venv/bin/python bench/bench_verify_ablation.py [--json out.json] [--only SUBSTRING]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from shared_data import manifest_rows, shared_data_dir, spectra_dir  # noqa: E402


def held_out(entry: str) -> bool:
    return zlib.crc32(entry.encode()) % 3 == 0


def summary(rows: list[dict]) -> str:
    acc = [r for r in rows if r["accepted"]]
    every = [a for r in acc for a in r["ablations"]]
    abl = [a for a in every if a["carrying"]]
    first = [r["ablations"][0] for r in acc if r["ablations"]]
    bad = [a for a in abl if a["outcome"] != "kept"]
    bad1 = [a for a in first if a["outcome"] != "kept"]
    bad_all = [a for a in every if a["outcome"] != "kept"]

    def pct(k, n):
        return f"{100 * k / n:.0f} %" if n else "-"

    return (f"n {len(rows)}, accepted {len(acc)} (with a strong line {len(first)}); a carrying line erased: "
            f"rejected or deferred {len(bad)}/{len(abl)} ({pct(len(bad), len(abl))}; rejected "
            f"{sum(a['outcome'] == 'rejected' for a in abl)}); the strongest line: {len(bad1)}/{len(first)} "
            f"({pct(len(bad1), len(first))}); any strong line: {len(bad_all)}/{len(every)} "
            f"({pct(len(bad_all), len(every))})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the per-spectrum rows here")
    ap.add_argument("--only", help="only manifest entries containing this")
    args = ap.parse_args()
    from agents.spectra import blank_pipeline_labels, read_spectrum
    from agents.tools.features import good_pixels
    from agents.verify.ablation import carrying_lines, line_range, outcome, remove_range, strong_lines
    from agents.verify.evaluation import is_labelled, split_file
    from agents.verify.graph import verify_pixels

    tdir = str(shared_data_dir() / "redrock-templates")
    out = []
    t_start = time.perf_counter()
    for r in manifest_rows():
        if not is_labelled(r) or r["class"] not in ("GALAXY", "QSO"):
            continue
        if args.only and args.only not in r["file"]:
            continue
        path, target = split_file(r["file"])
        px = good_pixels(blank_pipeline_labels(read_spectrum(spectra_dir() / path, target)))
        before = verify_pixels(px, {}, template_dir=tdir)
        b = before.outcome["brief"]
        accepted = b["credibility"] in ("MEDIUM", "HIGH") and b["human_review"] == "No"
        row = {"file": r["file"], "class": r["class"], "held_out": held_out(r["file"]), "accepted": accepted,
               "before": {k: b[k] for k in ("type", "redshift", "credibility", "human_review")}, "ablations": []}
        if accepted:
            lines = strong_lines(before)
            carrying = {ln["name"] for ln in carrying_lines(before)}
            for ln in lines:
                lo, hi = line_range(ln, lines)
                after = verify_pixels(remove_range(px, lo, hi, ln["kind"]), {}, template_dir=tdir)
                a = after.outcome["brief"]
                row["ablations"].append({"line": ln["name"], "snr": ln["snr"], "carrying": ln["name"] in carrying,
                                         "range": [round(lo, 1), round(hi, 1)],
                                         "outcome": outcome(before, after),
                                         "after": {k: a[k] for k in ("type", "redshift", "credibility",
                                                                     "human_review")}})
        out.append(row)
        abl = ", ".join(f"{a['line']}{'*' if a['carrying'] else ''}:{a['outcome']}({a['after']['credibility']})"
                        for a in row["ablations"])
        print(f"{'H' if row['held_out'] else 'T'} {r['class']:<6} {b['type']:<7} {b['credibility']:<6} "
              f"review {b['human_review']:<3} {r['file']}  {abl}", flush=True)
    print("all      :", summary(out))
    print("tuned    :", summary([r for r in out if not r["held_out"]]))
    print("held out :", summary([r for r in out if r["held_out"]]))
    for cls in ("GALAXY", "QSO"):
        print(f"{cls:<9}:", summary([r for r in out if r["class"] == cls]))
    print(f"wall {time.perf_counter() - t_start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
