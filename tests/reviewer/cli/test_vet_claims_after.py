"""A campaign whose claims are checked after storing (issue 48): `specreview vet --claims after` killed
mid-way (SIGKILL to its process group, the harshest stop) leaves every trajectory it committed either
checked, with results equal to a fresh check, or pending; `specreview claims --pending` then checks the
pending ones and the campaign, run again, resumes where it stopped: no check is lost. Real LAMOST files
of the shared corpus, a real DuckDB file, a real subprocess watched through its progress bar (a
terminal of its own), killed once it has handed back KILL_AFTER trajectories."""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from agents.claims import check_trajectory
from agents.spectra import read_spectrum
from reviewer.cli import main
from reviewer.services.claim_checks import pending
from reviewer.services.claims import CHECKER_VERSION
from reviewer.store import Store

ROOT = Path(__file__).resolve().parents[3]
KILL_AFTER = 96  # trajectories handed back: three of the writer's groups of 32 at least queued
_DONE = re.compile(rb"vet:(?:[^\r|]*\|[^\r|]*\|)? *(\d+)(?:/\d+)?(?:traj)? \[")


def _run_until(args: list[str], done: int, timeout: float = 240.0) -> tuple[bool, bytes]:
    """Run `specreview ARGS` on a terminal of its own and SIGKILL its process group once its progress bar
    says `done` trajectories are back. (killed, what it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # tqdm draws a bar only with a width
    proc = subprocess.Popen([sys.executable, "-m", "reviewer.cli", *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.close(slave)
    seen, killed = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
                counts = _DONE.findall(seen)
                if counts and int(counts[-1]) >= done:
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
                    break
            elif proc.poll() is not None:
                break
    finally:
        if proc.poll() is None and not killed:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        os.close(master)
    return killed, seen


def _as_a_fresh_check(store, trajectory_ids) -> None:
    for tid in trajectory_ids:
        traj = store.trajectories.load_trajectory(tid)
        fresh = check_trajectory(traj, read_spectrum(traj.source_path))
        stored = store.claims.claims_for(tid, CHECKER_VERSION)
        assert [(r.claim.text, r.verdict, r.measured) for r in fresh] == [
            (r["claim_text"], r["verdict"], r["measured"]) for r in stored], tid


def test_a_campaign_killed_mid_way_leaves_its_claim_checks_pending_and_none_is_lost(tmp_path, shared_spectra,
                                                                                   manifest, capsys):
    files = list(dict.fromkeys(str(shared_spectra / r["file"]) for r in manifest
                               if "LAMOST-LRS" in r["survey"] and "#" not in r["file"]))
    assert len(files) > 2 * KILL_AFTER
    db = tmp_path / "campaign.duckdb"
    killed, said = _run_until(["vet", "--task", "a", "--claims", "after", "--db", str(db), *files], KILL_AFTER)
    assert killed, said[-2000:].decode(errors="replace")
    with Store(db) as store:  # what the killed run committed, whole: a trajectory with its steps
        stored = [r["id"] for r in store.trajectories.list_trajectories()]
        left = pending(store)
        assert 0 < len(stored) < len(files)
        # checks lag the campaign (they cost more than the agent's work, at the lowest CPU priority): some
        # were still pending when it was killed; those it stored are each a whole check
        assert left and set(left) <= set(stored)
        _as_a_fresh_check(store, set(stored) - set(left))

    assert main(["claims", "--pending", "--db", str(db), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"checked: {len(left)} pending trajectories" in out and "still pending: 0" in out
    with Store(db) as store:
        assert pending(store) == []
        _as_a_fresh_check(store, left)

    # the campaign itself resumes: what it stored is skipped, the rest vetted (and checked now)
    assert main(["vet", "--task", "a", "--claims", "now", "--db", str(db), "--no-progress", *files]) == 0
    assert f"skipped (already vetted): {len(stored)}" in capsys.readouterr().out
    with Store(db) as store:
        assert store.trajectories.count_trajectories() == len(files) and pending(store) == []
