"""Helpers every subcommand shares: which database, and opening it with a readable error."""
from __future__ import annotations

import argparse
import os
import queue
import threading
import time
from pathlib import Path
from typing import TextIO

from reviewer.cli.console import Console, console_of
from reviewer.store import Store, StoreDamaged, StoreUnavailable, resolve_db_path
from reviewer.store.duckdb_words import is_lock, lock_pid


def db_path(args: argparse.Namespace) -> Path:
    """`--db`, else $SPECREVIEW_DB, else the per-user default."""
    return resolve_db_path(getattr(args, "db", None))


def is_locked(exc: BaseException) -> bool:
    """True when `exc` (from opening the store) says another process holds the file's lock; False
    for a damaged file and every other reason."""
    if not isinstance(exc, StoreUnavailable) or isinstance(exc, StoreDamaged):
        return False
    return is_lock(str(exc))


def lock_holder(exc: BaseException) -> int | None:
    """The pid DuckDB's lock error names as holding the file, when it does."""
    return lock_pid(f"{exc} {exc.__cause__ or ''}")


def open_store(args: argparse.Namespace) -> Store | None:
    """The store named by the arguments, or None after printing why it cannot be opened (e.g. another
    process holds it: DuckDB lets one process at a time write a file). A running app is not such a
    process: `main` sends the command to it (reviewer/cli/remote.py) before it gets here."""
    path = db_path(args)
    console = console_of(args)
    try:
        store = Store(path)
        store.probe()
        return store
    except StoreUnavailable as exc:
        console.warn(f"specreview: {exc}")
        if is_locked(exc):
            console.warn(f"specreview: another process has {path.name} open (an app serving it would have run "
                         "this command itself): wait for it to finish, or stop it")
        return None


def changed_since_ingest(record: dict) -> str:
    """Why a stored spectrum's file may not be given to an agent: it is no longer the file that was
    ingested (its content hash differs; reviewer.services.spectra_cache.SpectrumChanged). '' when it is the same,
    or cannot be read (the job then says so, as for any unreadable file)."""
    from reviewer.services.spectra_cache import SpectrumChanged, check_unchanged

    try:
        check_unchanged(record["source_path"], record.get("file_sha256"))
    except SpectrumChanged as exc:
        return exc.problem
    except OSError:
        return ""
    return ""


def known_task(console: Console, command: str, task_id: str) -> bool:
    """True for a kb task id; otherwise say why (naming the known tasks) and return False."""
    import kb

    try:
        kb.task(task_id)
    except KeyError as exc:
        console.warn(f"specreview {command}: {exc.args[0]}")
        return False
    return True


# -- batch runs: the options vet, verify (and any later batch command, e.g. claims) share --------
def add_batch_options(p: argparse.ArgumentParser, *, llm: bool = True) -> None:
    """--workers, --dask, --no-progress and, for commands that may call a model, --concurrency and
    --max-rps. Read them back with `batch_kwargs`."""
    p.add_argument("--workers", type=int, default=1, help="worker processes for the rules backend (default 1)")
    p.add_argument("--dask", default=None, metavar="ADDRESS|local[:N]",
                   help="run on a Dask scheduler (tcp://host:8786) or on a LocalCluster of N worker processes; "
                        "workers only compute, this process writes the database")
    if llm:
        p.add_argument("--concurrency", type=int, default=None, metavar="N",
                       help="model requests in flight from this process for --backend openai "
                            "(default: the LLM config's, else 16)")
        p.add_argument("--max-rps", type=float, default=None, metavar="R",
                       help="at most R model requests started per second (default: no bound)")
        p.add_argument("--render-processes", type=int, default=None, metavar="P",
                       help="with --backend openai and no --dask: draw the zooms in P processes while the "
                            "threads wait on the model (default: one per CPU, at most 4; 0 = in the threads)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def llm_overrides(args: argparse.Namespace, **extra) -> dict:
    """LLM config overrides from the command line (None = keep the config's value); the key is never
    among them: workers read it from their own environment or config file."""
    out = {"model": getattr(args, "model", None), "concurrency": getattr(args, "concurrency", None),
           "max_rps": getattr(args, "max_rps", None), **extra}
    return {k: v for k, v in out.items() if v is not None}


def batch_plan(args: argparse.Namespace, llm_config=None, llm: dict | None = None) -> tuple[dict, dict | None]:
    """(agents.batch.run_batch keyword arguments, the LLM overrides each job carries).

    With a model (llm_config given), one process keeps `concurrency` requests in flight from as many
    threads (they wait on the server, not the CPU). With --dask local:N as well, the N worker
    processes share that number (each gets concurrency / N threads and a limiter of that size), for
    when renders fill one core. Without a model: --workers processes. On a scheduler address the
    workers keep their own threads, and each worker process limits itself to `concurrency`."""
    from agents.batch import local_workers, parse_dask

    if llm_config is None:
        return ({"dask_address": args.dask} if args.dask else {"workers": args.workers}), llm
    threads = max(llm_config.concurrency, 1)
    if not args.dask:
        if args.workers > 1:
            console_of(args).warn("specreview: --workers is for the rules backend; with a model, --concurrency "
                                  "sets the requests in flight (add --dask local:N to spread them over N processes)")
        return {"threads": threads}, llm
    if parse_dask(args.dask)[0] == "local":
        llm = {**(llm or {}), "concurrency": max(1, -(-threads // local_workers(args.dask)))}
    return {"dask_address": args.dask, "threads": threads}, llm


def render_processes(args: argparse.Namespace, plan: dict) -> int:
    """Render processes for a threaded LLM run (0 otherwise: processes and Dask workers draw their own).

    One per CPU (at most 4), not one fewer: the threads' process needs about half a core, and the
    zooms of 32 conversations arrive in bursts, so with CPUs - 1 workers a burst queued on one
    worker while the other core idled (2-core machine: 10.6 -> 14.7 trajectories/s with 2)."""
    if "threads" not in plan or plan.get("dask_address"):
        return 0
    if getattr(args, "render_processes", None) is not None:
        return max(args.render_processes, 0)
    return min(4, os.cpu_count() or 1)


def progress_stream(args: argparse.Namespace) -> TextIO | None:
    """Where a progress bar goes (the command's stderr), or None: --no-progress, or nobody watching."""
    console = console_of(args)
    return console.err if console.shows_progress(getattr(args, "no_progress", False)) else None


class TrajectoryWriter:
    """Stores a batch run's trajectories a few at a time, in one transaction per group: a commit
    per trajectory (~40 ms of wall time, mostly the write-ahead log) would cap a fast LLM run at
    ~25 trajectories/s in this, the only writing, thread. A group is written when it holds
    `group` trajectories or `max_wait_s` passed since the last write, and on close, so an
    interrupted run loses at most that much, and resumes as usual. A group that fails is retried
    one by one, so one bad trajectory does not take its neighbours down with it.

    A group is a few statements whatever its size (all its trajectories, all their steps, all their
    claim results: store.trajectories.save_trajectories, store.claims.save_claims_of), and `stored`
    counts what was committed: a trajectory is durable, with its steps and claims, once it counts
    there, and a run that reports its totals after `close` reports only committed work.

    With `claims` (a reviewer.services.claims.ClaimChecker), each trajectory's claims are checked when it
    is added (unless its job checked them where it ran: `add(traj, checked)`), against the Measurer
    its job made when it hands one over (`add(traj, measurer)`), before it is saved, and stored with
    it in the same transaction; a trajectory whose check fails (its spectrum unreadable) is still
    stored, and the failure is in `claim_errors`.

    `background=True`: checking and writing happen on a thread of their own, and `add` only hands
    the trajectory over (it waits only when `4 x group` are already waiting). The loop that
    collects a batch's results then never stalls on a claim check or a write (the database waits
    on the disk with the GIL free, ~20-100 ms a trajectory on a busy machine) while workers wait
    for their next job; `errors` and `claim_errors` are complete once the writer is closed.

    `after_write(trajectories)` is called in the writing thread with each group once it is committed
    (a campaign's claim checks after storing: reviewer.services.claim_checks.ClaimLane); what it
    raises is kept in `after_write_errors` with the group and never undoes the write."""

    def __init__(self, store: Store, group: int = 32, max_wait_s: float = 0.5, claims=None,
                 background: bool = False, after_write=None):
        self.store, self.group, self.max_wait_s = store, group, max_wait_s
        self.claims = claims
        self.after_write = after_write
        self._clock = time.monotonic
        self._pending: list = []  # (trajectory, claim rows or None)
        self._last = self._clock()
        self.errors: list[tuple[object, Exception]] = []  # (trajectory, why it could not be stored)
        self.claim_errors: list[tuple[object, Exception]] = []  # (trajectory, why its claims were not checked)
        self.after_write_errors: list[tuple[list, Exception]] = []  # (stored group, what after_write raised)
        self.stored = 0  # trajectories committed
        self.spectra: set[str | None] = set()  # the spectra of those (None: trajectories without one)
        self._queue: queue.Queue | None = None
        self._thread: threading.Thread | None = None
        if background:
            self._queue = queue.Queue(maxsize=4 * max(group, 1))
            self._thread = threading.Thread(target=self._drain, name="trajectory-writer", daemon=True)
            self._thread.start()

    def add(self, traj, checked=None) -> None:
        """Store `traj` (with its claims: `checked`, the results or the exception of a check its job
        already made, agents.jobs.vet_and_check_job; else the writer's checker checks it, against the
        Measurer `checked` holds when its job made one, agents.jobs.vet_and_measure_job)."""
        item = traj if checked is None else (traj, checked)
        if self._thread is None:
            self._add(item)
        else:
            self._hand_over(item)

    def _hand_over(self, item) -> None:
        while True:
            try:
                self._queue.put(item, timeout=1.0)
                return
            except queue.Full:
                if not self._thread.is_alive():  # never wait for a writer that is gone
                    raise RuntimeError("the trajectory writer thread stopped") from None

    def _add(self, item) -> None:
        traj, checked = item if isinstance(item, tuple) else (item, None)
        rows = None
        if self.claims is not None:
            try:
                from agents.claims import Measurer  # imported by then: the checker uses it

                if isinstance(checked, BaseException):
                    raise checked
                if checked is None:
                    rows = self.claims.rows(traj)
                elif isinstance(checked, Measurer):
                    rows = self.claims.rows(traj, checked)
                else:
                    rows = self.claims.accept(traj, checked)
            except Exception as exc:
                self.claim_errors.append((traj, exc))
        self._pending.append((traj, rows))
        if len(self._pending) >= self.group or self._clock() - self._last >= self.max_wait_s:
            self.flush()

    def _drain(self) -> None:
        """The background thread: add what arrives, write a group that waited max_wait_s."""
        assert self._queue is not None
        while True:
            wait = max(self.max_wait_s - (self._clock() - self._last), 0.0) if self._pending else None
            try:
                traj = self._queue.get(timeout=wait)
            except queue.Empty:
                self._write_safely()
                continue
            if traj is _CLOSE:
                self._write_safely()
                return
            try:
                self._add(traj)
            except Exception as exc:  # a write that failed outside flush's own recovery
                self.errors.append((traj[0] if isinstance(traj, tuple) else traj, exc))

    def _write_safely(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # flush records per-trajectory errors itself; this is a last resort
            self.errors += [(traj, exc) for traj, _ in self._pending]
            self._pending = []

    def _version(self) -> str | None:
        return self.claims.version if self.claims is not None else None

    def _save(self, traj, rows) -> None:
        from reviewer.services.trajectories import save_checked

        save_checked(self.store, traj, self._version(), rows)

    def _save_group(self, pending) -> None:
        """A group in a few statements (reviewer.services.trajectories.save_checked_group)."""
        from reviewer.services.trajectories import save_checked_group

        save_checked_group(self.store, pending, self._version())

    def flush(self) -> None:
        """Write the trajectories held, in one transaction: each is durable once this returns (and
        `stored` counts it), and none is half-written (its steps and claims commit with it)."""
        pending, self._pending = self._pending, []
        self._last = self._clock()
        if not pending:
            return
        written = []
        try:
            with self.store.transaction():
                self._save_group(pending)
            written = [traj for traj, _ in pending]
        except Exception:
            for traj, rows in pending:
                try:
                    self._save(traj, rows)
                    written.append(traj)
                except Exception as exc:
                    self.errors.append((traj, exc))
        self.stored += len(written)
        self.spectra.update(traj.spectrum_id for traj in written)
        if self.after_write is not None and written:
            try:
                self.after_write(written)
            except Exception as exc:  # the group is stored; what follows it failed
                self.after_write_errors.append((written, exc))

    def close(self) -> None:
        """Write what is left (and, in the background, wait for the writer thread to finish)."""
        if self._thread is not None:
            thread = self._thread
            self._hand_over(_CLOSE)
            thread.join()
            self._thread = None
        else:
            self.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_CLOSE = object()  # tells a background TrajectoryWriter to write what it holds and stop


def add_claims_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-claims", action="store_true",
                   help="do not check the new trajectories' claims against their spectra (`specreview claims` "
                        "can do it later)")


def claim_checker(args: argparse.Namespace, store: Store):
    """The ClaimChecker a batch command gives its TrajectoryWriter (None with --no-claims)."""
    if getattr(args, "no_claims", False):
        return None
    from reviewer.services.claims import ClaimChecker

    return ClaimChecker(store)


def claims_report(writer: TrajectoryWriter) -> list[str]:
    """The run summary's lines about the claims checked while writing."""
    if writer.claims is None:
        return []
    checker = writer.claims
    lines = [f"claims: {checker.totals_text()} ({checker.with_contradicted} trajectories with a contradicted claim)"]
    lines += [f"  problem: {getattr(t, 'source_path', '')}#{getattr(t, 'target', None) or ''}: claims not checked: "
              f"{type(exc).__name__}: {exc}" for t, exc in writer.claim_errors]
    return lines


def store_triage_signals(store, spectrum_ids: set[str | None]) -> str | None:
    """After a campaign's or an import's trajectories are all stored: the triage signals of the
    trajectories of these spectra (None: those without one; reviewer.services.triage.store_signals), and
    the line that says so (None: none to store). A failure is said in that line and leaves them to the
    first read."""
    from reviewer.services import triage

    started = time.monotonic()
    try:
        done = triage.store_signals(store, spectrum_ids)
    except Exception as exc:  # derived rows: the trajectories are stored whatever happens here
        return f"triage signals not stored ({type(exc).__name__}: {exc}): the first read computes them"
    return f"triage signals stored for {done} trajectories in {time.monotonic() - started:.1f} s" if done else None
