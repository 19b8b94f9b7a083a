"""Benchmark: agents.tools.render against a straightforward Spec-o3 renderer, in the same run.

Renders a full 3909-pixel LAMOST spectrum and a 300 Å zoom (6400-6700 Å) with both renderers,
interleaved (so machine load hits both alike), after a warm-up, and prints a Markdown table of
median / p95 wall-clock milliseconds, median CPU milliseconds of this process (less sensitive to
other work on a shared machine) and the speed-up, plus the machine and the date.

    .venv/bin/python bench/bench_render.py [--repeats 30] [--file PATH]

Goals (issue 2): <= 20 ms median and >= 5x faster than the straightforward renderer.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# The repository root first: otherwise tests/agents (a plain folder) shadows the agents package.
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE.parent / "tests")]

from shared_data import spectra_dir  # noqa: E402
from spec_o3_reference_render import plot_spectrum  # noqa: E402

from agents.tools.render import render_arrays  # noqa: E402

DEFAULT_FILE = "lamost_astrospectro/spec-55862-B6202_sp01-001.fits.gz"  # 3909 pixels
ZOOM = (6400.0, 6700.0)


def load_lamost(path: Path):
    """Wavelength (Å) and flux of a LAMOST LRS primary-image file, read with astropy directly."""
    from astropy.io import fits

    with fits.open(path) as hdul:
        header, image = hdul[0].header, np.asarray(hdul[0].data, dtype=float)
    wavelength = 10 ** (header["COEFF0"] + header["COEFF1"] * np.arange(image.shape[1]))
    return wavelength, image[0]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--file", type=Path, help="a LAMOST LRS .fits[.gz] (default: shared data)")
    args = parser.parse_args(argv)

    path = args.file
    if path is None:
        base = spectra_dir()
        if base is None:
            print("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA or pass --file)")
            return 2
        path = base / DEFAULT_FILE
    wavelength, flux = load_lamost(path)
    title = f"Spectrum: {path.name}"
    cases = {
        f"full spectrum ({wavelength.size} px)": dict(),
        f"zoom {ZOOM[0]:.0f}-{ZOOM[1]:.0f} Å": dict(wave_min=ZOOM[0], wave_max=ZOOM[1]),
    }
    renderers = {
        "render_arrays": lambda kw: render_arrays(wavelength, flux, title=title, **kw),
        "reference": lambda kw: plot_spectrum(wavelength, flux, title=title, **kw),
    }
    times = {(case, name): [] for case in cases for name in renderers}
    cpu_times = {(case, name): [] for case in cases for name in renderers}
    sizes = {}
    for _ in range(args.warmup):
        for case, kw in cases.items():
            for name, render in renderers.items():
                sizes[case, name] = len(render(kw))
    for _ in range(args.repeats):
        for case, kw in cases.items():
            for name, render in renderers.items():
                start, cpu_start = time.perf_counter(), time.process_time()
                render(kw)
                times[case, name].append((time.perf_counter() - start) * 1000)
                cpu_times[case, name].append((time.process_time() - cpu_start) * 1000)

    import matplotlib

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"Render benchmark, {datetime.datetime.now().astimezone().isoformat(timespec='minutes')}")
    print(f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load}; Python {platform.python_version()}, "
          f"matplotlib {matplotlib.__version__}, numpy {np.__version__}")
    print(f"File: {path.name}; {args.repeats} interleaved repeats after {args.warmup} warm-up rounds\n")
    print("| view | renderer | median ms | p95 ms | median CPU ms | PNG bytes | speed-up (median) |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        ref_median = float(np.median(times[case, "reference"]))
        for name in renderers:
            values = np.array(times[case, name])
            median = float(np.median(values))
            speedup = f"{ref_median / median:.1f}x" if name == "render_arrays" else "1.0x"
            cpu = float(np.median(cpu_times[case, name]))
            print(f"| {case} | {name} | {median:.1f} | {np.percentile(values, 95):.1f} | {cpu:.1f} | "
                  f"{sizes[case, name]:,} | {speedup} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
