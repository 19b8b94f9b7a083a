"""What checking a stored spectrum's content hash costs an item switch (issue 18, What to build 8).

    .venv/bin/python bench/bench_integrity.py [--repeat N]

On the demo files (assets/demo), copied to a temporary folder and ingested: for each file, the cold
check (hash of the whole file, file in the page cache), the warm check (the hash kept by the file's
stat: one os.stat and a cache lookup) and, beside them, reading the spectrum (reviewer.services.spectra_cache's
miss) and ReviewState.open_item on a spectrum already read. Figures are medians in ms.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.spectra import read_spectrum
from reviewer.review_state import ReviewState
from reviewer.services import spectra_cache
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

DEMO = Path(__file__).resolve().parents[1] / "assets" / "demo"


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "demo"
        shutil.copytree(DEMO, folder)
        past = time.time_ns() - 3600 * 10**9
        for path in folder.iterdir():
            os.utime(path, ns=(past, past))
        time.sleep(spectra_cache.RACY_S + 0.1)  # ctimes older than the racy window: hashes are kept
        store = Store(Path(tmp) / "bench.duckdb")
        ingest_paths(store, [folder], progress=False)
        records = store.spectra.list_spectra(limit=1000)
        state = ReviewState(store, reviewer="bench")
        print(f"{'file':44} {'MB':>6} {'cold hash':>10} {'warm check':>11} {'read':>8} {'open_item':>10}")
        cold_all, warm_all, open_all = [], [], []
        for rec in sorted(records, key=lambda r: r["file_name"]):
            path, sha, target = rec["source_path"], rec["file_sha256"], rec.get("target")
            size = Path(path).stat().st_size / 1e6
            cold = median_ms(lambda p=path: spectra_cache.hash_file(p), args.repeat)
            spectra_cache.check_unchanged(path, sha)  # keeps the hash
            warm = median_ms(lambda p=path, s=sha: spectra_cache.check_unchanged(p, s), args.repeat * 20)
            read = median_ms(lambda p=path, t=target: read_spectrum(p, target=t), max(5, args.repeat // 5))
            state.open_item(spectrum_id=rec["spectrum_id"])  # reads it into the cache
            opened = median_ms(lambda sid=rec["spectrum_id"]: state.open_item(spectrum_id=sid), max(5, args.repeat // 5))
            cold_all.append(cold)
            warm_all.append(warm)
            open_all.append(opened)
            print(f"{rec['file_name'][:44]:44} {size:6.2f} {cold:10.3f} {warm:11.4f} {read:8.2f} {opened:10.2f}")
        print(f"median over {len(records)} spectra: cold hash {statistics.median(cold_all):.3f} ms, "
              f"warm check {1000 * statistics.median(warm_all):.1f} us, open_item (cached spectrum) "
              f"{statistics.median(open_all):.2f} ms")
        from reviewer.services.spectra_cache import _prefetcher, _reader

        for pool in (_prefetcher, _reader):
            pool.submit(lambda: None).result()
        store.close()


if __name__ == "__main__":
    main()
