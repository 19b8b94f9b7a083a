"""Finding 9 / What to build 8: a spectrum file changed on disk after it was ingested is refused where it
would be shown (the page) or vetted / verified (the CLI): the content hash stored at ingest
(spectra.file_sha256) is checked first. The refusal names the file and says that re-ingesting makes it a new
spectrum; labels stay with the data they were made on (the old spectrum keeps them, the new one starts
with none). The hash is cached by the file's stat, so an item switch pays a stat, not a hash."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from reviewer.cli import main
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.ingest import file_sha256, ingest_paths
from reviewer.store import Store

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"
CHANGED, OTHER = "m5iii.dat", "spec-55862-B6212_sp06-005.fits"


def seeded_copy(folder: Path) -> Path:
    """A database seeded from copies of two demo files (with their shipped trajectories), closed again."""
    data = folder / "data"
    data.mkdir()
    for name in (CHANGED, OTHER):
        shutil.copy2(DEMO / name, data / name)
    db = folder / "review.duckdb"
    store = Store(db)
    assert seed_demo_if_empty(store, demo_dir=data) == 2
    store.close()
    return db


def record_of(store, name: str) -> dict:
    return next(r for r in store.spectra.list_spectra(limit=1000) if r["file_name"] == name)


def edit_in_place(path: Path, keep_stat: bool) -> None:
    """Change one flux digit (the file stays a readable spectrum of the same size); with keep_stat the
    modification time is put back as well, as `cp -p`, `rsync -a` or `touch -r` would leave it."""
    before = path.stat()
    raw = path.read_bytes()
    found = re.search(rb"\n\s*\d+\.\d+\s+(\d)\.(\d*[1-9])", raw)
    assert found, "no nonzero flux value to change"
    i = found.start(1)
    digit = raw[i:i + 1]
    path.write_bytes(raw[:i] + (b"7" if digit != b"7" else b"3") + raw[i + 1:])
    if keep_stat:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size


def counts(db: Path) -> dict[str, int]:
    """Rows of the tables a refusal must not touch (through this process's connection, open or not)."""
    store = Store(db)
    return {t: int(store.db.scalar(f"SELECT count(*) FROM {t}"))
            for t in ("spectra", "trajectories", "reviews", "vi_labels")}


def refusal(text: str, folder: Path) -> None:
    assert CHANGED in text, text
    assert "changed" in text and "re-ingest" in text, text
    assert "new spectrum" in text, text


@pytest.mark.parametrize("keep_stat", [False, True], ids=["edited", "edited-mtime-restored"])
def test_a_changed_file_is_not_shown_and_labels_stay_with_the_data(tmp_path, keep_stat, wait_for_background_renders):
    db = seeded_copy(tmp_path)
    store = Store(db)
    try:
        changed, other = record_of(store, CHANGED), record_of(store, OTHER)
        traj = store.trajectories.list_trajectories(spectrum_id=changed["spectrum_id"], limit=1)[0]["id"]
        state = ReviewState(store, reviewer="ann")
        assert state.open_item(trajectory_id=traj), state.error  # shown while it is the ingested file
        assert state.writer.save("verdict", action="approve") is not None
        state.writer.save("vi", quality=3)
        assert state.open_item(spectrum_id=other["spectrum_id"]), state.error
        wait_for_background_renders()
        before = counts(db)

        edit_in_place(Path(changed["source_path"]), keep_stat)
        shown = state.item
        assert state.open_item(trajectory_id=traj) is False
        refusal(state.error, tmp_path)
        assert str(tmp_path) not in state.error  # the file's name, never its folder on the server
        assert state.item is shown  # the item on screen stays; nothing of the changed file is shown
        assert state.open_item(spectrum_id=changed["spectrum_id"]) is False and state.item is shown

        # re-ingesting makes the changed content a new spectrum: no trajectory, no label on it yet
        summary = ingest_paths(store, [changed["source_path"]], progress=False)
        assert summary.added == 1 and not summary.failed
        new_id = summary.added_ids[0]
        assert new_id != changed["spectrum_id"]
        assert state.open_item(spectrum_id=new_id), state.error
        assert state.item.trajectory is None and store.labels.vi_labels_for(new_id) == []
        # the labels made on the old data stay with the old spectrum, which stays refused
        assert store.labels.latest_review(traj, "ann")["action"] == "approve"
        assert [r["reviewer"] for r in store.labels.vi_labels_for(changed["spectrum_id"])] == ["ann"]
        assert state.open_item(trajectory_id=traj) is False
        wait_for_background_renders()
        assert counts(db) == {**before, "spectra": before["spectra"] + 1}
    finally:
        store.close()


def test_vet_verify_and_claims_refuse_a_changed_file_by_name(tmp_path, capsys):
    db = seeded_copy(tmp_path)
    with Store(db) as store:
        changed, other = record_of(store, CHANGED), record_of(store, OTHER)
    edit_in_place(Path(changed["source_path"]), keep_stat=True)
    before = counts(db)

    def trajectories_on(sid: str) -> int:
        with Store(db) as store:
            return store.trajectories.count_trajectories(spectrum_id=sid)

    on_changed, on_other = trajectories_on(changed["spectrum_id"]), trajectories_on(other["spectrum_id"])
    code = main(["vet", "--task", "a", "--force", "--no-progress", "--no-claims", changed["spectrum_id"],
                 other["spectrum_id"], "--db", str(db)])
    out = capsys.readouterr()
    refusal(out.out + out.err, tmp_path)
    assert code == 1  # the unchanged one was vetted, the changed one refused: some inputs failed (exit 1)
    assert trajectories_on(changed["spectrum_id"]) == on_changed
    assert trajectories_on(other["spectrum_id"]) == on_other + 1

    code = main(["verify", "--force", "--no-progress", "--no-claims", changed["spectrum_id"], "--db", str(db)])
    out = capsys.readouterr()
    refusal(out.out + out.err, tmp_path)
    assert code == 1 and trajectories_on(changed["spectrum_id"]) == on_changed
    # nor are the claims of its stored trajectories checked against the changed data
    code = main(["claims", "--no-progress", changed["spectrum_id"], "--db", str(db)])
    out = capsys.readouterr()
    refusal(out.out + out.err, tmp_path)
    assert code == 1 and "checked: 0 trajectories" in out.out
    after = counts(db)
    assert after == {**before, "trajectories": before["trajectories"] + 1}

    # vetting the file by its path ingests the changed content as a new spectrum and vets that one
    assert main(["vet", "--task", "a", "--no-progress", "--no-claims", changed["source_path"], "--db", str(db)]) == 0
    with Store(db) as store:
        new = [r for r in store.spectra.list_spectra(limit=1000) if r["source_path"] == changed["source_path"]
               and r["spectrum_id"] != changed["spectrum_id"]]
        assert len(new) == 1 and new[0]["file_sha256"] == file_sha256(Path(changed["source_path"]))
        assert store.trajectories.count_trajectories(spectrum_id=new[0]["spectrum_id"]) == 1
    assert trajectories_on(changed["spectrum_id"]) == on_changed


def test_a_file_changed_within_the_racy_window_is_hashed_each_time(tmp_path, monkeypatch):
    """A stat taken in the same clock tick as a write may not show it (git's "racily clean"): a file
    changed less than RACY_S ago is never trusted by its stat."""
    from reviewer.services import spectra_cache

    path = tmp_path / CHANGED
    shutil.copy2(DEMO / CHANGED, path)  # its ctime is now
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    hashed = []
    real = spectra_cache.hash_file
    monkeypatch.setattr(spectra_cache, "hash_file", lambda p: hashed.append(p) or real(p))
    monkeypatch.setattr(spectra_cache, "RACY_S", 3600.0)  # "just now", however slow this machine is
    for _ in range(3):
        spectra_cache.check_unchanged(str(path), sha)
    assert len(hashed) == 3


def test_the_hash_is_computed_once_per_file_state(tmp_path, monkeypatch):
    """The hash is kept by (path, size, mtime, ctime, inode): opening an item again pays a stat; any
    change of the file's stat (an edit, even with its mtime put back) hashes it again."""
    from reviewer.services import spectra_cache

    path = tmp_path / CHANGED
    shutil.copy2(DEMO / CHANGED, path)
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))  # written long ago
    # its ctime is now: a file changed within RACY_S is hashed each time (racily clean, the test above);
    # this test is about the cache, so that window is closed rather than waited out
    monkeypatch.setattr(spectra_cache, "RACY_S", 0.0)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    hashed = []
    real = spectra_cache.hash_file
    monkeypatch.setattr(spectra_cache, "hash_file", lambda p: hashed.append(p) or real(p))
    for _ in range(20):
        spectra_cache.check_unchanged(str(path), sha)
    assert len(hashed) == 1
    edit_in_place(path, keep_stat=True)
    with pytest.raises(spectra_cache.SpectrumChanged) as refused:
        spectra_cache.check_unchanged(str(path), sha)
    assert len(hashed) == 2
    assert str(refused.value).startswith(f"{CHANGED}: ") and str(tmp_path) not in str(refused.value)
