"""The same-object cross-match over the shared corpus's real headers, and its store and migration.

Ground truth, checked by hand in the headers: the corpus holds 11 LAMOST objects observed twice
(two OBSIDs, two plates, two dates, designations that agree to 0.3"; one pair is an MRS and an LRS
spectrum) and 10 DESI targets that are in both a coadd and the per-exposure spectra file it was
made from (same TARGETID). Nothing else lies within an arcminute of another spectrum.
"""
from __future__ import annotations

import numpy as np
import pytest

from agents.spectra import read_spectrum
from reviewer.services.same_object import add_to_groups, ensure_groups, group_positions, match_radius, refresh_groups
from reviewer.services.sky import survey_family

LAMOST_PAIRS = {
    frozenset(p) for p in (
        ("spec-55859-F5902_sp09-205.fits.gz", "spec-57336-EG222106N010205M01_sp10-132.fits.gz"),
        ("spec-55859-F5907_sp02-159.fits.gz", "spec-57304-EG025335S013827B01_sp03-011.fits.gz"),
        ("spec-55859-F5907_sp03-090.fits.gz", "spec-55915-F5591503_sp09-174.fits.gz"),
        ("spec-55859-F5907_sp03-106.fits.gz", "spec-57304-EG025335S013827B01_sp15-044.fits.gz"),
        ("spec-55859-F5907_sp05-010.fits.gz", "spec-57289-EG030712S014809B01_sp10-020.fits.gz"),
        ("spec-55859-F5907_sp05-081.fits.gz", "spec-57304-EG025335S013827B01_sp08-053.fits.gz"),
        ("spec-55859-F5907_sp09-118.fits.gz", "spec-57042-EG030739N012421V01_sp02-195.fits.gz"),
        ("spec-55859-F5907_sp10-026.fits.gz", "spec-55915-F5591503_sp04-011.fits.gz"),
        ("spec-55859-F5907_sp10-179.fits.gz", "spec-57304-EG025335S013827B01_sp03-166.fits.gz"),
        ("spec-56944-EG025338N015809M01_sp06-214.fits.gz", "spec-57716-EG025338N015809B01_sp06-214.fits.gz"),
        ("med-58268-HIP95119KP01_sp12-076.fits.gz", "spec-57287-KP193637N444141V03_sp10-161.fits.gz"),
    )
}


@pytest.fixture(scope="module")
def corpus(shared_spectra, manifest):
    """(manifest file, meta) of every survey spectrum of the corpus (Pickles library spectra have no sky)."""
    out = []
    for row in manifest:
        if "Pickles" in row["survey"]:
            continue
        path, _, target = row["file"].partition("#")
        spec = read_spectrum(shared_spectra / path, target=target or None)
        out.append((row["file"], spec.meta))
    return out


def _name(file: str) -> str:
    return file.split("/")[-1].partition("#")[0]


def test_cross_match_groups_the_eleven_lamost_repeat_pairs_and_no_false_pair(corpus):
    metas = dict(corpus)
    positions = [(f, m["ra"], m["dec"]) for f, m in corpus if m["ra"] is not None and m["dec"] is not None]
    assert len(positions) > 250  # every LAMOST, SDSS and DESI spectrum with a FIBERMAP has coordinates
    groups = group_positions(positions)
    lamost = [g for g in groups if survey_family(metas[g[0]]["survey"]) == "LAMOST"]
    assert {frozenset(_name(f) for f in g) for g in lamost} == LAMOST_PAIRS
    for group in lamost:  # two observations each: two OBSIDs, two dates
        assert len({metas[f]["header"]["OBSID"] for f in group}) == 2
        assert len({metas[f]["header"]["DATE-OBS"][:10] for f in group}) == 2
    others = [g for g in groups if g not in lamost]
    # the rest: one DESI target in a coadd and in the spectra file it was made from, nothing else
    assert len(others) == 10
    for group in others:
        assert {metas[f]["survey"] for f in group} == {"DESI"} and len(group) == 2
        assert len({metas[f]["fibermap"]["TARGETID"] for f in group}) == 1
        assert sorted(_name(f).split("-")[0] for f in group) == ["coadd", "spectra"]


def test_radius_is_configurable_and_checked(monkeypatch):
    pair = [("a", 10.0, 20.0), ("b", 10.0, 20.0 + 1.0 / 3600)]  # 1 arcsec apart
    assert group_positions(pair) == [["a", "b"]]
    assert group_positions(pair, 0.5) == []
    monkeypatch.setenv("SPECREVIEW_MATCH_ARCSEC", "0.5")
    assert match_radius() == 0.5 and group_positions(pair) == []
    for bad in (0, -1, 3600, float("nan")):
        with pytest.raises(ValueError, match="match radius"):
            match_radius(bad)


def test_groups_are_transitive_and_across_ra_zero():
    chain = [("a", 359.99990, 0.0), ("b", 0.0000, 0.0), ("c", 0.00030, 0.0), ("far", 0.1, 0.0)]
    assert group_positions(chain) == [["a", "b", "c"]]


def _record(sid, ra, dec, survey="LAMOST-LRS DR8", mjd=None):
    return {"spectrum_id": sid, "source_path": f"/x/{sid}.fits", "file_sha256": sid * 4, "survey": survey,
            "ra": ra, "dec": dec, "obs_mjd": mjd, "object_id": sid, "snr": 12.0}


def test_many_spectra_at_one_position_group_without_every_pair_in_memory():
    """6,000 spectra at three catalogue positions (repeat visits keep the input catalogue's coordinates)
    and one neighbour 1 arcsec from the first: the search runs over distinct positions. An all-pairs
    search held 1.2e7 pairs here (2.0 GB at its peak, 47 s); at 200k spectra the app was killed for memory."""
    import tracemalloc

    import astropy.coordinates  # noqa: F401  (imported before memory is traced)

    positions = [(f"s{i:05d}", 10.0 + (i % 3), 20.0) for i in range(6_000)]
    positions.append(("near", 10.0 + 1.0 / 3600, 20.0))  # 1 arcsec east of the first position (cos dec ~ 0.94)
    tracemalloc.start()
    groups = group_positions(positions, 1.5)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sorted(len(g) for g in groups) == [2_000, 2_000, 2_001]
    assert "near" in next(g for g in groups if "s00000" in g)
    assert peak < 200 * 2**20  # ~45 MB


def test_distinct_positions_group_as_the_all_pairs_match_did(monkeypatch):
    """Chunked over distinct positions, the groups are those of one search over every pair."""
    import reviewer.services.same_object as same_object

    rng = np.random.default_rng(3)
    centres = rng.uniform([0, -30], [2, 30], size=(300, 2))
    positions = [(f"p{i}", *(centres[i % 300] + rng.normal(0, 0.4 / 3600, 2))) for i in range(1500)]
    whole = group_positions(positions, 1.5)
    monkeypatch.setattr(same_object, "PAIRS_CHUNK", 7)
    assert group_positions(positions, 1.5) == whole and len(whole) >= 250


def test_store_groups_queue_filter_and_members(store, make_trajectory):
    for rec in (_record("s1", 40.0, 1.0, mjd=57000), _record("s2", 40.0, 1.0 + 0.2 / 3600, mjd=55000),
                _record("s3", 41.0, 1.0), _record("s4", None, None)):
        store.spectra.add_spectrum(rec)
    for sid in ("s1", "s2", "s3"):
        store.trajectories.save_trajectory(make_trajectory(spectrum_id=sid))
    assert refresh_groups(store) == [["s1", "s2"]]
    members = store.objects.members("s1")
    assert [m["spectrum_id"] for m in members] == ["s2", "s1"]  # by date
    assert store.objects.members("s3") == [] and store.objects.same_object("s1", "s2")
    assert not store.objects.same_object("s1", "s3")
    several = store.queue.queue_items(same_object=True)
    assert sorted(r["spectrum_id"] for r in several) == ["s1", "s2"]
    assert store.queue.queue_count(same_object=False) == 1
    assert store.objects.last_match()["n_spectra"] == 3


def test_an_old_database_upgrades(tmp_path):
    """A version-6 file gains the columns and tables; its spectra get their date from the stored header."""
    import duckdb

    from reviewer.store import Store
    from reviewer.store.schema import MIGRATIONS, migrate

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, MIGRATIONS[:6]) == 6
    con.execute("INSERT INTO spectra (spectrum_id, source_path, file_name, file_sha256, survey, header, ingested_at) "
                "VALUES ('old', '/x/old.fits', 'old.fits', 'abc', 'LAMOST-LRS DR7', "
                "'{\"MJD\": \"55861\", \"OBSID\": \"701001\"}', now())")
    con.close()
    store = Store(path)
    try:
        assert store.schema_version == len(MIGRATIONS)
        row = store.spectra.get_spectrum("old")
        assert row["obs_mjd"] == 55861 and row["survey_ids"] is None
        assert store.objects.last_match() is None
    finally:
        store.close()


def test_ensure_groups_matches_again_only_when_needed(store, monkeypatch):
    store.spectra.add_spectrum(_record("s1", 40.0, 1.0))
    store.spectra.add_spectrum(_record("s2", 40.0, 1.0 + 1.0 / 3600))
    assert ensure_groups(store) and store.objects.count_groups() == 1
    assert not ensure_groups(store)  # nothing new
    assert ensure_groups(store, 0.5) and store.objects.count_groups() == 0  # another radius
    monkeypatch.setenv("SPECREVIEW_MATCH_ARCSEC", "wide")  # a bad setting: the default, and a warning
    assert ensure_groups(store) and store.objects.count_groups() == 1
    store.spectra.add_spectrum(_record("s3", 40.0, 1.0 + 0.5 / 3600))
    assert ensure_groups(store) and [m["spectrum_id"] for m in store.objects.members("s3")] == ["s1", "s2", "s3"]


def _stored_groups(store) -> list[list[str]]:
    rows = store.db.rows("SELECT group_id, list(spectrum_id ORDER BY spectrum_id) AS m, any_value(n_members) AS n "
                         "FROM object_groups GROUP BY group_id")
    assert all(len(r["m"]) == r["n"] and r["group_id"] == r["m"][0] for r in rows)
    return sorted(r["m"] for r in rows)


def test_matching_each_ingest_gives_the_groups_of_one_whole_match(store):
    """Spectra added a few at a time (each ingest matches only its own) end in the groups a whole
    cross-match finds: chains, groups joined by a later spectrum, RA 0/360, a pole."""
    rng = np.random.default_rng(7)
    arcsec = 1.0 / 3600
    spots = [(rng.uniform(0, 360), rng.uniform(-80, 80)) for _ in range(60)]
    spots += [(359.99995, 10.0), (0.00005, 89.9995), (180.0, -89.9999)]
    positions = []
    for k, (ra, dec) in enumerate(spots):
        for j in range(int(rng.integers(1, 4))):  # 1-3 spectra per spot, up to ~2.4" apart in a chain
            positions.append((f"p{k:03d}-{j}", ra % 360.0, min(90.0, dec + j * 1.2 * arcsec)))
    positions.append(("q-far", 10.0, 10.0))
    order = rng.permutation(len(positions))
    add_to_groups(store, [])  # no match stored yet: a whole (empty) one
    for batch in np.array_split(order, 9):
        ids = []
        for i in batch:
            sid, ra, dec = positions[i]
            store.spectra.add_spectrum(_record(sid, ra, dec))
            ids.append(sid)
        add_to_groups(store, ids)
    expected = group_positions(positions)
    assert any(len(g) == 3 for g in expected) and _stored_groups(store) == expected
    assert store.objects.last_match()["n_spectra"] == len(positions)
    assert not ensure_groups(store)  # nothing left to match


def test_an_object_with_many_spectra_lists_the_nearest_in_date(store, monkeypatch):
    """A page lists at most MAX_LISTED spectra of an object: the one on screen and those nearest it in
    date (the rest counted), so an object observed thousands of times does not fill the page."""
    import reviewer.services.same_object as same_object

    for i in range(7):
        store.spectra.add_spectrum({"spectrum_id": f"ep{i}", "source_path": f"/x/ep{i}.fits", "file_sha256": f"h{i}",
                                    "ra": 150.0, "dec": 2.0, "obs_mjd": 58000.0 + 10 * i})
    refresh_groups(store, 1.5)
    monkeypatch.setattr(same_object, "MAX_LISTED", 3)
    rows, more = same_object.same_object_rows(store, "ep4")
    assert [r["spectrum_id"] for r in rows] == ["ep3", "ep4", "ep5"] and more == 4
    assert [r["spectrum_id"] for r in same_object.nearest_members(store, "ep0")[0]] == ["ep0", "ep1", "ep2"]
    listed = {r["spectrum_id"] for r in same_object.same_object_rows(store, "ep6")[0]}
    assert listed == {"ep4", "ep5", "ep6"}
