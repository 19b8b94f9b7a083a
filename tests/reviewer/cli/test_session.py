"""`specreview session` end to end on a real DuckDB file (subprocess, as a user runs it)."""
import subprocess
import sys

from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


def cli(*args, db):
    return subprocess.run([sys.executable, "-m", "reviewer.cli", *args, "--db", str(db)],
                          capture_output=True, text=True, timeout=120)


def test_create_list_progress_close(tmp_path):
    db = tmp_path / "s.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    store.close()
    made = cli("session", "create", "a-pilot", "--task", "a", "--reviewers", "ann,bo", "--limit", "5", db=db)
    assert made.returncode == 0 and "5 trajectories" in made.stdout and "blind" in made.stdout
    listed = cli("session", "list", db=db)
    assert "a-pilot\tverdicts\tblind\topen\t5 items" in listed.stdout
    progress = cli("session", "progress", "a-pilot", db=db)
    assert "ann\t0/5" in progress.stdout and "bo\t0/5" in progress.stdout
    closed = cli("session", "close", "a-pilot", db=db)
    assert "frozen" in closed.stdout
    assert "closed" in cli("session", "list", db=db).stdout
    none = cli("session", "create", "empty", "--task", "nope", db=db)
    assert none.returncode == 1 and "no trajectory matches" in none.stderr


def test_progress_estimates_the_time_to_completion_from_timed_verdicts(tmp_path):
    from reviewer.services.items import find_campaign

    db = tmp_path / "s.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    store.close()
    assert cli("session", "create", "timed", "--task", "a", "--reviewers", "ann,bo", "--limit", "5", db=db).returncode == 0
    untimed = cli("session", "progress", "timed", db=db)
    assert "not estimated: 10 verdicts left, none timed yet" in untimed.stdout
    store = Store(db)
    campaign = find_campaign(store, "timed")
    for tid, seconds in zip(campaign["trajectory_ids"][:2], (60.0, 120.0), strict=True):  # ann's usual: 90 s
        store.labels.add_review(tid, "ann", "reject", session_id=campaign["id"], active_s=seconds)
    store.close()
    timed = cli("session", "progress", "timed", db=db)
    # 8 verdicts left (ann 3, bo 5) at 90 s each, two reviewers at once: 360 s = 0.1 h
    assert "ann\t2/5" in timed.stdout and "time to completion\t0.1 h of active time: 8 verdicts left" in timed.stdout
