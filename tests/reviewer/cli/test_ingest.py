"""`specreview ingest` as a user runs it: a real subprocess, a real DuckDB file, real spectra."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
REAL_FILES = ("lamost_sbc/101030.fits", "sdss_lime/sdss_dr18_0358-51818-0504.fits", "pickles_pyhdust/o5v.dat")


def specreview(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reviewer.cli", *args], capture_output=True, text=True, timeout=180, cwd=REPO_ROOT,
    )


def counts(stdout: str) -> tuple[int, int, int]:
    def get(label: str) -> int:
        match = re.search(rf"^{label}: (\d+)$", stdout, re.M)
        assert match, f"no '{label}:' line in\n{stdout}"
        return int(match.group(1))

    return get("added"), get("already present"), get("failed")


@pytest.fixture
def folder(tmp_path, shared_spectra):
    root = tmp_path / "spectra"
    for rel in REAL_FILES:
        (root / Path(rel).parent).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_spectra / rel, root / rel)
    (root / "broken.fits").write_bytes(b"SIMPLE  =                    T" + b"\x00" * 100)
    return root


def test_ingest_folder_then_again(tmp_path, folder):
    db = tmp_path / "cli.duckdb"
    first = specreview("ingest", str(folder), "--db", str(db), "--no-progress")
    assert first.returncode == 1, first.stderr  # broken.fits failed (reviewer/cli/exits.py)
    assert counts(first.stdout) == (3, 0, 1)
    assert re.search(r"^  .*broken\.fits: \S.*$", first.stdout, re.M), first.stdout
    assert "Traceback" not in first.stdout + first.stderr

    second = specreview("ingest", str(folder), "--db", str(db))
    assert second.returncode == 1, second.stderr
    assert counts(second.stdout) == (0, 3, 1)

    con = duckdb.connect(str(db), read_only=True)
    names = sorted(r[0] for r in con.execute("SELECT file_name FROM spectra").fetchall())
    con.close()
    assert names == sorted(Path(rel).name for rel in REAL_FILES)


def test_everything_failing_exits_1(tmp_path, folder):
    result = specreview("ingest", str(folder / "broken.fits"), str(tmp_path / "missing.fits"),
                        "--db", str(tmp_path / "x.duckdb"))
    assert result.returncode == 1
    assert counts(result.stdout) == (0, 0, 2)
    assert "missing.fits: no such file or folder" in result.stdout


def test_usage_error_exits_2(tmp_path):
    result = specreview("ingest", "--db", str(tmp_path / "x.duckdb"))
    assert result.returncode == 2
    assert "PATH" in result.stderr


def test_database_from_environment(tmp_path, folder, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("SPECREVIEW_DB", str(db))
    result = specreview("ingest", str(folder / "pickles_pyhdust"))
    assert result.returncode == 0, result.stderr
    assert f"database: {db.resolve()}" in result.stdout
    assert counts(result.stdout) == (1, 0, 0)


def test_database_held_by_another_process_is_reported(tmp_path, folder):
    db = tmp_path / "busy.duckdb"
    holder = duckdb.connect(str(db))  # this test process plays the running app
    try:
        result = specreview("ingest", str(folder), "--db", str(db))
    finally:
        holder.close()
    assert result.returncode == 1
    assert "specreview: cannot open" in result.stderr and "Traceback" not in result.stderr
