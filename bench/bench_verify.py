"""Time the FORMA visual interpreter and hypothesis generation per spectrum, and the top-1
redshift agreement (class and |dz| <= 0.01) with the survey pipeline, per class.

    .venv/bin/python bench/bench_verify.py [--limit N] [--redrock]

Uses the labelled rows of shared/data/spectra/MANIFEST.csv (official labels only) and the
Redrock templates in shared/data/redrock-templates. Results go into docs/benchmarks.md by hand.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.append(str(REPO / "tests"))  # appended: tests/agents must not shadow the agents package

from shared_data import manifest_rows, shared_data_dir, spectra_dir  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="every k-th labelled row so that about N are used")
    ap.add_argument("--redrock", action="store_true", help="also time the Redrock adapter (if installed)")
    args = ap.parse_args()

    from agents.spectra import blank_pipeline_labels, read_spectrum
    from agents.tools import redrock_adapter
    from agents.tools.features import detect_features, good_pixels
    from agents.tools.hypotheses import generate_hypotheses
    from agents.tools.templates import load_templates
    from agents.verify.evaluation import is_labelled, split_file

    tdir = str(shared_data_dir() / "redrock-templates")
    t0 = time.perf_counter()
    load_templates(tdir)
    print(f"template load: {time.perf_counter() - t0:.2f} s (once per process)")
    rows = [r for r in manifest_rows() if is_labelled(r)]
    if args.limit:
        rows = rows[:: max(1, len(rows) // args.limit)]
    engines = ["builtin"] + (["redrock"] if args.redrock and redrock_adapter.available() else [])
    stats = defaultdict(lambda: defaultdict(list))  # engine -> class -> [(t_vi, t_hyp, ok)]
    for r in rows:
        path, target = split_file(r["file"])
        spec = blank_pipeline_labels(read_spectrum(spectra_dir() / path, target))
        t0 = time.perf_counter()
        px = good_pixels(spec)
        feats = detect_features(px)
        t_vi = time.perf_counter() - t0
        for eng in engines:
            t0 = time.perf_counter()
            hyps = generate_hypotheses(px, feats, template_dir=tdir, engine=eng)
            t_h = time.perf_counter() - t0
            ok = bool(hyps) and hyps[0].spectype == r["class"] and abs(hyps[0].z - float(r["z"])) <= 0.01
            stats[eng][r["class"]].append((t_vi, t_h, ok))
    print(f"{len(rows)} labelled spectra")
    print("engine   class    n   VI ms (median)  hypotheses ms (median)  top-1 agreement")
    for eng, per in stats.items():
        for cls, vals in sorted(per.items()):
            vi = statistics.median(v[0] for v in vals) * 1e3
            hy = statistics.median(v[1] for v in vals) * 1e3
            acc = 100 * sum(v[2] for v in vals) / len(vals)
            print(f"{eng:<8} {cls:<7} {len(vals):4d}   {vi:8.1f}        {hy:8.1f}               {acc:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
