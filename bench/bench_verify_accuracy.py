"""FORMA verification over every spectrum of the shared corpus with an official survey label: agreement
with the survey pipeline (class, and z within the class's tolerance in km/s: agents.verify.evaluation) per
credibility tier, per gate (coverage), per class and per survey with the |dv| statistics - the figures
the acceptance test asserts. Uses the shared Redrock templates when present,
else the bundled derived ones.

Run: .venv/bin/python bench/bench_verify_accuracy.py [--bundled]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from shared_data import manifest_rows, shared_data_dir, spectra_dir  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundled", action="store_true", help="use the templates bundled in kb/templates")
    args = parser.parse_args()
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum
    from agents.verify.evaluation import Row, format_summary, is_labelled, split_file, summarise

    base = spectra_dir()
    if base is None:
        sys.exit("shared data not found (set SPECREVIEW_SHARED_DATA)")
    templates = None if args.bundled else str(shared_data_dir() / "redrock-templates")
    rows, start = [], time.perf_counter()
    for r in (r for r in manifest_rows() if is_labelled(r)):
        path, target = split_file(r["file"])
        brief = verify_spectrum(read_spectrum(base / path, target), template_dir=templates).outcome["brief"]
        rows.append(Row(r["file"], r["class"], float(r["z"]), brief["type"], brief["redshift"], brief["credibility"],
                        redshift_rms=brief.get("redshift_rms"), survey=r["survey"]))
    elapsed = time.perf_counter() - start
    print(f"templates: {'bundled (kb/templates)' if args.bundled else 'shared Redrock folder'}; "
          f"{elapsed:.0f} s for {len(rows)} spectra ({1000 * elapsed / len(rows):.0f} ms each)")
    print(format_summary(summarise(rows)))


if __name__ == "__main__":
    main()
