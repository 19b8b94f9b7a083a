"""Median time of agents.spectra.read_spectrum per format, as a Markdown table.

    python bench/bench_read.py [--data DIR] [--repeats 50]

DIR is the shared spectra folder (default: found through tests/shared_data.py). One
representative real file per format; the first read of each is a warm-up (not timed).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(1, str(REPO / "tests"))

# (format label, file relative to the spectra folder, target)
CASES = [
    ("lamost-lrs-image (.fits)", "lamost_sbc/spec-58575-HD103621N361936B01_sp03-010.fits", None),
    ("lamost-lrs-image (.fits.gz)", "lamost_astrospectro/spec-55862-B6202_sp01-001.fits.gz", None),
    ("lamost-mrs", "lamost_laspec/med-58408-TD230151N343645T01_sp01-015.fits", None),
    ("sdss-spec (legacy)", "sdss_gelato/spec-0295-51585-0596.fits", None),
    ("sdss-spec (BOSS)", "sdss_wdtools/sample_spectrum.fits", None),
    ("desi-coadd (1 target, redrock labels)", "desi_fastspecfit/coadd-4-80613-thru20210324.fits", None),
    ("desi-coadd (5 targets)", "desi_specutils/coadd-5-169-thru20210419.fits", "39633300968442591"),
    ("desi-spectra (compressed masks)", "desi_specutils/spectra-5-169-thru20210419.fits",
     "39633300968442591"),
    ("pickles-ascii", "pickles_pyhdust/m0iii.dat", None),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="shared spectra folder (holds MANIFEST.csv)")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    data = args.data
    if data is None:
        from shared_data import spectra_dir
        data = spectra_dir()
    if data is None or not (data / "MANIFEST.csv").is_file():
        sys.exit("shared spectra not found: pass --data DIR")

    t0 = time.perf_counter()
    from agents.spectra import read_spectrum, write_csv, write_fits
    import_ms = (time.perf_counter() - t0) * 1000

    import tempfile
    rows = []
    tmp = Path(tempfile.mkdtemp())
    lamost = read_spectrum(data / CASES[0][1])
    write_csv(lamost, tmp / "export.csv")
    write_fits(lamost, tmp / "export.fits")
    cases = [*CASES, ("ascii-table (write_csv export)", tmp / "export.csv", None),
             ("specreview-table (write_fits export)", tmp / "export.fits", None)]
    for label, rel, target in cases:
        path = data / rel
        read_spectrum(path, target=target)
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            read_spectrum(path, target=target)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        rows.append((label, path.stat().st_size / 1024, statistics.median(times),
                     times[int(0.95 * (len(times) - 1))]))

    print(f"read_spectrum, median of {args.repeats} reads after one warm-up "
          f"({platform.node()}, Python {platform.python_version()}, {date.today()}; "
          f"`import agents.spectra` {import_ms:.0f} ms)\n")
    print("| format | file KiB | median ms | p95 ms |")
    print("|---|---:|---:|---:|")
    for label, kib, med, p95 in rows:
        print(f"| {label} | {kib:.0f} | {med:.2f} | {p95:.2f} |")


if __name__ == "__main__":
    main()
