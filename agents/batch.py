"""Run one function over many items: in this process, a process pool, or a Dask cluster.

    for item, result in run_batch(vet_one, paths, workers=4):
        if isinstance(result, BaseException): ...

Results come back as they finish (not in input order); an exception raised by `fn` for one item
is returned as that item's result, so one bad spectrum never stops a batch. `fn` and the items
must be picklable when workers > 1 or a Dask address is given (use module-level functions).
Dask is an optional extra (`pip install specreview[dask]`), imported only when asked for.
"""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator


def _progress(total: int | None, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="item")


def run_batch(fn: Callable[[Any], Any], items: Iterable[Any], *, workers: int = 1,
              dask_address: str | None = None, progress: bool = True,
              desc: str = "batch") -> Iterator[tuple[Any, Any]]:
    items = list(items)
    bar = _progress(len(items), progress, desc)
    try:
        if dask_address:
            yield from _dask(fn, items, dask_address, bar)
        elif workers > 1:
            yield from _processes(fn, items, workers, bar)
        else:
            for item in items:
                try:
                    result = fn(item)
                except Exception as exc:
                    result = exc
                if bar is not None:
                    bar.update(1)
                yield item, result
    finally:
        if bar is not None:
            bar.close()


def _processes(fn, items, workers, bar):
    # keep at most 2 x workers in flight so a huge batch does not pickle everything up front
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: dict = {}
        it = iter(items)
        for item in it:
            pending[pool.submit(fn, item)] = item
            if len(pending) >= 2 * workers:
                break
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                item = pending.pop(fut)
                exc = fut.exception()
                if bar is not None:
                    bar.update(1)
                yield item, (exc if exc is not None else fut.result())
                nxt = next(it, _END)
                if nxt is not _END:
                    pending[pool.submit(fn, nxt)] = nxt


_END = object()


def _dask(fn, items, address, bar):
    try:
        from dask.distributed import Client, as_completed
    except ImportError as exc:
        raise RuntimeError("Dask is not installed: pip install 'specreview[dask]' "
                           "(dask[distributed]) to run on a Dask cluster") from exc
    client = Client(address)
    try:
        futures = {client.submit(fn, item, pure=False): item for item in items}
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                result = fut.result()
            except Exception as exc:
                result = exc
            if bar is not None:
                bar.update(1)
            yield item, result
    finally:
        client.close()
