"""Run one function over many items: in this process, in threads, in a process pool, or on Dask.

    for item, result in run_batch(vet_one, paths, workers=4):
        if isinstance(result, BaseException): ...

Results come back as they finish (not in input order); an exception raised by `fn` for one item
is returned as that item's result, so one bad spectrum never stops a batch. Results always come
back to the caller's thread: the caller alone writes the database, workers never open it.

- `threads=N`: N items at once in this process. For work that waits on a model server (the
  openai backend): the threads share one HTTP pool and one rate limiter (agents.llm.shared_chat).
- `workers=N`: a process pool, for CPU-bound work (the rules policies). `pool=process_pool(N)`: a
  pool the caller started earlier (its processes import while the caller prepares the items), also
  of one process: the work then runs beside the caller's own per result (reviewer.cli.vet).
- `dask="local"`, `"local:N"` (a LocalCluster of N worker processes) or a scheduler address
  (`tcp://host:8786`): one task per item on the cluster's workers. With `threads=T` as well, a
  LocalCluster's workers get T / N threads each: processes for the CPU work (renders), threads
  for the waits on a model server, the way one process alone cannot when renders fill its core.

`fn` and the items must be picklable for processes and Dask (use module-level functions such as
agents.jobs). Items are consumed lazily and at most a few per worker are in flight, so a long
candidate list is never pickled or submitted all at once. Dask is an optional extra
(`pip install specreview[dask]`), imported only when asked for.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import (
    FIRST_COMPLETED,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from typing import Any, TextIO

_END = object()


def _progress(total: int | None, to: bool | TextIO | None, desc: str, unit: str):
    if not to:
        return None
    from tqdm import tqdm

    # tqdm shows the rate (items/s) and the ETA from it; the postfix adds calls and tokens
    return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True, file=to if hasattr(to, "write") else None)


def run_batch(fn: Callable[[Any], Any], items: Iterable[Any], *, workers: int = 1, threads: int = 1,
              pool: ProcessPoolExecutor | None = None, dask_address: str | None = None, ahead: int = 0,
              progress: bool | TextIO | None = True, desc: str = "batch", unit: str = "item", total: int | None = None,
              postfix: Callable[[Any, Any], str | None] | None = None) -> Iterator[tuple[Any, Any]]:
    """Yield (item, result or exception) as items finish. `progress`: a bar on stderr (True), on the
    stream given, or none. `postfix(item, result)`, called once the caller has handled the item, may
    return a short text for the progress bar (calls, tokens). A caller that stops iterating (an
    exception, a cancelled command) stops the pool: jobs not started are dropped. `ahead`: items taken
    and submitted beyond two per worker, for items made in bursts as they are taken (a walk that reads
    files a group at a time): the workers then have work while the next burst is made."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    bar = _progress(total, progress, desc, unit)
    if dask_address:
        source = _dask(fn, items, dask_address, threads, ahead)
    elif threads > 1:
        source = _pool(ThreadPoolExecutor(max_workers=threads), fn, items, 2 * threads + ahead)
    elif pool is not None or workers > 1:
        source = _quick_switches(_pool(pool or process_pool(workers), fn, items, 2 * workers + ahead))
    else:
        source = _serial(fn, items)
    try:
        for item, result in source:
            yield item, result
            if bar is not None:  # after the caller handled the item, so a postfix sees its totals
                text = postfix(item, result) if postfix is not None else None
                if text:
                    bar.set_postfix_str(text, refresh=False)
                bar.update(1)
    finally:
        source.close()  # stops the pool or cluster even when the caller stops early (Ctrl-C)
        if bar is not None:
            bar.close()


def process_pool(workers: int, warm: tuple[str, ...] = ()) -> ProcessPoolExecutor:
    """A pool of `workers` processes. Spawned, not forked: a batch started by the serving app (a vet
    job through its endpoint) runs beside the server's threads, and a fork copies their locks in
    whatever state they are. With `warm` (module names), the processes start now and import them,
    so that their start-up (seconds of imports) overlaps what the caller does before its first job."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))
    for _ in range(workers if warm else 0):
        pool.submit(_import, warm)
    return pool


def _import(modules: tuple[str, ...]) -> None:
    import importlib

    for name in modules:
        importlib.import_module(name)


# While worker processes hand results back, this process's threads take turns on the GIL every 0.5 ms,
# not Python's 5 ms: the thread that reads a result (~70 KB with a Measurer) off the pipe needs the GIL
# for each 64 KB, and a writer thread checking claims held it for whole intervals while the worker,
# its pipe full, waited (~3 ms a result; a campaign of 684 files: 16.8-17.9 s -> 14.7-15.3 s)
RESULT_SWITCH_S = 0.0005
_switches = {"batches": 0, "before": None}  # process-wide: batches may run at once (the app's vet jobs)
_switches_lock = threading.Lock()


def _quick_switches(source):
    with _switches_lock:
        if _switches["batches"] == 0:
            _switches["before"] = sys.getswitchinterval()
            sys.setswitchinterval(min(_switches["before"], RESULT_SWITCH_S))
        _switches["batches"] += 1
    try:
        yield from source
    finally:
        with _switches_lock:  # the last batch to end puts the interval back
            _switches["batches"] -= 1
            if _switches["batches"] == 0:
                sys.setswitchinterval(_switches["before"])


def _serial(fn, items):
    for item in items:
        try:
            result = fn(item)
        except Exception as exc:
            result = exc
        yield item, result


def _pool(pool, fn, items, in_flight):
    # keep at most in_flight (2 a worker, and `ahead`) submitted: workers never idle, and a huge batch
    # is not pickled up front
    it = iter(items)
    pending: dict = {}
    try:
        for item in it:
            pending[pool.submit(fn, item)] = item
            if len(pending) >= in_flight:
                break
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                item = pending.pop(fut)
                exc = fut.exception()
                yield item, (exc if exc is not None else fut.result())
                nxt = next(it, _END)
                if nxt is not _END:
                    pending[pool.submit(fn, nxt)] = nxt
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def parse_dask(spec: str) -> tuple[str, int | None]:
    """("local", N or None) for `local` / `local:N`, else ("address", None)."""
    head, _, count = spec.partition(":")
    if head != "local":
        return "address", None
    if not count:
        return "local", None
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"--dask local:N needs a positive worker count, not {count!r}")
    return "local", int(count)


def local_workers(spec: str) -> int:
    """Worker processes of `local[:N]` (N, else this machine's CPUs)."""
    return parse_dask(spec)[1] or os.cpu_count() or 1


def dask_client(spec: str, threads: int = 1):
    """(client, cluster): a LocalCluster and its client for `local[:N]` (close both), or a client
    of the scheduler at an address (cluster None: the scheduler outlives the run, and its workers
    keep the threads they were started with)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("Dask is not installed: pip install 'specreview[dask]' "
                           "(dask[distributed]) to run on a Dask cluster") from exc
    if parse_dask(spec)[0] == "address":
        return Client(spec), None
    n = local_workers(spec)
    # CPU-bound agents want one thread per process (threads would share one GIL); agents that wait
    # on a model server want `threads` in flight in all, spread over the processes
    per_worker = max(1, -(-threads // n))
    cluster = LocalCluster(n_workers=n, threads_per_worker=per_worker, processes=True, dashboard_address=":0")
    return Client(cluster), cluster


def _dask(fn, items, spec, threads, ahead):
    client, cluster = dask_client(spec, threads)  # first: it says how to install Dask when it is missing
    from dask.distributed import as_completed

    try:
        width = max(sum(client.nthreads().values()), 1)
        it = iter(items)
        futures: dict = {}
        for item in it:
            futures[client.submit(fn, item, pure=False)] = item
            if len(futures) >= 2 * width + ahead:
                break
        queue = as_completed(list(futures))
        for fut in queue:
            item = futures.pop(fut)
            try:
                result = fut.result()
            except Exception as exc:
                result = exc
            fut.release()
            yield item, result
            nxt = next(it, _END)
            if nxt is not _END:
                new = client.submit(fn, nxt, pure=False)
                futures[new] = nxt
                queue.add(new)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
