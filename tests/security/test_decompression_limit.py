"""Finding 7: a small gzip that expands without bound (a gzip bomb) is refused by size, with memory
bounded, naming the file; a real gzipped spectrum under the limit still reads."""
from __future__ import annotations

import gzip
import resource
import shutil
from pathlib import Path

import pytest

from agents.spectra import SpectrumReadError, read_spectrum
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"


def gzip_bomb(path: Path, expanded: int) -> None:
    """A gzip of a real FITS header block followed by zeros, `expanded` bytes in all, written in
    pieces (the bomb is never in memory here)."""
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write((DEMO / "spec-0853-52374-0240.fits").read_bytes()[:2880])
        chunk = bytes(2**20)
        for _ in range(expanded // len(chunk)):
            fh.write(chunk)


def test_a_gzip_bomb_is_refused_by_name_and_memory_stays_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECREVIEW_MAX_FILE_BYTES", str(64 * 2**20))
    bomb = tmp_path / "bomb.fits.gz"
    gzip_bomb(bomb, 2 * 2**30)  # 2 GB of zeros in ~2 MB
    assert bomb.stat().st_size < 4 * 2**20
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SpectrumReadError) as err:
        read_spectrum(bomb)
    assert "bomb.fits.gz" in str(err.value) and "more than" in str(err.value)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert grown_kb < 400 * 1024  # far from the 2 GB it expands to


def test_ingest_refuses_the_bomb_and_keeps_the_good_files(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECREVIEW_MAX_FILE_BYTES", str(64 * 2**20))
    folder = tmp_path / "in"
    folder.mkdir()
    gzip_bomb(folder / "bomb.fits.gz", 256 * 2**20)
    good = DEMO / "spec-55859-F5902_sp07-209.fits.gz"  # a real gzipped LAMOST spectrum
    shutil.copy(good, folder / good.name)
    store = Store(tmp_path / "i.duckdb")
    try:
        report = ingest_paths(store, [folder], progress=False)
        assert [r["file_name"] for r in store.spectra.list_spectra(limit=10)] == [good.name]
        assert [(Path(where).name, "more than" in why) for where, why in report.failed] == [("bomb.fits.gz", True)]
    finally:
        store.close()


def test_a_real_gzipped_spectrum_still_reads():
    assert len(read_spectrum(DEMO / "spec-55859-F5902_sp07-209.fits.gz").spectral_axis) > 1000
