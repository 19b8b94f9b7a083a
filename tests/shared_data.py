"""Locate the workplace's shared real-data corpus (`shared/data`) from a checkout or a clone.

Search order: $SPECREVIEW_SHARED_DATA; `shared/data` beside or inside the repository root; the
same beside the repository this clone was made from (CI clones main into a temporary folder).
Used by the tests and the bench scripts; the product itself never needs it.
"""
from __future__ import annotations

import csv
import subprocess
from functools import lru_cache
from pathlib import Path

from agents.settings import SHARED_DATA

REPO_ROOT = Path(__file__).resolve().parents[1]


def _origin_dir() -> Path | None:
    try:
        url = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if url.startswith("file://"):
        url = url[len("file://"):]
    return Path(url) if url and Path(url).is_dir() else None


@lru_cache(maxsize=1)
def shared_data_dir() -> Path | None:
    candidates = []
    if SHARED_DATA.is_set():
        candidates.append(Path(SHARED_DATA.raw()))
    candidates += [REPO_ROOT.parent / "shared" / "data", REPO_ROOT / "shared" / "data"]
    origin = _origin_dir()
    if origin is not None:
        candidates += [origin.resolve().parent / "shared" / "data", origin / "shared" / "data"]
    for cand in candidates:
        if (cand / "spectra" / "MANIFEST.csv").is_file():
            return cand.resolve()
    return None


def spectra_dir() -> Path | None:
    base = shared_data_dir()
    return base / "spectra" if base else None


def manifest_rows() -> list[dict]:
    base = spectra_dir()
    if base is None:
        return []
    with open(base / "MANIFEST.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# The manifest names SDSS's BOSS and eBOSS spectra by the data release that served them ("SDSS DR16
# (BOSS)"); readers name the survey that took them, from the SPECOBJ/SPALL row (agents/spectra/sdss.py):
# BOSS spectra are SDSS-III BOSS in every later release, eBOSS's SDSS-IV eBOSS.
_RELEASE_SURVEYS = {"(BOSS)": "SDSS-III BOSS", "(eBOSS)": "SDSS-IV eBOSS"}


def survey_matches(manifest_survey: str, reader_survey: str) -> bool:
    """Whether a reader's survey name is the manifest's: its prefix (the documented rule: "LAMOST-LRS"
    for "LAMOST-LRS DR7"), or the survey an SDSS release's "(BOSS)" / "(eBOSS)" names."""
    if manifest_survey.startswith(reader_survey):
        return True
    release = manifest_survey.startswith("SDSS DR") and manifest_survey.rsplit(" ", 1)[-1]
    return _RELEASE_SURVEYS.get(release or "") == reader_survey
