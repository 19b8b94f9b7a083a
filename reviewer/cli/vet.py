"""`specreview vet --task TASK [--backend rules|openai] PATH_OR_ID...`: run the Spec-o3 vetting
agent on spectra and store the trajectories. Paths not yet in the database are ingested first;
spectra already vetted with the same task/backend/model are skipped unless --force, so an
interrupted run resumes where it stopped (trajectories are stored as they finish, in small groups).
Each new trajectory's claims are checked against its spectrum (agents/claims). --claims now: on the
spectrum its job read (or this run read, to register it), and stored with it in the same transaction.
--claims after: the trajectory is stored first and checked after, in a process of its own at the lowest
CPU priority, so that a campaign runs at the agent's pace; what it has not checked when the run ends
stays pending, the run says how many, and `specreview claims --pending` checks them (as the review page
does for an item it opens). Default: after for a campaign of CLAIMS_AFTER_FROM (256) jobs or more, now
below. --no-claims: none now. The totals printed at the end count committed trajectories.

The openai backend keeps --concurrency requests in flight from this one process (threads sharing
one HTTP pool and rate limiter; 429/503 with Retry-After pause them all); each model step records
its latency and tokens, and the run ends with a summary; the zooms it asks for are drawn in
--render-processes worker processes so that renders do not serialize the threads on one core. The
rules backend spreads over --workers processes; either can run on Dask (--dask ADDRESS or
local[:N]), where workers only compute and this process writes the database."""
from __future__ import annotations

import argparse
import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from reviewer.cli.common import (
    TrajectoryWriter,
    add_batch_options,
    add_claims_option,
    batch_plan,
    changed_since_ingest,
    claim_checker,
    claims_report,
    known_task,
    llm_overrides,
    open_store,
    progress_stream,
    render_processes,
    store_triage_signals,
)
from reviewer.cli.console import Console, console_of
from reviewer.cli.exits import EXIT_OK, EXIT_SOME_FAILED


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("vet", help="vet spectra with the Spec-o3 protocol and store the trajectories",
                              description=__doc__.splitlines()[0])
    p.add_argument("items", nargs="+", metavar="PATH_OR_ID", help="spectrum file, folder, or stored spectrum id")
    p.add_argument("--task", required=True, help="kb task id (a, b, o, wd, mg, cv, cs, ss); comma-separate several")
    p.add_argument("--backend", choices=("rules", "openai"), default="rules")
    p.add_argument("--model", default=None, help="model name for --backend openai (else from env/config)")
    p.add_argument("--tool-protocol", choices=("native", "hermes"), default=None, help="openai backend tool protocol")
    p.add_argument("--force", action="store_true", help="vet again even when a trajectory exists")
    p.add_argument("--eager-renders", action="store_true", help="render every zoom now (default: on demand)")
    add_batch_options(p)
    add_claims_option(p)
    p.add_argument("--claims", choices=("now", "after"), default=None, dest="claims_when",
                   help="check the claims before storing each trajectory (now) or after, beside the run (after; "
                        "what is left stays pending for `specreview claims --pending`); default: after for "
                        f"{CLAIMS_AFTER_FROM} jobs or more, else now")
    return p


def resolve_items(store, items: list[str], console: Console, progress: TextIO | None) -> tuple[list[str], list[str]]:
    """Spectrum ids for ids and paths, each once, plus the problems met (stream_items, drained)."""
    problems: list[str] = []
    ids = [sid for batch in stream_items(store, items, console, progress, problems) for sid in batch]
    return list(dict.fromkeys(ids)), problems


def stream_items(store, items: list[str], console: Console, progress: TextIO | None,
                 problems: list[str], keep: Callable[[str, Any], None] | None = None) -> Iterator[list[str]]:
    """The spectrum ids of `items`, a batch at a time as they become known: the stored ids first, then
    the files' as the walk stores them (reviewer.services.ingest.ingest_stream), so that a run's first
    jobs start while its later files are still being read. The paths (a campaign's glob names every
    file) are registered in one walk, as `specreview ingest` does: one lookup of the known files per
    chunk and one cross-match of the new spectra, not one walk per file. An id may come twice (a file
    named twice, a copy of a file at another path). The problems met are appended to `problems`;
    `keep(spectrum_id, spectrum)` is given each spectrum the walk reads (MeasuredOnRegistering)."""
    from reviewer.services.ingest import ingest_stream
    from reviewer.services.items import records_of_spectra

    ids, paths = [], []
    stored = records_of_spectra(store, items)  # the items that are stored ids, in one query
    for item in items:
        if item in stored:
            ids.append(item)
        elif Path(item).exists():
            paths.append(item)
        else:
            problems.append(f"{item}: neither a stored spectrum id nor an existing path")
    if ids:
        yield ids
    if paths:
        summary = yield from ingest_stream(store, paths, progress=progress or False, check=console.check, keep=keep)
        problems += [f"{where}: {why}" for where, why in summary.failed]


# From this many jobs on, one worker's jobs run in a process of their own, started before the items
# are resolved (its imports, ~4 s, overlap this process's): docs/benchmarks.md, "The campaign, fourth
# pass" and "fifth pass"
PIPELINE_FROM = 256
# From this many jobs on, a run's claims are checked after its trajectories are stored, unless --claims says
CLAIMS_AFTER_FROM = 256
# what the rules jobs import (agents.vet's names are imported when first used: its graph is in .run): a
# worker process imports them as it starts (worker_pool)
JOB_MODULES = ("agents.spectra", "agents.vet.run", "agents.claims")


def claims_when(args: argparse.Namespace, n_jobs: int) -> str | None:
    """When the new trajectories' claims are checked: "now" (before each is stored), "after" (stored
    first, checked beside the run: reviewer.services.claim_checks.ClaimLane) or None (--no-claims). A
    campaign (PIPELINE_FROM jobs or more) checks after unless told: the check costs more than the rules
    agent's own work (docs/benchmarks.md, issue 48); a shorter run checks now, its flags ready when it
    ends."""
    if args.no_claims:
        return None
    return args.claims_when or ("after" if n_jobs >= CLAIMS_AFTER_FROM else "now")


def pipelined(args: argparse.Namespace, plan: dict, n_jobs: int) -> bool:
    """Whether the jobs of a one-worker run go to a worker process of their own while this process
    registers the files and writes the trajectories (and, with --claims now, checks their claims on the
    Measurer made from its own read of a file it registered, else the one the job made from the
    spectrum it read): the two halves of the work then run on two cores, as the vetting and the
    writing already do with --workers N. With more workers, each checks its own trajectories
    (vet_and_check_job): the check then scales with them. Rules backend, no Dask, and enough jobs."""
    return (args.backend == "rules" and not plan.get("dask_address")
            and plan.get("workers", 1) <= 1 and n_jobs >= PIPELINE_FROM)


def worker_pool(plan: dict, one_beside: bool, n_jobs: int):
    """The rules backend's worker processes, started before this process imports its own spectrum
    readers, so that the two import at once: the workers' ~3.5 s of imports then end ~2.3 s sooner, and
    the first results with them (docs/benchmarks.md, issue 22). The one worker beside this process of a
    pipelined run, or --workers N (no more than the run's likely jobs); None where the jobs run here,
    in threads, or on Dask."""
    from agents.batch import process_pool

    if one_beside:
        return process_pool(1, JOB_MODULES)
    workers = min(plan.get("workers", 1), n_jobs)  # a threaded or Dask plan names no workers (batch_plan)
    return process_pool(workers, JOB_MODULES) if workers > 1 else None


class MeasuredOnRegistering:
    """The Measurers (agents.claims: arrays and noise) of the spectra a pipelined run reads to register
    them, for the claim check of their jobs: the worker then reads the file to vet it and hands back the
    trajectory alone (~8 KB), not a Measurer of its own read as well (~70 KB a LAMOST spectrum, more than
    the 64 KB pipe holds: the worker waited on this process to drain it). Each is held from the read until
    its spectrum's last job is back, and at most `limit` at once (a DESI coadd's 500 spectra are not all
    held): a spectrum not held is measured where it is vetted (agents.jobs.vet_and_measure_job)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._held: dict = {}
        self._jobs: Counter = Counter()  # spectrum id -> its jobs not back yet

    def keep(self, spectrum_id: str, spectrum) -> None:
        if len(self._held) < self.limit:
            from agents.claims import Measurer

            self._held[spectrum_id] = Measurer.from_spectrum(spectrum)

    def claim(self, spectrum_id: str) -> bool:
        """Whether a job on the spectrum can leave its measuring here (then `take` once it is back)."""
        if spectrum_id in self._held:
            self._jobs[spectrum_id] += 1
            return True
        return False

    def drop_unclaimed(self, ids: list[str]) -> None:
        """Let go of the spectra no job was made for (vetted before, or changed since the read)."""
        for sid in ids:
            if not self._jobs[sid]:
                self._held.pop(sid, None)

    def take(self, spectrum_id: str):
        """The Measurer for a job on the spectrum that is back (done or failed)."""
        self._jobs[spectrum_id] -= 1
        if self._jobs[spectrum_id] > 0:
            return self._held[spectrum_id]
        del self._jobs[spectrum_id]
        return self._held.pop(spectrum_id)


def likely_jobs(items: list[str], tasks: list[str]) -> int:
    """The jobs a run will have at most, before its items are resolved, counted up to PIPELINE_FROM
    (a folder's walk stops there)."""
    import os

    from reviewer.services.spectrum_files import is_spectrum_candidate

    n = 0
    for item in items:
        walk = os.walk(item) if os.path.isdir(item) else [("", [], [item])]  # a file, an id: one job a task
        for root, _, names in walk:
            n += len(tasks) * sum(is_spectrum_candidate(Path(root, name)) or not root for name in names)
            if n >= PIPELINE_FROM:
                return n
    return n


def warm_up(cfg) -> None:
    """What each thread of an in-process LLM run would otherwise do first, all at once, while the
    run's clock runs and the first requests wait: import the spectrum readers and make this
    process's shared client (agents.llm.shared_chat: langchain-openai and its imports, ~1 s). The
    jobs rebuild the same configuration, so they find this client."""
    import agents.spectra  # noqa: F401
    from agents.llm import shared_chat

    shared_chat(cfg)


def make_jobs(store, args: argparse.Namespace, tasks: list[str], model: str, llm, batches: Iterator[list[str]],
              tally: Counter, counts: Counter, problems: list[str],
              measured: MeasuredOnRegistering | None = None) -> Iterator[dict]:
    """A job per spectrum and task, a batch of spectra at a time as `batches` (stream_items) gives them:
    those vetted before with this task, backend and model are skipped (unless --force), those whose file
    changed since it was ingested are refused (a failure, said in `problems`). `tally` counts the
    spectra, the jobs, the skipped and the refused. A job's `measured` says that its Measurer is in
    `measured`, made here."""
    from reviewer.services.items import records_of_spectra, spectra_with_trajectory

    seen: set[str] = set()
    with contextlib.closing(batches):  # closed with this generator: the walk's own ending (its cross-match) runs
        for batch in batches:
            ids = [sid for sid in dict.fromkeys(batch) if sid not in seen]
            seen.update(ids)
            tally["spectra"] += len(ids)
            records = records_of_spectra(store, ids)  # one query each a batch, not one a spectrum
            done = {task: set() if args.force else
                    spectra_with_trajectory(store, ids, task, args.backend, model) for task in tasks}
            for sid in ids:
                rec = records[sid]
                changed = None  # checked once a job on this spectrum is wanted
                for task in tasks:
                    if sid in done[task]:
                        tally["skipped"] += 1
                        continue
                    if changed is None:
                        changed = changed_since_ingest(rec)
                    if changed:  # not the file that was ingested: its trajectory would describe other data
                        problems.append(f"{rec['source_path']}#{rec['target'] or ''} [{task}]: {changed}")
                        tally["refused"] += 1
                        counts["failed"] += 1
                        continue
                    tally["jobs"] += 1
                    yield {"spectrum_id": sid, "source_path": rec["source_path"], "target": rec["target"],
                           "task": task, "backend": args.backend, "llm": llm, "eager": args.eager_renders,
                           "measured": measured is not None and measured.claim(sid)}
            if measured is not None:
                measured.drop_unclaimed(ids)


def deferred_claims_report(store, lane, writer: TrajectoryWriter, when: str | None) -> list[str]:
    """The run summary's lines about the claims not checked before storing: how many the checker
    process did beside the run, and how many of the run's trajectories are still pending."""
    if when == "now" or not writer.stored:
        return []
    from reviewer.services.claim_checks import pending_count
    from reviewer.services.claims import counts_text

    lines = []
    if lane is not None:
        lines.append(f"claims checked beside the run: {lane.checked} trajectories ({counts_text(lane.totals)})")
        lines += [f"  problem: {p}" for p in lane.problems]
        left = pending_count(store, lane.ids)
    else:
        left = writer.stored
    lines.append(f"claim checks pending: {left} (`specreview claims --pending` checks them; the review page "
                 "checks an item's when it opens it)")
    return lines


def _answer(traj) -> str:
    out = traj.outcome
    return out.get("prediction") or out.get("status")


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    from agents.llm import load_config

    tasks = [t.strip() for t in args.task.split(",") if t.strip()]
    if not all(known_task(console, "vet", t) for t in tasks):
        return 2
    llm = cfg = None
    if args.backend == "openai":
        llm = llm_overrides(args, tool_protocol=args.tool_protocol)
        cfg = load_config(**llm)
    plan, llm = batch_plan(args, cfg, llm)
    store = open_store(args)
    if store is None:
        return 1
    pool = jobs = signals = lane = None
    try:
        n_jobs = likely_jobs(args.items, tasks)
        one_beside = pipelined(args, plan, n_jobs)
        when = claims_when(args, n_jobs)
        pool = worker_pool(plan, one_beside, n_jobs)
        # imported once the workers are importing the same (~2.5 s of spectrum readers): not one after the other
        from agents import render_pool
        from agents.batch import run_batch
        from agents.jobs import vet_and_check_job, vet_and_measure_job, vet_job
        from agents.usage import RunSummary, step_usages
        from agents.vet.rules_version import RULES_VERSION
        from reviewer.services.ingest import WRITE_GROUP

        progress = progress_stream(args)
        model = RULES_VERSION if cfg is None else cfg.model
        # the render processes start now, and get ready while the items are resolved
        with render_pool.running(render_processes(args, plan)):
            problems: list[str] = []
            counts: Counter = Counter()
            tally: Counter = Counter()  # spectra resolved, jobs made, skipped as vetted before
            measured = MeasuredOnRegistering(limit=4 * WRITE_GROUP) if one_beside and when == "now" else None
            batches = stream_items(store, args.items, console, progress, problems, measured and measured.keep)
            jobs = make_jobs(store, args, tasks, model, llm, batches, tally, counts, problems, measured)
            in_process = not plan.get("dask_address") and plan.get("workers", 1) <= 1
            checker = claim_checker(args, store) if when == "now" else None
            # one read of each file: each job checks its trajectory's claims where it ran, on the
            # spectrum it read (the check spread over the workers), or, with one worker process,
            # hands over the Measurer it made for this process to check beside it
            job_fn = vet_job if checker is None else vet_and_measure_job if one_beside else vet_and_check_job
            if when == "after":
                from reviewer.services.claim_checks import ClaimLane

                lane = ClaimLane()
            writer = TrajectoryWriter(store, claims=checker, background=True,
                                      after_write=None if lane is None else lambda group: lane.submit(store, group))
            if cfg is not None and in_process:
                warm_up(cfg)
            summary = RunSummary()  # the clock starts when the jobs do
            with writer:
                # jobs are made as the walk stores their files: a group's worth more in flight keeps
                # the workers busy while this process reads the next group
                for job, result in run_batch(job_fn, jobs, **plan, pool=pool, ahead=WRITE_GROUP, progress=progress,
                                             desc="vet", unit="traj", postfix=lambda *_: summary.postfix()):
                    console.check()
                    here = measured.take(job["spectrum_id"]) if job["measured"] else None
                    if isinstance(result, BaseException):
                        problems.append(f"{job['source_path']}#{job['target'] or ''} [{job['task']}]: "
                                        f"{type(result).__name__}: {result}")
                        counts["failed"] += 1
                        summary.add(ok=False)
                        continue
                    traj, checked = result if isinstance(result, tuple) else (result, here)
                    writer.add(traj, checked)
                    summary.add(step_usages(traj), ok=traj.outcome.get("status") != "error")
                    counts[_answer(traj)] += 1
            # the totals below are printed once every group is committed, and count stored work only
            for traj, exc in writer.errors:
                problems.append(f"{traj.source_path}#{traj.target or ''} [{traj.task}]: not stored: {exc}")
                counts[_answer(traj)] -= 1
                counts["failed"] += 1
        if lane is not None:  # what it checked is stored; the rest stays pending
            lane.stop(store)
        pending = deferred_claims_report(store, lane, writer, when)
        signals = store_triage_signals(store, writer.spectra)  # a run stopped early leaves them to the first read
    finally:
        if lane is not None:
            lane.stop(store)
        if jobs is not None:  # a run stopped early: the walk writes what it read before the store closes
            jobs.close()
        if pool is not None:  # run_batch shuts the pool it ran; this one is for a run that failed before it
            pool.shutdown(cancel_futures=True)
        store.close()
    console.say(f"database: {store.path}")
    breakdown = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()) if v)
    console.say(f"vetted: {sum(v for k, v in counts.items() if k != 'failed')} ({breakdown})")
    console.say(f"skipped (already vetted): {tally['skipped']}")
    for line in summary.lines("trajectories"):
        console.say(line)
    if tally["jobs"] and one_beside:
        console.say("vetted in one worker process; " + ("claims checked and stored beside it, in this one"
                                                        if when == "now" else "stored beside it, in this one"))
    for line in claims_report(writer) + pending:
        console.say(line)
    if signals:
        console.say(signals)
    for p in problems:
        console.say(f"  problem: {p}")
    # reviewer/cli/exits.py: 0 when every item was vetted (or had been), 1 when any failed (each a problem line)
    return EXIT_OK if tally["spectra"] and not counts["failed"] and not problems else EXIT_SOME_FAILED
