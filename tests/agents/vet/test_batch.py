import math
import sys

import pytest

from agents.batch import process_pool, run_batch


def sqrt_or_fail(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return math.sqrt(x)


@pytest.mark.parametrize("workers", [1, 2])
def test_results_and_exceptions_come_back_per_item(workers):
    items = [4, -1, 9, 16, -2, 25]
    got = dict(run_batch(sqrt_or_fail, items, workers=workers, progress=False))
    assert set(got) == set(items)
    assert got[4] == 2 and got[25] == 5
    assert isinstance(got[-1], ValueError) and "negative: -2" in str(got[-2])


def parent_state_seen(_):
    import agents.batch

    return hasattr(agents.batch, "_parent_only_marker")


def test_worker_processes_are_spawned_not_forked(monkeypatch):
    # a forked worker would copy the parent's memory (and the locks of a serving app's threads)
    monkeypatch.setattr("agents.batch._parent_only_marker", True, raising=False)
    got = dict(run_batch(parent_state_seen, [1, 2], workers=2, progress=False))
    assert got == {1: False, 2: False}


def modules_and_pid(_):
    import os

    return "agents.spectra" in sys.modules, os.getpid()


def test_a_pool_started_early_has_imported_what_it_was_told_and_runs_one_workers_items_beside_the_caller():
    import os

    pool = process_pool(1, ("agents.spectra",))
    got = dict(run_batch(modules_and_pid, [1, 2, 3], pool=pool, progress=False))
    assert {imported for imported, _ in got.values()} == {True}  # imported before the first item ran
    pids = {pid for _, pid in got.values()}
    assert len(pids) == 1 and os.getpid() not in pids  # one process, not this one
    with pytest.raises(RuntimeError):  # shut down by run_batch at the end of the batch
        pool.submit(modules_and_pid, 4)


def test_dask_without_the_extra_says_how_to_install(monkeypatch):
    for name in ("dask", "dask.distributed", "distributed"):  # as if the extra were not installed
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(RuntimeError, match=r"specreview\[dask\]"):
        list(run_batch(sqrt_or_fail, [1], dask_address="tcp://127.0.0.1:1", progress=False))


@pytest.mark.parametrize("threads", [3])
def test_threads_return_each_items_result_or_exception(threads):
    items = [4, -1, 9, 16, -2, 25]
    got = dict(run_batch(sqrt_or_fail, items, threads=threads, progress=False))
    assert set(got) == set(items) and got[16] == 4
    assert isinstance(got[-1], ValueError) and isinstance(got[-2], ValueError)


def test_items_are_pulled_lazily_a_few_per_worker():
    pulled = []

    def candidates():
        for i in range(1000):
            pulled.append(i)
            yield i

    results = run_batch(sqrt_or_fail, candidates(), threads=2, progress=False)
    next(results)
    assert len(pulled) <= 2 * 2  # never the whole list up front
    results.close()  # stops the pool
    assert len(pulled) < 1000


@pytest.mark.parametrize("ahead", [0, 5])
def test_items_made_in_bursts_keep_ahead_more_in_flight(ahead):
    """`ahead`: items a caller makes in bursts (a walk registering files a group at a time) are taken
    that many further ahead, so the workers have work while the next burst is made; never more."""
    pulled = []

    def candidates():
        for i in range(1000):
            pulled.append(i)
            yield i

    results = run_batch(sqrt_or_fail, candidates(), threads=2, ahead=ahead, progress=False)
    next(results)
    assert len(pulled) == 2 * 2 + ahead
    for _ in range(10):
        next(results)
    assert len(pulled) == 2 * 2 + ahead + 10  # one taken for each one handed back
    results.close()


def test_threads_switch_quickly_while_worker_processes_hand_results_back_and_as_before_after():
    """While a process pool's results come back, the GIL changes hands every RESULT_SWITCH_S (the thread
    reading a result off the pipe must not wait out a writer's 5 ms); the last of two batches running
    at once puts the interval back."""
    import agents.batch as batch

    before = sys.getswitchinterval()
    seen = []

    def items():
        for i in (4, 9):
            seen.append(sys.getswitchinterval())
            yield i

    first = run_batch(sqrt_or_fail, items(), workers=2, progress=False)
    second = run_batch(sqrt_or_fail, [16], workers=2, progress=False)
    next(first)
    assert dict(second) == {16: 4.0}  # ended while the first still runs
    assert sys.getswitchinterval() == batch.RESULT_SWITCH_S
    assert dict(first) and seen == [batch.RESULT_SWITCH_S] * 2
    assert sys.getswitchinterval() == before
