"""Finding 9: no message the page shows carries a server path: a spectrum that cannot be read is named
by its file name (a reader's wrapped exception, an OSError, can carry the folder), and a closed
database by its file name. (The "locked" message: tests/security/test_store_refusals.py.)"""
from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agents.spectra import SpectrumReadError
from reviewer import review_state
from reviewer.review_state import ReviewState
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store, StoreUnavailable

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"


@pytest.fixture
def two_spectra(tmp_path):
    folder = tmp_path / "deep" / "server" / "folder"
    folder.mkdir(parents=True)
    for name in ("m5iii.dat", "spec-55862-B6212_sp06-005.fits"):
        shutil.copy2(DEMO / name, folder / name)
    store = Store(tmp_path / "review.duckdb")
    assert ingest_paths(store, [folder], progress=False).added == 2
    yield store, folder
    store.close()


PROBLEMS = {
    "a reader's wrapped exception": lambda where: SpectrumReadError(
        where / "m5iii.dat", f"unreadable (OSError: [Errno 5] Input/output error: '{where / 'm5iii.dat'}')"),
    "an OSError without strerror": lambda where: OSError(f"cannot map {where / 'm5iii.dat'} into memory"),
    "an OSError with its filename": lambda where: FileNotFoundError(2, "No such file or directory",
                                                                    str(where / "m5iii.dat")),
}


@pytest.mark.parametrize("case", list(PROBLEMS))
def test_a_spectrum_that_cannot_be_read_is_named_by_its_file_name(two_spectra, monkeypatch, case, wait_for_background_renders):
    store, folder = two_spectra
    records = {r["file_name"]: r for r in store.spectra.list_spectra(limit=10)}
    state = ReviewState(store, reviewer="ann")
    assert state.open_item(spectrum_id=records["spec-55862-B6212_sp06-005.fits"]["spectrum_id"]), state.error
    wait_for_background_renders()

    def broken(*args, **kwargs):
        raise PROBLEMS[case](folder)

    monkeypatch.setattr(review_state, "load_spectrum", broken)
    assert state.open_item(spectrum_id=records["m5iii.dat"]["spectrum_id"]) is False
    assert "m5iii.dat" in state.error, state.error
    assert str(folder) not in state.error and "/deep/server" not in state.error, state.error


def test_a_closed_database_is_named_by_its_file_name(tmp_path):
    """A page's thread that reaches a database closed under it (shutdown, a lost disk) is told its name."""
    store = Store(tmp_path / "review.duckdb")
    store.close()
    # a thread with no cursor yet: the store says it is closed
    with ThreadPoolExecutor(1) as fresh, pytest.raises(StoreUnavailable) as closed:
        fresh.submit(store.spectra.count_spectra).result()
    assert "review.duckdb" in str(closed.value) and str(tmp_path) not in str(closed.value)
