"""Claim checks off a campaign's critical path (issue 48): `specreview vet` stores its trajectories
first and their claims are checked after, so that the campaign runs at the agent's pace.

A trajectory's check is pending while the store records no check of it (table claim_checks, written
with the results, no claim found included) under the current checker version (agents.claims
CHECKER_VERSION, or the same version with a model's help: "<version>+llm:<model>"). Nothing else marks
it, so nothing is lost when a process stops: what a stopped campaign left is still pending, and
`specreview claims --pending` checks it (`check_pending`), as does the reviewer's page when it opens
such an item (reviewer/services/items.py).

During a campaign the checks run in a process of their own at the lowest CPU priority (`ClaimLane`):
it takes each group of trajectories once it is committed and hands back their results, which the
campaign's writer stores; what it has not done when the campaign ends stays pending, and the
campaign says how many. No Panel; the SQL is the store's (reviewer/store/claims.py)."""
from __future__ import annotations

import logging
import multiprocessing as mp
import queue
from collections import Counter
from collections.abc import Callable, Iterable

from agents.claims import CHECKER_VERSION
from reviewer.services.claims import ClaimChecker, claim_rows, llm_version

log = logging.getLogger(__name__)
# the check of one group is stored in one transaction: a commit each (~20-40 ms of wall time, mostly
# the write-ahead log) cost more than many checks
STORE_GROUP = 32
# a stored result counts as checked under the patterns' version, or under it with a model's help
_CHECKED_VERSIONS = (CHECKER_VERSION, llm_version("", CHECKER_VERSION))  # (the version, the prefix)


def pending(store, trajectory_ids: Iterable[str] | None = None, limit: int | None = None) -> list[str]:
    """The trajectories (of `trajectory_ids`, else of the whole store) whose claims the current checker
    has not checked, oldest first."""
    return store.claims.unchecked(_CHECKED_VERSIONS, trajectory_ids, limit)


def pending_count(store, trajectory_ids: Iterable[str] | None = None) -> int:
    return store.claims.count_unchecked(_CHECKED_VERSIONS, trajectory_ids)


# what a checker process is given per trajectory: its JSON and the content hash stored at ingest (None:
# not known), so that a file changed since is refused as ClaimChecker refuses it
Checked = tuple[str, "str | None", "list | str"]  # (trajectory id, version, rows) or (id, None, why not)


def checked_claims(items: list[tuple[str, str | None]]) -> tuple[list[Checked], dict]:
    """The claims of trajectories ((JSON, file hash) each; the spectrum read from the trajectory's own
    path): (id, version, rows to store) each, or (id, None, why not), and the verdict totals. Runs in a
    process of its own (ClaimLane, the server's render process for the demo) or here."""
    from agents.trajectory import Trajectory
    from reviewer.services.spectra_cache import check_unchanged

    checker, out = ClaimChecker(), []
    for text, sha in items:
        traj = Trajectory.from_json(text)
        try:
            if sha and traj.source_path:
                check_unchanged(traj.source_path, sha)
            checked = checker.run(traj)
        except Exception as err:  # a check that fails leaves that trajectory pending, not the others
            out.append((traj.id, None, f"{type(err).__name__}: {err}"))
            continue
        out.append((traj.id, checked.version, claim_rows(checked.results)))
    return out, dict(checker.totals)


def store_checked(store, checked: list[Checked]) -> list[str]:
    """Store the results of `checked_claims` (one transaction per checker version); returns the
    problems (trajectory id: why it was not checked)."""
    by_version: dict[str, list] = {}
    problems = []
    for trajectory_id, version, rows in checked:
        if version is None:
            problems.append(f"{trajectory_id}: claims not checked: {rows}")
        else:
            by_version.setdefault(version, []).append((trajectory_id, rows))
    for version, results in by_version.items():
        store.claims.save_claims_of(version, results)
    return problems


def to_check(store, trajectories: list) -> list[tuple[str, str | None]]:
    """What `checked_claims` takes for stored trajectories: each one's JSON, located where the store has
    its spectrum (as ClaimChecker reads it), and the content hash stored at ingest."""
    records = store.spectra.get_spectra(list({t.spectrum_id for t in trajectories if t.spectrum_id}))
    out = []
    for traj in trajectories:
        rec = records.get(traj.spectrum_id)
        if rec is not None:
            traj = traj.model_copy(update={"source_path": rec["source_path"], "target": rec["target"]})
        out.append((traj.to_json(), rec and rec.get("file_sha256")))
    return out


def _check_in_processes(store, ids: list[str], workers: int, step) -> tuple[int, Counter, list[str]]:
    """`check_pending` over `workers` processes: this process loads each group and stores its checks."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from agents.batch import process_pool

    done, totals, problems = 0, Counter(), []
    pool = process_pool(workers, ("agents.claims", "agents.spectra"))
    in_flight: dict = {}

    def store_one(finished) -> None:
        nonlocal done
        for future in finished:
            n = in_flight.pop(future)
            checked, counts = future.result()
            problems.extend(store_checked(store, checked))
            totals.update(counts)
            done += sum(version is not None for _, version, _ in checked)
            if step is not None:
                step(n)

    try:
        for start in range(0, len(ids), STORE_GROUP):
            while len(in_flight) >= 2 * workers:
                store_one(wait(in_flight, return_when=FIRST_COMPLETED).done)
            trajs = [t for t in (store.trajectories.load_trajectory(tid) for tid in ids[start:start + STORE_GROUP]) if t]
            in_flight[pool.submit(checked_claims, to_check(store, trajs))] = len(trajs)
        while in_flight:
            store_one(wait(in_flight, return_when=FIRST_COMPLETED).done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done, totals, problems


def check_pending(store, trajectory_ids: Iterable[str] | None = None, *, step: Callable[[int], None] | None = None,
                  checker: ClaimChecker | None = None, workers: int = 1) -> tuple[int, Counter, list[str]]:
    """Check the pending trajectories (of `trajectory_ids`, else of the store) here, or in `workers`
    processes, storing a group of STORE_GROUP at a time: a stop loses at most the groups being
    checked, and they stay pending. `step(n)` is called after each group (a progress bar; a command's
    cancel check). Returns (checked, verdict totals, problems)."""
    ids = pending(store, trajectory_ids)
    if workers > 1 and len(ids) > STORE_GROUP:
        return _check_in_processes(store, ids, workers, step)
    checker = checker or ClaimChecker(store)
    done, problems = 0, []
    for start in range(0, len(ids), STORE_GROUP):
        group: dict[str, list[tuple[str, list]]] = {}
        for tid in ids[start:start + STORE_GROUP]:
            traj = store.trajectories.load_trajectory(tid)
            if traj is None:
                continue
            try:
                run = checker.run(traj)
            except Exception as err:
                problems.append(f"{tid}: claims not checked: {type(err).__name__}: {err}")
                continue
            if run.problem:
                problems.append(run.problem)
            group.setdefault(run.version, []).append((tid, claim_rows(run.results)))
            done += 1
        for version, results in group.items():  # one transaction each (a group has one version but a model's failure)
            store.claims.save_claims_of(version, results)
        if step is not None:
            step(min(STORE_GROUP, len(ids) - start))
    return done, checker.totals, problems


# trajectories whose check on open failed in this process (their file gone or changed): not tried on
# every open again; `specreview claims --pending` names why
_refused_on_open: set[str] = set()
_REFUSED_KEPT = 10_000


def check_on_open(store, trajectory_id: str) -> bool:
    """Check a trajectory's claims now if its check is pending (an item a reviewer opens before anyone
    ran `specreview claims --pending`), and store them; True when it was checked now."""
    if trajectory_id in _refused_on_open or not pending(store, [trajectory_id]):
        return False
    try:
        done, _, problems = check_pending(store, [trajectory_id])
    except Exception as err:  # e.g. the demo's own check storing the same rows at once: the page opens anyway
        log.warning("claims of %s not checked on open: %s: %s", trajectory_id, type(err).__name__, err)
        return False
    if problems:
        if len(_refused_on_open) >= _REFUSED_KEPT:
            _refused_on_open.clear()
        _refused_on_open.add(trajectory_id)
        log.warning("claims of %s not checked on open: %s", trajectory_id, "; ".join(problems))
    return bool(done)


def _serve(tasks, results) -> None:
    """The checker process: groups in, their checks out, at the lowest CPU priority, so that the agent's
    own process and the campaign's writer (which wait for nothing it does) keep their cores."""
    import os
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign ends it (ClaimLane.stop), not a Ctrl-C
    os.nice(19)
    while True:
        items = tasks.get()
        if items is None:
            return
        results.put(checked_claims(items))


class ClaimLane:
    """One low-priority process that checks a campaign's trajectories after they are stored. `submit`
    hands it a committed group; `collect` stores what it has handed back (call it in the thread that
    writes the store); `stop` stores what is back and ends it, leaving the rest pending."""

    def __init__(self):
        ctx = mp.get_context("spawn")  # not fork: the campaign's process has threads (the writer, the walk)
        self._tasks, self._results = ctx.Queue(), ctx.Queue()
        self._process = ctx.Process(target=_serve, args=(self._tasks, self._results), daemon=True,
                                    name="specreview-claim-checks")
        self._process.start()
        self._stopped = False
        self.ids: list[str] = []  # the trajectories submitted
        self.checked = 0
        self._out = 0  # groups submitted and not back
        self.totals: Counter = Counter()
        self.problems: list[str] = []

    def submit(self, store, trajectories: list) -> None:
        """Queue the checks of stored trajectories, then store the checks handed back meanwhile. A
        campaign's writer calls it after each commit (TrajectoryWriter's after_write), in its own thread."""
        if trajectories:
            self._tasks.put(to_check(store, trajectories))
            self._out += 1
            self.ids += [t.id for t in trajectories]
        self.collect(store)

    def collect(self, store, wait: float | None = None) -> int:
        """Store the checks handed back so far (waiting up to `wait` s for the next one); returns how
        many trajectories were checked."""
        done = 0
        while self._out:
            try:
                checked, totals = self._results.get(timeout=wait) if wait else self._results.get_nowait()
            except queue.Empty:
                break
            self._out -= 1
            self.problems += store_checked(store, checked)
            self.totals.update(totals)
            done += sum(version is not None for _, version, _ in checked)
            wait = None
        self.checked += done
        return done

    def stop(self, store) -> None:
        """Store what is back, end the process (its current group stays pending) and close the queues
        without waiting for what they still hold. Once; later calls do nothing."""
        if self._stopped:
            return
        self._stopped = True
        self.collect(store)
        self._process.terminate()
        self._process.join(timeout=10)
        for q in (self._tasks, self._results):  # a process gone never drains its pipe: exit without waiting on it
            q.cancel_join_thread()
            q.close()
