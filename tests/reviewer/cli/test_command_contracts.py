"""Issue 49, item 4: the contracts a script relies on, as a user runs the commands (real subprocesses,
real DuckDB files, real spectra of the shared corpus): an ingest where one file fails exits 1 and names
it with its reason, a file passed over for its name is counted; trajectories imported before their
spectra are linked by the ingest that brings them; a server that cannot take its database stops; the
README lists the exit codes reviewer/cli/exits.py defines."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
SPECREVIEW = [sys.executable, "-m", "reviewer.cli"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def specreview(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECREVIEW, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)


def line_count(stdout: str, label: str) -> int:
    match = re.search(rf"^{re.escape(label)}: (\d+)", stdout, re.M)
    assert match, f"no '{label}:' line in\n{stdout}"
    return int(match.group(1))


@pytest.fixture
def lamost_folder(tmp_path, shared_spectra, manifest):
    """Three real LAMOST spectra in a folder of their own."""
    folder = tmp_path / "spectra"
    folder.mkdir()
    for row in [r for r in manifest if r["survey"].startswith("LAMOST-LRS")][:3]:
        shutil.copyfile(shared_spectra / row["file"].partition("#")[0], folder / Path(row["file"]).name)
    return folder


def test_an_ingest_where_one_file_fails_exits_1_names_it_with_its_reason_and_counts_what_it_skipped(
        tmp_path, lamost_folder):
    (lamost_folder / "notes.fits").write_text("wavelength flux\nthese are my notes, not a spectrum\n")
    (lamost_folder / "preview.png").write_bytes(PNG_MAGIC + b"\x00" * 64)
    result = specreview("ingest", str(lamost_folder), "--db", str(tmp_path / "x.duckdb"), "--no-progress")
    assert result.returncode == 1, result.stdout + result.stderr
    assert line_count(result.stdout, "added") == 3 and line_count(result.stdout, "failed") == 1
    assert re.search(r"^  \S*notes\.fits: not a FITS file", result.stdout, re.M), result.stdout
    assert "no data rows" not in result.stdout
    assert line_count(result.stdout, "skipped (not spectrum files by their names)") == 1
    assert re.search(r"^  \S*preview\.png$", result.stdout, re.M), result.stdout
    assert "Traceback" not in result.stdout + result.stderr

    clean = tmp_path / "clean"
    shutil.copytree(lamost_folder, clean)
    (clean / "notes.fits").unlink()
    again = specreview("ingest", str(clean), "--db", str(tmp_path / "x.duckdb"), "--no-progress")
    assert again.returncode == 0, again.stdout + again.stderr  # every spectrum there (already present): all done


def unlinked(db: Path) -> tuple[int, int]:
    """(trajectories, those without a spectrum)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*), count(*) FILTER (WHERE spectrum_id IS NULL) FROM trajectories").fetchone()
    finally:
        con.close()


def test_trajectories_imported_before_their_spectra_are_linked_by_the_ingest_that_brings_them(tmp_path, lamost_folder):
    source, out = tmp_path / "source.duckdb", tmp_path / "export"
    vet = specreview("vet", "--db", str(source), "--task", "a,mg", "--no-progress", str(lamost_folder))
    assert vet.returncode == 0, vet.stdout + vet.stderr
    assert specreview("export", "trajectories", "--db", str(source), "--out", str(out)).returncode == 0

    # elsewhere: the trajectories arrive first, their files later (another copy of the same files)
    here, files = tmp_path / "here.duckdb", tmp_path / "arrived"
    imported = specreview("import", "trajectories", str(out / "trajectories.jsonl"), "--db", str(here))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "the ingest of its file links it" in imported.stderr
    before = unlinked(here)
    assert before == (6, 6)
    shutil.copytree(lamost_folder, files)
    ingested = specreview("ingest", str(files), "--db", str(here), "--no-progress")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    assert line_count(ingested.stdout, "trajectories linked to their spectra") == 6
    after = unlinked(here)
    assert after == (6, 0), f"before {before}, after {after}"
    con = duckdb.connect(str(here), read_only=True)
    try:  # each to the spectrum of its own file, at its path here
        wrong = con.execute("SELECT count(*) FROM trajectories t JOIN spectra s USING (spectrum_id) "
                            "WHERE t.source_path <> s.source_path OR s.source_path NOT LIKE ?",
                            [f"{files}%"]).fetchone()[0]
    finally:
        con.close()
    assert wrong == 0

    # imported once more, now that the spectra are here: nothing added, nothing left unlinked
    again = specreview("import", "trajectories", str(out / "trajectories.jsonl"), "--db", str(here))
    assert again.returncode == 0 and "already present: 6" in again.stdout, again.stdout + again.stderr
    assert unlinked(here) == (6, 0)


def test_an_import_again_links_what_an_ingest_could_not(tmp_path, lamost_folder):
    """Ingested first under other names (so the ingest's link by name finds nothing), then the file
    imported again: the trajectories already present are linked by their content hash's spectrum id."""
    source, out = tmp_path / "source.duckdb", tmp_path / "export"
    assert specreview("vet", "--db", str(source), "--task", "a", "--no-progress", str(lamost_folder)).returncode == 0
    assert specreview("export", "trajectories", "--db", str(source), "--out", str(out)).returncode == 0
    here = tmp_path / "here.duckdb"
    assert specreview("import", "trajectories", str(out / "trajectories.jsonl"), "--db", str(here)).returncode == 0
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    for i, f in enumerate(sorted(lamost_folder.iterdir())):
        shutil.copyfile(f, renamed / f"copy-{i}.fits")
    assert specreview("ingest", str(renamed), "--db", str(here), "--no-progress").returncode == 0
    assert unlinked(here) == (3, 3)
    again = specreview("import", "trajectories", str(out / "trajectories.jsonl"), "--db", str(here))
    assert again.returncode == 0, again.stdout + again.stderr
    assert line_count(again.stdout, "linked to their spectra") == 3
    assert unlinked(here) == (3, 0)


@pytest.mark.parametrize("command", ["specreview serve", "panel serve"])
def test_a_server_that_cannot_take_its_database_stops_with_the_message(tmp_path, command):
    from served_app import free_port

    db = tmp_path / "held.duckdb"
    holder = duckdb.connect(str(db))  # this test process plays the first server
    port = str(free_port())
    env = dict(os.environ, SPECREVIEW_DB=str(db), PYTHONUNBUFFERED="1", SPECREVIEW_STATS_AT_START="0")
    argv = ([*SPECREVIEW, "serve", "--db", str(db), "--port", port] if command == "specreview serve" else
            [sys.executable, "-m", "panel", "serve", "reviewer", "--address", "127.0.0.1", "--port", port])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=REPO_ROOT, env=env)
    finally:
        holder.close()
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "the server stops: the review database cannot be opened" in out and "held.duckdb" in out, out[-3000:]
    assert "Traceback" not in out, out[-3000:]


def test_the_readme_lists_every_exit_code():
    from reviewer.cli.exits import EXIT_CODES

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Exit codes"):]
    section = section[:section.index("\n#", 1)]
    listed = [(int(code), meaning.strip()) for code, meaning in re.findall(r"^\| (\d+) \| (.+?) \|$", section, re.M)]
    assert listed == [(code, meaning) for code, meaning in EXIT_CODES]
