"""Ingest real spectrum files: idempotent, per-file transactions, failures reported not raised."""
import shutil
from pathlib import Path

import pytest

import agents.spectra
from agents.spectra import SpectrumReadError, list_targets
from reviewer.services.ingest import file_sha256, ingest_paths, spectrum_id_for

MULTI = "desi_specutils/coadd-5-169-thru20210419.fits"


def rows_for(store, path: Path) -> list[dict]:
    return [r for r in store.spectra.list_spectra(limit=None) if Path(r["source_path"]) == path.resolve()]


def test_sample_folder_registers_each_spectrum_once(store, sample_folder):
    summary = ingest_paths(store, [sample_folder], progress=False)
    assert summary.failed == []
    # lamost 1 + sdss 1 + fastspecfit coadd 1 target + specutils coadd 5 targets + pickles 1
    assert summary.added == 9 and summary.files_seen == 5
    assert store.spectra.count_spectra() == 9
    desi = rows_for(store, sample_folder / MULTI)
    assert sorted(r["target"] for r in desi) == sorted(list_targets(sample_folder / MULTI))
    sha = file_sha256(sample_folder / MULTI)
    assert {r["spectrum_id"] for r in desi} == {spectrum_id_for(sha, r["target"]) for r in desi}
    # labels from the redrock sidecar beside the coadd reached the row
    fast = rows_for(store, sample_folder / "desi_fastspecfit/coadd-4-80613-thru20210324.fits")[0]
    assert fast["survey"] == "DESI" and fast["pipeline_class"] == "GALAXY"
    assert fast["pipeline_z"] == pytest.approx(0.368744, abs=1e-4)
    full = store.spectra.get_spectrum(fast["spectrum_id"])
    assert full["header"] and all(isinstance(v, str) for v in full["header"].values())
    assert full["n_pix"] > 7000 and full["wave_min"] < full["wave_max"]

    again = ingest_paths(store, [sample_folder], progress=False)
    assert (again.added, again.skipped_existing, again.failed) == (0, 9, [])
    assert store.spectra.count_spectra() == 9


def test_files_ingested_before_are_hashed_not_read_again(store, sample_folder, monkeypatch):
    first = ingest_paths(store, [sample_folder], progress=False)

    def opened(*_, **__):
        raise AssertionError("a file already in the store was opened again")

    monkeypatch.setattr(agents.spectra, "list_targets", opened)
    monkeypatch.setattr(agents.spectra, "read_spectrum", opened)
    again = ingest_paths(store, [sample_folder], progress=False)
    assert (again.added, again.skipped_existing, again.failed) == (0, 9, [])
    # each file's spectrum ids, in target order, whether new or known
    assert again.file_ids == first.file_ids and len(again.file_ids) == 5
    sha = file_sha256(sample_folder / MULTI)
    assert again.file_ids[str(sample_folder / MULTI)] == [spectrum_id_for(sha, t)
                                                          for t in sorted(list_targets(sample_folder / MULTI))]


def test_a_copy_elsewhere_adds_nothing(store, sample_folder, tmp_path):
    ingest_paths(store, [sample_folder / "pickles_pyhdust"], progress=False)
    copy = tmp_path / "copy.dat"
    shutil.copyfile(sample_folder / "pickles_pyhdust/o5v.dat", copy)
    summary = ingest_paths(store, [copy], progress=False)
    assert (summary.added, summary.skipped_existing) == (0, 1)


def test_broken_and_missing_files_write_nothing(store, sample_folder, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    real = (sample_folder / "lamost_sbc/101030.fits").read_bytes()
    (bad / "truncated.fits").write_bytes(real[: len(real) // 3])
    (bad / "junk.csv").write_text("this,is\nnot,a spectrum\n")
    (bad / "README.md").write_text("# not a spectrum")  # skipped, not failed
    summary = ingest_paths(store, [bad, tmp_path / "nowhere"], progress=False)
    assert summary.added == 0 and store.spectra.count_spectra() == 0
    failed = dict(summary.failed)
    assert set(failed) == {str(bad / "truncated.fits"), str(bad / "junk.csv"), str(tmp_path / "nowhere")}
    assert failed[str(tmp_path / "nowhere")] == "no such file or folder"
    assert all(problem and "Traceback" not in problem for problem in failed.values())


def test_failure_while_storing_rolls_back_the_whole_file(store, sample_folder, monkeypatch):
    path = sample_folder / MULTI
    calls = {"n": 0}
    original = store.spectra.add_spectrum

    def third_fails(record):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full (simulated)")
        return original(record)

    monkeypatch.setattr(store.spectra, "add_spectrum", third_fails)
    summary = ingest_paths(store, [path], progress=False)
    assert calls["n"] == 3
    assert summary.added == 0 and len(summary.failed) == 1
    assert summary.failed[0][0] == str(path) and "disk full" in summary.failed[0][1]
    assert store.spectra.count_spectra() == 0

    monkeypatch.setattr(store.spectra, "add_spectrum", original)
    assert ingest_paths(store, [path], progress=False).added == 5


def test_one_unreadable_target_fails_its_file(store, sample_folder, monkeypatch):
    path = sample_folder / MULTI
    bad_target = list_targets(path)[2]
    original = agents.spectra.read_spectrum

    def reader(p, target=None):
        if target == bad_target:
            raise SpectrumReadError(p, "flux is all NaN (simulated)")
        return original(p, target=target)

    monkeypatch.setattr(agents.spectra, "read_spectrum", reader)
    summary = ingest_paths(store, [sample_folder / "desi_specutils", sample_folder / "pickles_pyhdust"],
                           progress=False)
    assert summary.failed == [(f"{path}#{bad_target}", "flux is all NaN (simulated)")]
    assert summary.added == 1 and store.spectra.count_spectra() == 1  # only the Pickles star


def test_explicit_files_are_tried_even_if_a_walk_would_skip_them(store, sample_folder):
    sidecar = sample_folder / "desi_fastspecfit/redrock-4-80613-thru20210324.fits"
    summary = ingest_paths(store, [sidecar], progress=False)
    assert summary.added == 0 and [p for p, _ in summary.failed] == [str(sidecar)]


def test_spectrum_ids_are_short_stable_and_target_specific():
    a = spectrum_id_for("ab" * 32, None)
    assert a == spectrum_id_for("ab" * 32, None) and len(a) == 16
    assert len({a, spectrum_id_for("ab" * 32, "1"), spectrum_id_for("ab" * 32, "2"), spectrum_id_for("cd" * 32, None)}) == 4


def test_whole_shared_corpus(store, shared_spectra, manifest):
    summary = ingest_paths(store, [shared_spectra], progress=False)
    assert summary.failed == []
    expected = {row["file"] for row in manifest}
    got = set()
    for r in store.spectra.list_spectra(limit=None):
        rel = Path(r["source_path"]).relative_to(shared_spectra).as_posix()
        got.add(rel if r["target"] is None else f"{rel}#{r['target']}")
    # DESI files list TARGETIDs; the manifest names files without ids by row number
    assert len(got) == len(expected) == summary.added
    assert {g.split("#")[0] for g in got} == {e.split("#")[0] for e in expected}
    by_file = {row["file"]: row for row in manifest}
    for r in store.spectra.list_spectra(limit=None):
        rel = Path(r["source_path"]).relative_to(shared_spectra).as_posix()
        row = by_file.get(rel if r["target"] is None else f"{rel}#{r['target']}")
        if row is not None:  # listing metadata came through (survey strings: documented prefix rule)
            assert row["survey"].startswith(r["survey"]), rel
            assert r["n_pix"] > 0 and r["snr"] is not None, rel
    second = ingest_paths(store, [shared_spectra], progress=False)
    assert (second.added, second.skipped_existing, second.failed) == (0, len(expected), [])
