"""Ingest real spectrum files: idempotent, per-file transactions, failures reported not raised."""
import shutil
from pathlib import Path

import pytest
from shared_data import survey_matches

import agents.spectra
from agents.spectra import SpectrumReadError, list_targets
from reviewer.services.ingest import file_sha256, find_spectrum_files, ingest_paths, spectrum_id_for

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
    first = ingest_paths(store, [sample_folder], progress=False, with_file_ids=True)

    def opened(*_, **__):
        raise AssertionError("a file already in the store was opened again")

    monkeypatch.setattr(agents.spectra, "FileSpectra", opened)
    again = ingest_paths(store, [sample_folder], progress=False, with_file_ids=True)
    assert (again.added, again.skipped_existing, again.failed) == (0, 9, [])
    assert ingest_paths(store, [sample_folder], progress=False).file_ids == {}  # kept only when asked for
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
    calls = []
    original = store.spectra.add_spectra
    third = spectrum_id_for(file_sha256(path), sorted(list_targets(path))[2])

    def third_fails(records):  # every time its third spectrum is written: the group's, then the file's own try
        ids = [r["spectrum_id"] for r in records]
        calls.extend(ids)
        if third in ids:
            raise RuntimeError("disk full (simulated)")
        return original(records)

    monkeypatch.setattr(store.spectra, "add_spectra", third_fails)
    summary = ingest_paths(store, [path], progress=False)
    assert calls.count(third) == 2  # in its group's transaction, then in the file's own
    assert summary.added == 0 and len(summary.failed) == 1
    assert summary.failed[0][0] == str(path) and "disk full" in summary.failed[0][1]
    assert store.spectra.count_spectra() == 0

    monkeypatch.setattr(store.spectra, "add_spectra", original)
    assert ingest_paths(store, [path], progress=False).added == 5


def test_a_failure_after_the_spectra_are_inserted_leaves_none_of_them(store, sample_folder, monkeypatch):
    """The file's spectra are inserted, then its stamp fails to be written in the same transaction:
    none of them stays."""
    path = sample_folder / MULTI

    def stamps_fail(*_):
        assert store.spectra.count_spectra() == 5  # inserted, not yet committed
        raise RuntimeError("disk full (simulated)")

    monkeypatch.setattr(store.spectra, "put_file_stamps", stamps_fail)
    summary = ingest_paths(store, [path], progress=False)
    assert summary.added == 0 and [where for where, _ in summary.failed] == [str(path)]
    assert store.spectra.count_spectra() == 0


def test_a_file_that_cannot_be_stored_takes_none_of_its_group_with_it(store, sample_folder, monkeypatch):
    path = sample_folder / MULTI
    original = store.spectra.add_spectra
    bad = spectrum_id_for(file_sha256(path), sorted(list_targets(path))[0])

    def one_fails(records):
        if any(r["spectrum_id"] == bad for r in records):
            raise RuntimeError("constraint (simulated)")
        return original(records)

    monkeypatch.setattr(store.spectra, "add_spectra", one_fails)
    summary = ingest_paths(store, [sample_folder], progress=False, with_file_ids=True)  # 5 files, one group
    assert [where for where, _ in summary.failed] == [str(path)]
    assert summary.added == 4 and store.spectra.count_spectra() == 4
    assert str(path) not in summary.file_ids


def test_one_unreadable_target_fails_its_file(store, sample_folder, monkeypatch):
    path = sample_folder / MULTI
    bad_target = list_targets(path)[2]

    class OneBadTarget(agents.spectra.FileSpectra):
        def read(self, target):
            if target == bad_target:
                raise SpectrumReadError(self.path, "flux is all NaN (simulated)")
            return super().read(target)

    monkeypatch.setattr(agents.spectra, "FileSpectra", OneBadTarget)
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
            assert survey_matches(row["survey"], r["survey"]), rel
            assert r["n_pix"] > 0 and r["snr"] is not None, rel
    second = ingest_paths(store, [shared_spectra], progress=False)
    assert (second.added, second.skipped_existing, second.failed) == (0, len(expected), [])


# -- survey scale: a known file is passed on its stat (table file_stamps) ----------------------------
def test_a_known_file_is_passed_on_its_stat_without_reading_it(store, sample_folder, monkeypatch):
    import reviewer.services.ingest as ingest
    import reviewer.services.spectra_cache as spectra_cache

    monkeypatch.setattr(spectra_cache, "RACY_S", 0.0)  # the copies were just written: trust their stat now
    first = ingest_paths(store, [sample_folder], progress=False, with_file_ids=True)
    assert store.db.scalar("SELECT count(*) FROM file_stamps") == 5

    def read(*_, **__):
        raise AssertionError("a file whose stat is unchanged was read")

    monkeypatch.setattr(ingest, "file_digest", read)
    monkeypatch.setattr(agents.spectra, "FileSpectra", read)
    again = ingest_paths(store, [sample_folder], progress=False, with_file_ids=True)
    assert (again.added, again.skipped_existing, again.files_seen, again.failed) == (0, 9, 5, [])
    assert again.file_ids == first.file_ids


def test_a_file_whose_stat_changed_is_hashed_again(store, sample_folder, monkeypatch):
    import os

    import reviewer.services.ingest as ingest
    import reviewer.services.spectra_cache as spectra_cache

    monkeypatch.setattr(spectra_cache, "RACY_S", 0.0)
    ingest_paths(store, [sample_folder], progress=False)
    touched = sample_folder / MULTI
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))  # same content, another stat
    hashed = []
    real = ingest.file_digest
    monkeypatch.setattr(ingest, "file_digest", lambda path, stamp=None: hashed.append(path) or real(path, stamp))
    again = ingest_paths(store, [sample_folder], progress=False)
    assert hashed == [touched] and (again.added, again.skipped_existing) == (0, 9)
    assert ingest_paths(store, [sample_folder], progress=False).skipped_existing == 9
    assert hashed == [touched]  # its new stat was stored with the content it hashed to


def test_a_stat_too_recent_to_trust_is_not_stored(store, sample_folder):
    ingest_paths(store, [sample_folder], progress=False)  # the copies were written within RACY_S
    assert store.db.scalar("SELECT count(*) FROM file_stamps") == 0


def test_files_are_written_a_group_at_a_time_each_whole(store, shared_spectra, manifest, tmp_path, monkeypatch):
    import reviewer.services.ingest as ingest

    folder = tmp_path / "many"
    folder.mkdir()
    for r in [r for r in manifest if "LAMOST-LRS" in r["survey"]][:7]:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    monkeypatch.setattr(ingest, "WRITE_GROUP", 3)
    commits = []
    transaction = store.transaction
    monkeypatch.setattr(store, "transaction", lambda: commits.append(1) or transaction())
    summary = ingest_paths(store, [folder], progress=False)
    assert (summary.added, summary.failed) == (7, []) and store.spectra.count_spectra() == 7
    assert len(commits) == 3  # 3 + 3 + 1 files


def test_a_folder_is_walked_in_path_order_each_file_once(tmp_path):
    """Folders expand to their candidate files as text, in the order Paths sort (by folder, then name:
    "a/x" before "a-b/y", although "-" sorts before "/"), each file once however it is reached."""
    for name in ("a/x.fits", "a-b/y.fits", "a/sub/z.fits", "a/w.fits", "a/readme.txt", "b.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / "link.fits").symlink_to(tmp_path / "a" / "w.fits")
    files, missing = find_spectrum_files([tmp_path, tmp_path / "a" / "x.fits", tmp_path / "nope.fits"])
    want = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.name != "readme.txt" and p.name != "link.fits")
    assert files == [str(p) for p in want]  # the link and the file named again are the same files
    assert [str(p.relative_to(tmp_path)) for p in want][:2] == ["a/sub/z.fits", "a/w.fits"]
    assert missing == [(str(tmp_path / "nope.fits"), "no such file or folder")]


def test_the_stamps_of_known_files_are_written_a_group_at_a_time(store, sample_folder, tmp_path, monkeypatch):
    """A walk over content registered before (copies at new paths) stores each path's stamp; they are
    written STAMP_GROUP at a time, not all at the walk's end (at 100k files that one statement held
    0.3 GB more than the whole walk), and the next walk passes every copy on its stat."""
    import reviewer.services.ingest as ingest
    import reviewer.services.spectra_cache as spectra_cache

    monkeypatch.setattr(spectra_cache, "RACY_S", 0.0)  # the copies were just written: trust their stat now
    ingest_paths(store, [sample_folder], progress=False)
    copies = tmp_path / "copies"
    shutil.copytree(sample_folder, copies)
    monkeypatch.setattr(ingest, "STAMP_GROUP", 2)
    written, put = [], store.spectra.put_file_stamps
    monkeypatch.setattr(store.spectra, "put_file_stamps", lambda stamps: written.append(len(stamps)) or put(stamps))
    summary = ingest_paths(store, [copies], progress=False)
    assert (summary.added, summary.files_seen, summary.failed) == (0, 5, [])
    assert written == [2, 2, 1]
    monkeypatch.setattr(ingest, "file_digest", lambda *_: pytest.fail("a copy whose stat is stored was hashed"))
    assert ingest_paths(store, [copies], progress=False).skipped_existing == summary.skipped_existing


def test_a_streamed_walk_hands_over_each_files_ids_once_they_are_stored(store, shared_spectra, manifest, tmp_path,
                                                                        monkeypatch):
    """`ingest_stream` hands over the ids of a group's files once the group is committed, before the
    next group is read (a vet campaign starts on them meanwhile), known files' at once; it returns
    the summary `ingest_paths` gives. Closed part-way, it writes what it read and cross-matches it."""
    import agents.spectra as spectra
    import reviewer.services.ingest as ingest

    folder = tmp_path / "many"
    folder.mkdir()
    for r in [r for r in manifest if "LAMOST-LRS" in r["survey"]][:7]:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    monkeypatch.setattr(ingest, "WRITE_GROUP", 3)
    reads, FileSpectra = [], spectra.FileSpectra
    monkeypatch.setattr(spectra, "FileSpectra", lambda path: reads.append(path) or FileSpectra(path))
    walk = ingest.ingest_stream(store, [folder], progress=False)
    handed = []
    while True:
        try:
            batch = next(walk)
        except StopIteration as done:
            summary = done.value
            break
        assert set(store.spectra.get_spectra(batch)) == set(batch)  # stored when handed over
        handed.append((len(reads), batch))
    assert [(n, len(batch)) for n, batch in handed] == [(3, 3), (6, 3), (7, 1)]  # group by group, as read
    assert (summary.added, summary.failed) == (7, [])
    assert [sid for _, batch in handed for sid in batch] == summary.added_ids

    more = tmp_path / "more"
    shutil.copytree(folder, more / "b-copies")
    for r in [r for r in manifest if "LAMOST-LRS" in r["survey"]][7:12]:
        (more / "a-new").mkdir(exist_ok=True)
        shutil.copy(shared_spectra / r["file"], more / "a-new" / r["file"].split("/")[-1])
    matched = []
    monkeypatch.setattr(ingest, "add_to_groups", lambda store, ids, radius: matched.append(list(ids)))
    walk = ingest.ingest_stream(store, [more], progress=False)
    first = next(walk)
    assert len(first) == 3 and len(reads) == 10  # three new files read and written: the first group
    second = next(walk)  # two more new files read, not yet written; then a copy of known content
    assert len(reads) == 12 and len(second) == 1 and second[0] in summary.added_ids
    walk.close()  # stopped: what was read is written and cross-matched, nothing more read
    assert len(reads) == 12 and store.spectra.count_spectra() == 12
    assert len(matched) == 1 and matched[0][:3] == first and len(matched[0]) == 5


def test_a_groups_contents_are_looked_up_at_once_and_a_copy_of_one_just_written_is_not_read_again(
        store, shared_spectra, manifest, tmp_path, monkeypatch):
    """The files to read are hashed WRITE_GROUP at a time and their contents looked up in one query, not
    one a file. A copy of a content read after that lookup (its group written meanwhile) is known
    without reading it again."""
    import agents.spectra as spectra
    import reviewer.services.ingest as ingest
    from reviewer.store.spectra import SpectrumRepository

    lamost = [shared_spectra / r["file"] for r in manifest if "LAMOST-LRS" in r["survey"]][:3]
    ingest_paths(store, [lamost[0]], progress=False)  # K: stored before
    folder = tmp_path / "walk"
    folder.mkdir()
    for name, source in (("a1.fits", lamost[1]), ("a2.fits", lamost[0]), ("a3.fits", lamost[2]), ("a4.fits", lamost[2])):
        shutil.copy(source, folder / name)  # X new; K known; Y new; Y again, after Y's group is written
    monkeypatch.setattr(ingest, "WRITE_GROUP", 2)
    reads, FileSpectra = [], spectra.FileSpectra
    monkeypatch.setattr(spectra, "FileSpectra", lambda path: reads.append(path.name) or FileSpectra(path))
    lookups, looked_up = [], SpectrumRepository.targets_for_files
    monkeypatch.setattr(SpectrumRepository, "targets_for_files",
                        lambda self, shas: lookups.append(len(shas)) or looked_up(self, shas))
    monkeypatch.setattr(SpectrumRepository, "targets_for_file", lambda *_: pytest.fail("one lookup a file"))
    summary = ingest_paths(store, [folder], progress=False)
    assert reads == ["a1.fits", "a3.fits"] and lookups == [2, 2]
    assert (summary.added, summary.skipped_existing, summary.files_seen, summary.failed) == (2, 2, 4, [])
    assert store.spectra.count_spectra() == 3
