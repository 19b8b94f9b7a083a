"""Shared helpers of the browser benchmarks: a seeded database, Chromium, percentiles, machine info."""
from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]
sys.path.append(str(REPO / "tests"))

from served_app import CHROMIUM_ARGS, ServedApp, seeded_db  # noqa: E402


def launch(pw):
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("Debian's chromium is needed (apt-get install chromium)")
    return pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)


def summary(values_ms: list[float]) -> dict:
    ordered = sorted(values_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(ordered), "median": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"load average {load:.1f}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


__all__ = ["ServedApp", "launch", "machine", "seeded_db", "summary"]
