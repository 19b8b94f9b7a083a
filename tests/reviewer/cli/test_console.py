"""A command writes to the console it is given and stops, between items, when asked (reviewer.cli.console):
how the app runs a forwarded command without touching the process's own streams or raising in a thread."""
import io
import shutil
import sys

import pytest

from reviewer.cli import build_parser, run_args
from reviewer.cli.console import Console
from reviewer.store import Store


class CancelledAfter(Console):
    """A console whose client goes away after `n` items were started."""

    def __init__(self, n: int):
        super().__init__(io.StringIO(), io.StringIO())
        self.left = n

    def check(self) -> None:
        if self.left <= 0:
            self.cancelled.set()
        self.left -= 1
        super().check()


@pytest.fixture
def five_spectra(tmp_path, shared_spectra, manifest):
    folder = tmp_path / "spectra"
    folder.mkdir()
    picks = [r for r in manifest if "LAMOST-LRS" in r["survey"]][:5]
    for r in picks:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    return folder


def _run(argv: list[str], console: Console) -> int:
    return run_args(build_parser().parse_args(argv), console)


def test_output_goes_to_the_console_and_not_the_process_streams(tmp_path, five_spectra, capsys):
    console = Console(io.StringIO(), io.StringIO())
    stdout, stderr = sys.stdout, sys.stderr
    db = tmp_path / "c.duckdb"
    assert _run(["ingest", "--db", str(db), "--no-progress", str(five_spectra)], console) == 0
    assert _run(["vet", "--db", str(db), "--task", "a", "--no-progress", "--no-claims", str(five_spectra)], console) == 0
    assert _run(["session", "progress", "nope", "--db", str(db)], console) == 1
    assert sys.stdout is stdout and sys.stderr is stderr
    out, err = console.out.getvalue(), console.err.getvalue()
    assert "added: 5" in out and "vetted: 5" in out
    assert "no campaign named 'nope'" in err
    assert capsys.readouterr() == ("", "")  # nothing reached the process's own streams


def test_a_cancelled_ingest_keeps_what_it_registered_and_the_next_run_goes_on(tmp_path, five_spectra):
    db = tmp_path / "c.duckdb"
    console = CancelledAfter(2)
    assert _run(["ingest", "--db", str(db), "--no-progress", str(five_spectra)], console) == 130
    assert "interrupted" in console.err.getvalue()
    with Store(db) as store:
        assert store.spectra.count_spectra() == 2
    again = Console(io.StringIO(), io.StringIO())
    assert _run(["ingest", "--db", str(db), "--no-progress", str(five_spectra)], again) == 0
    assert "added: 3" in again.out.getvalue() and "already present: 2" in again.out.getvalue()


def test_a_cancelled_vet_stores_the_trajectories_it_finished_and_resumes(tmp_path, five_spectra):
    db = tmp_path / "c.duckdb"
    assert _run(["ingest", "--db", str(db), "--no-progress", str(five_spectra)], Console(io.StringIO(), io.StringIO())) == 0
    with Store(db) as store:
        ids = [r["spectrum_id"] for r in store.spectra.list_spectra()]
    console = CancelledAfter(3)  # the first three results are stored, the fourth is not taken
    assert _run(["vet", "--db", str(db), "--task", "a", "--no-progress", *ids], console) == 130
    assert "interrupted" in console.err.getvalue()
    with Store(db) as store:
        assert store.trajectories.count_trajectories(task="a") == 3
    again = Console(io.StringIO(), io.StringIO())
    assert _run(["vet", "--db", str(db), "--task", "a", "--no-progress", str(five_spectra)], again) == 0
    assert "vetted: 2" in again.out.getvalue() and "skipped (already vetted): 3" in again.out.getvalue()
