"""Ingest at survey scale (issue 22, item 3): files registered per second, and a walk over folders
ingested before, in `specreview ingest`'s own code (reviewer.services.ingest.ingest_paths), one process.

Parts, each into a fresh DuckDB file unless said:
- new: every spectrum file of the shared corpus (real LAMOST / SDSS / DESI / Pickles files, distinct
  content): hashed, opened, every target read, registered; files/s.
- first walk: N paths (hard links to the corpus files, 1000 to a folder) never seen before: each is
  stat-ed and hashed (a whole-file read); its content is already registered after the first path
  of it, so nothing is parsed. A survey's files are distinct, so at survey scale a first walk costs
  what `new` costs per file; this part measures the walk, the stat, the hash and the bookkeeping at N.
- re-walk: the same N paths again (the same database): a known file is passed on its stat, and the
  bench counts the files hashed (should be 0) through reviewer.services.spectra_cache.hash_file.
- resumed: a walk over the N paths stopped after half of them (as a Ctrl-C or a client gone does,
  through `check`), then run again: the time of the second run.
Peak memory (ru_maxrss) is given after each part.

Run: nice .venv/bin/python bench/bench_ingest.py [--n 1000000] [--dir FOLDER] [--json FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))

from shared_data import spectra_dir  # noqa: E402


def machine() -> str:
    import platform

    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def corpus_files() -> list[Path]:
    from reviewer.services.ingest import find_spectrum_files

    files, _ = find_spectrum_files([spectra_dir()])
    return [Path(f) for f in files]


def linked_tree(root: Path, sources: list[Path], n: int) -> Path:
    """n hard links to `sources` (round robin), 1000 to a folder; made once and reused."""
    tree = root / f"links-{n}"
    done = tree / ".complete"
    if done.exists():
        return tree
    for i in range(n):
        folder = tree / f"d{i // 1000:05d}"
        if i % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        src = sources[i % len(sources)]
        link = folder / f"{i:07d}-{src.name}"
        if not link.exists():
            os.link(src, link)
    done.write_text("ok")
    return tree


class Stop(Exception):
    pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="paths of the walk parts (default 1000000)")
    parser.add_argument("--dir", type=Path, default=None, help="folder for the links and databases (kept)")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: new,walk,resumed")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    import reviewer.services.spectra_cache as spectra_cache
    from reviewer.services.ingest import ingest_paths
    from reviewer.store import Store

    hashed = {"n": 0}
    real_hash = spectra_cache.hash_file

    def counting_hash(path):
        hashed["n"] += 1
        return real_hash(path)

    spectra_cache.hash_file = counting_hash
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench_ingest_", dir=os.environ.get("TMPDIR")))
    work.mkdir(parents=True, exist_ok=True)
    res: dict = {"machine": machine(), "n": args.n}
    print(res["machine"], flush=True)
    files = corpus_files()
    # let every source file age past the racy window, so its stat can be kept
    wait = spectra_cache.RACY_S - (time.time() - max(f.stat().st_ctime for f in files))
    if wait > 0:
        time.sleep(wait)

    def timed_ingest(db: Path, paths, **kw) -> tuple[float, object]:
        with Store(db) as store:
            hashed["n"] = 0
            t = time.perf_counter()
            summary = ingest_paths(store, paths, progress=False, **kw)
            return time.perf_counter() - t, summary

    if "new" not in skip:
        db = work / "new.duckdb"
        db.unlink(missing_ok=True)
        s, summary = timed_ingest(db, [spectra_dir()])
        res["new"] = {"files": summary.files_seen, "spectra": summary.added, "failed": len(summary.failed),
                      "s": s, "files_per_s": summary.files_seen / s, "peak_mb": peak_mb()}
        print(f"  new content: {summary.files_seen} files ({summary.added} spectra, {len(summary.failed)} refused) "
              f"in {s:.1f} s = {summary.files_seen / s:.1f} files/s; peak {peak_mb():.0f} MB", flush=True)

    if "walk" not in skip:
        t = time.perf_counter()
        tree = linked_tree(work, files, args.n)
        res["links_s"] = time.perf_counter() - t
        time.sleep(max(0.0, spectra_cache.RACY_S - (time.time() - tree.stat().st_mtime)))
        db = work / f"walk-{args.n}.duckdb"
        db.unlink(missing_ok=True)
        s, summary = timed_ingest(db, [tree])
        res["first_walk"] = {"files": summary.files_seen, "hashed": hashed["n"], "s": s,
                             "files_per_s": summary.files_seen / s, "peak_mb": peak_mb()}
        print(f"  first walk: {summary.files_seen} paths ({hashed['n']} hashed) in {s:.1f} s = "
              f"{summary.files_seen / s:.0f} files/s; peak {peak_mb():.0f} MB", flush=True)
        s, summary = timed_ingest(db, [tree])
        res["re_walk"] = {"files": summary.files_seen, "hashed": hashed["n"], "known": summary.skipped_existing,
                          "s": s, "files_per_s": summary.files_seen / s, "peak_mb": peak_mb()}
        print(f"  re-walk: {summary.files_seen} paths ({hashed['n']} hashed, {summary.skipped_existing} spectra "
              f"known) in {s:.1f} s = {summary.files_seen / s:.0f} files/s; peak {peak_mb():.0f} MB", flush=True)

        if "resumed" not in skip:
            db = work / f"resumed-{args.n}.duckdb"
            db.unlink(missing_ok=True)
            seen = {"n": 0}

            def stop_half() -> None:
                seen["n"] += 1
                if seen["n"] > args.n // 2:
                    raise Stop

            t = time.perf_counter()
            with contextlib.suppress(Stop):
                timed_ingest(db, [tree], check=stop_half)
            stopped = time.perf_counter() - t
            s, summary = timed_ingest(db, [tree])
            res["resumed"] = {"stopped_after_s": stopped, "second_run_s": s, "hashed_in_second": hashed["n"],
                              "files": summary.files_seen}
            print(f"  stopped at half after {stopped:.1f} s; the run after it: {s:.1f} s, {hashed['n']} hashed "
                  f"(the half not done)", flush=True)
    res["load_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
