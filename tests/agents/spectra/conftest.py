"""Fixtures for the spectrum-reader tests: named real files from the shared corpus."""
import sys
from pathlib import Path

import pytest

# tests/conftest.py puts tests/ first on sys.path, where tests/agents/ (no __init__) would be
# imported as a namespace package `agents` ahead of the editable install's finder. Putting the
# repository root first makes `import agents` find the real package.
_REPO_ROOT = str(Path(__file__).resolve().parents[3])
if sys.path[0] != _REPO_ROOT:
    sys.path.insert(0, _REPO_ROOT)

# Representative real files, by role (tests ask the `real` fixture for them by key).
NAMED = {
    "LAMOST_DR7": "lamost_sbc/spec-58575-HD103621N361936B01_sp03-010.fits",
    "LAMOST_DR1": "lamost_learninglamost/spec-55862-B6212_sp06-005.fits",
    "LAMOST_GZ": "lamost_astrospectro/spec-55862-B6202_sp01-001.fits.gz",
    "LAMOST_UNKNOWN": "lamost_sbc/spec-58575-HD103621N361936B01_sp03-045.fits",
    "LAMOST_MRS": "lamost_laspec/med-58408-TD230151N343645T01_sp01-015.fits",
    "SDSS_LEGACY": "sdss_gelato/spec-0295-51585-0596.fits",
    "SDSS_BOSS": "sdss_wdtools/sample_spectrum.fits",
    "DESI_COADD": "desi_fastspecfit/coadd-4-80613-thru20210324.fits",
    "DESI_MULTI": "desi_specutils/coadd-5-169-thru20210419.fits",
    "DESI_SPECTRA": "desi_specutils/spectra-5-169-thru20210419.fits",
    "DESI_NOIDS": "desi_quasarnp/test_coadd.fits",
    "PICKLES_B57V": "pickles_pyhdust/b57v.dat",
    "PICKLES_M10III": "pickles_pyhdust/m10iii.dat",
}


@pytest.fixture(scope="session")
def real(shared_spectra):
    """real('LAMOST_DR7') or real('lamost_sbc/...fits') -> Path of a shared spectrum
    (skips when absent)."""
    def get(relative: str) -> Path:
        relative = NAMED.get(relative, relative)
        path = shared_spectra / relative
        if not path.is_file():
            pytest.skip(f"{relative} missing from the shared corpus")
        return path
    return get
