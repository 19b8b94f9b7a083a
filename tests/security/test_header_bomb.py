"""Issue 45, finding 1: one spectrum froze the server. A FITS file with 150,000 HISTORY cards (a 12 MB
header) cost ~75 s of the event loop when opened, because its header text was joined card by card
(quadratic). Readers now refuse a header past fitsraw.MAX_HEADER_CARDS unread, naming the file; a long
header under it is read in linear time and shown shortened; the page of a reviewer who opens such a
file says why, and another reviewer's page meanwhile loads as usual."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import requests
from security.payloads import header_bomb
from served_app import ServedApp, page_load_limit, seeded_db

from agents.spectra import SpectrumReadError, read_spectrum
from agents.spectra.core import HEADER_SHORTENED_KEY, HEADER_TEXT_MAX_CHARS, header_text
from agents.spectra.fitsraw import MAX_HEADER_CARDS, RawHeader
from reviewer.services.ingest import file_sha256, ingest_paths
from reviewer.store import Store

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
SDSS = DEMO / "spec-0853-52374-0240.fits"


def test_a_header_of_150k_cards_is_refused_unread_naming_the_file(tmp_path):
    bomb = tmp_path / "history-bomb.fits"
    bomb.write_bytes(header_bomb(SDSS.read_bytes(), 150_000))
    with pytest.raises(SpectrumReadError) as refused:
        read_spectrum(str(bomb))
    said = str(refused.value)
    assert said.startswith("history-bomb.fits:") and f"more than {MAX_HEADER_CARDS:,} cards" in said


def test_ingest_refuses_it_by_name_and_stores_nothing(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "history-bomb.fits").write_bytes(header_bomb(SDSS.read_bytes(), 150_000))
    with Store(tmp_path / "x.duckdb") as store:
        summary = ingest_paths(store, [folder], progress=False)
        assert store.spectra.list_spectra(limit=10) == []
    assert any("history-bomb.fits" in str(f) and "cards" in str(f) for f in summary.failed), summary.failed


def test_a_long_history_under_the_cap_reads_and_is_shown_shortened(tmp_path):
    long = tmp_path / "long-history.fits"
    long.write_bytes(header_bomb(SDSS.read_bytes(), MAX_HEADER_CARDS - 600))
    spectrum = read_spectrum(str(long))
    header = spectrum.meta["header"]
    assert header["PLATEID"] == "853"  # the survey's own cards come first and are kept
    shown = sum(len(k) + len(v) for k, v in header.items())
    assert shown < 1.1 * HEADER_TEXT_MAX_CHARS
    assert header["HISTORY"].startswith("step 0 of a pipeline")
    assert "repeated cards not shown" in header[HEADER_SHORTENED_KEY]


def test_every_key_keeps_its_first_card_past_the_display_bound():
    """The survey's keys (PLATEID, MJD, FIBERID feed the sky links and the date) are kept however
    long the HISTORY before them: only repeated cards are left out."""
    history = "".join(f"{'HISTORY':<8}{'x' * 72}" for _ in range(2 * HEADER_TEXT_MAX_CHARS // 72))
    cards = history + f"{'MJD':<8}{'=                52374':<72}" + f"{'FIBERID':<8}{'=                  240':<72}"
    text = header_text(RawHeader(cards))
    assert text["MJD"] == "52374" and text["FIBERID"] == "240"
    assert "repeated cards not shown" in text[HEADER_SHORTENED_KEY]


def test_repeated_keys_are_joined_in_order_and_a_short_header_is_whole():
    cards = "".join(f"{k:<8}{v:<72}" for k, v in [("SIMPLE", "=                    T"), ("HISTORY", "first"),
                                                 ("COMMENT", "a note"), ("HISTORY", "second"),
                                                 ("OBJNAME", "= 'M 31    '")])
    text = header_text(RawHeader(cards))
    assert text == {"SIMPLE": "T", "HISTORY": "first\nsecond", "COMMENT": "a note", "OBJNAME": "M 31"}


@pytest.mark.ui
def test_opening_the_150k_card_file_leaves_another_reviewers_page_quick(tmp_path):
    """The attack as it was run: the file in the store (ingested before readers were bounded: a
    record with its hash), opened with ?spectrum=, while another client loads a page."""
    db, _ = seeded_db(tmp_path)
    bomb = tmp_path / "history-bomb.fits"
    bomb.write_bytes(header_bomb(SDSS.read_bytes(), 150_000))
    with Store(db) as store:
        good = store.spectra.list_spectra(limit=1)[0]
        record = dict(store.spectra.get_spectrum(good["spectrum_id"]))
        record.update(spectrum_id="history-bomb", source_path=str(bomb), file_name=bomb.name,
                      file_sha256=file_sha256(bomb), target=None)
        store.spectra.add_spectrum(record)
    app = ServedApp(db, tmp_path / "panel.log")
    try:
        limit = page_load_limit(f"{app.url}?reviewer=ann")
        opened: dict = {}

        def open_the_bomb():
            opened["page"] = requests.get(f"{app.url}?reviewer=mallory&spectrum=history-bomb", timeout=300)

        attacker = threading.Thread(target=open_the_bomb)
        attacker.start()
        took = []  # another reviewer's page loads, for as long as the attacker's page is being built
        while attacker.is_alive() or not took:
            start = time.monotonic()
            assert requests.get(f"{app.url}?reviewer=ann", timeout=300).status_code == 200
            took.append(time.monotonic() - start)
        assert max(took) < limit, f"another page took {max(took):.1f} s (limit {limit:.1f} s) while the file was opened"
        assert opened["page"].status_code == 200 and app.proc.poll() is None
    finally:
        app.stop()
