"""Claim checks after storing (issue 48, reviewer/services/claim_checks.py): the low-priority checker
process stores what it checked and leaves the rest pending when it is stopped; an item opened while its
check is pending is checked then. Real LAMOST files of the demo, their rules trajectories, a real
DuckDB file; every stored result is compared with a fresh check of the same trajectory."""
import shutil
import time

from agents.claims import check_trajectory
from agents.spectra import read_spectrum
from agents.vet import vet_spectrum
from reviewer.services import items
from reviewer.services.claim_checks import ClaimLane, check_pending, pending, pending_count
from reviewer.services.claims import CHECKER_VERSION
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

LAMOST = ("spec-55862-B6212_sp01-001.fits.gz", "spec-55859-F5902_sp07-209.fits.gz", "spec-55862-B6202_sp07-004.fits.gz")


def _stored_vetted(store, folder, copies: int = 1):
    """The demo's LAMOST files registered, `copies` rules trajectories of task a on each, stored unchecked."""
    ingest_paths(store, [folder], progress=False)
    trajs, spectra = [], {}
    for rec in store.spectra.list_spectra():
        spec = read_spectrum(rec["source_path"])
        spectra[rec["spectrum_id"]] = spec
        trajs += [vet_spectrum(spec, "a", spectrum_id=rec["spectrum_id"]) for _ in range(copies)]
    store.trajectories.save_trajectories(trajs)
    return trajs, spectra


def _as_checked_fresh(store, traj, spec) -> bool:
    fresh = [(r.claim.text, r.verdict, r.measured) for r in check_trajectory(traj, spec)]
    stored = [(r["claim_text"], r["verdict"], r["measured"]) for r in store.claims.claims_for(traj.id, CHECKER_VERSION)]
    return fresh == stored


def _folder(tmp_path, demo_dir):
    folder = tmp_path / "lamost"
    folder.mkdir()
    for name in LAMOST:
        shutil.copy(demo_dir / name, folder / name)
    return folder


def test_the_lane_stores_what_it_checked_and_a_stop_leaves_the_rest_pending(tmp_path, demo_dir):
    with Store(tmp_path / "lane.duckdb") as store:
        trajs, spectra = _stored_vetted(store, _folder(tmp_path, demo_dir), copies=20)
        lane = ClaimLane()
        try:
            lane.submit(store, trajs[:3])
            deadline = time.monotonic() + 120
            while lane.checked < 3 and time.monotonic() < deadline:  # the process imports, then checks
                lane.collect(store, wait=1.0)
            assert lane.checked == 3 and not lane.problems
            for i in range(3, len(trajs), 4):
                lane.submit(store, trajs[i:i + 4])
        finally:
            lane.stop(store)  # at once: most of the groups are still queued
        left = pending(store)
        assert lane.checked >= 3 and lane.checked + len(left) == len(trajs) == len(set(lane.ids))  # none lost
        assert left or lane.checked == len(trajs)
        for traj in trajs:
            if traj.id not in left:
                assert _as_checked_fresh(store, traj, spectra[traj.spectrum_id])


def test_an_item_opened_while_its_check_is_pending_is_checked_then(tmp_path, demo_dir):
    with Store(tmp_path / "open.duckdb") as store:
        trajs, spectra = _stored_vetted(store, _folder(tmp_path, demo_dir))
        assert pending_count(store) == len(trajs)
        shown = items.stored_claims(store, trajs[0])
        assert shown and sorted(pending(store)) == sorted(t.id for t in trajs[1:])
        assert _as_checked_fresh(store, trajs[0], spectra[trajs[0].spectrum_id])
        assert [(r.claim.text, r.verdict) for r in shown] == [(r.claim.text, r.verdict) for r in
                                                               check_trajectory(trajs[0], spectra[trajs[0].spectrum_id])]


def test_pending_checks_in_worker_processes_store_what_a_check_here_stores(tmp_path, demo_dir):
    with Store(tmp_path / "workers.duckdb") as store:
        trajs, spectra = _stored_vetted(store, _folder(tmp_path, demo_dir), copies=15)
        steps = []
        done, totals, problems = check_pending(store, workers=2, step=steps.append)
        assert done == len(trajs) == sum(steps) and not problems and pending(store) == []
        assert totals["supported"] > 0
        for traj in trajs:
            assert _as_checked_fresh(store, traj, spectra[traj.spectrum_id])


def test_a_large_trajectory_is_not_checked_on_the_pages_thread(tmp_path, demo_dir):
    """A pending check runs as the item opens only within CHECK_ON_OPEN_MAX_CHARS of text: a megabyte step
    (a client's import) would stall the page; it stays pending for `specreview claims --pending`."""
    with Store(tmp_path / "big.duckdb") as store:
        trajs, _ = _stored_vetted(store, _folder(tmp_path, demo_dir))
        big = trajs[0].model_copy(deep=True)
        big.steps[-1].text = (big.steps[-1].text or "") + "[" * (items.CHECK_ON_OPEN_MAX_CHARS + 1)
        assert items.stored_claims(store, big) == ()
        assert big.id in pending(store)
