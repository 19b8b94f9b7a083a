"""`specreview ingest --match-radius`: the same-object cross-match runs after an ingest, at the radius
asked for, and a bad radius is refused before anything is read."""
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
# one star, 2011 and 2015, 0.2 arcsec apart in the headers
PAIR = ("lamost_junhui_ccf/spec-55859-F5907_sp03-106.fits.gz",
        "lamost_junhui_ccf/spec-57304-EG025335S013827B01_sp15-044.fits.gz")


def specreview(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reviewer.cli", *args], capture_output=True, text=True, timeout=180,
                          cwd=REPO_ROOT)


def objects(out: str) -> tuple[int, float]:
    found = re.search(r"^objects with several spectra: (\d+) \(cross-match within ([\d.]+) arcsec\)$", out, re.M)
    assert found, out
    return int(found.group(1)), float(found.group(2))


def test_ingest_matches_the_two_epochs_at_the_radius_given(tmp_path, shared_spectra):
    db = str(tmp_path / "m.duckdb")
    files = [str(shared_spectra / f) for f in PAIR]
    first = specreview("ingest", "--db", db, "--no-progress", "--match-radius", "0.1", *files)
    assert first.returncode == 0, first.stderr
    assert objects(first.stdout) == (0, 0.1)  # the two epochs lie 0.2 arcsec apart
    again = specreview("ingest", "--db", db, "--no-progress", *files)
    assert objects(again.stdout) == (0, 0.1)  # nothing added: the last match stands
    wide = specreview("ingest", "--db", db, "--no-progress", "--match-radius", "1.5", *files)
    assert objects(wide.stdout) == (1, 1.5)
    bad = specreview("ingest", "--db", db, "--no-progress", "--match-radius", "-2", *files)
    assert bad.returncode == 2 and "match radius" in bad.stderr
