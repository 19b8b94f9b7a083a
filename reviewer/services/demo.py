"""The embedded default: the bundled demo spectra and the offline agents' trajectories on them.

The trajectories ship precomputed (assets/trajectories/demo.jsonl.gz) so a fresh database serves a
usable page in seconds; `python -m reviewer.services.demo` re-makes them with the agents as they are now, and
a test checks the shipped file still equals what the agents produce.
"""
from __future__ import annotations

import gzip
import logging
import threading
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from agents.trajectory import Trajectory
from reviewer.services.claim_checks import checked_claims, store_checked
from reviewer.services.claims import counts_text
from reviewer.services.ingest import ingest_paths

log = logging.getLogger("specreview.demo")

ASSETS = Path(__file__).resolve().parents[2] / "assets"
DEMO_DIR = ASSETS / "demo"
DEMO_TRAJECTORIES = ASSETS / "trajectories" / "demo.jsonl.gz"
DEMO_TASKS = ("a", "wd", "mg", "cv")  # vet tasks run on the demo spectra so the queue has real items
_seed_lock = threading.Lock()


def make_demo_trajectories(store) -> list[Trajectory]:
    """Run the offline agents (vet `rules` on DEMO_TASKS, the FORMA pipeline) on every stored spectrum."""
    from agents.verify import verify_spectrum
    from agents.vet import vet_spectrum
    from reviewer.services.spectra_cache import load_spectrum

    out = []
    for rec in store.spectra.list_spectra(limit=1000):
        spec = load_spectrum(rec["source_path"], rec.get("target"))
        made = [vet_spectrum(spec, task, "rules", spectrum_id=rec["spectrum_id"]) for task in DEMO_TASKS]
        made.append(verify_spectrum(spec, spectrum_id=rec["spectrum_id"]))
        for traj in made:  # shipped files name the demo file only; seeding puts back where it lies
            traj.source_path = Path(rec["source_path"]).name
        out += made
    return out


def read_shipped(path: Path = DEMO_TRAJECTORIES) -> list[Trajectory]:
    """The shipped trajectories: a SpecReview trajectories file (agents/interop/trajectory_file.py),
    read by the same reader as `specreview import trajectories`."""
    from agents.interop.trajectory_file import read_trajectories

    return list(read_trajectories(path))


def seed_demo_if_empty(store, demo_dir: Path = DEMO_DIR, trajectories: Path = DEMO_TRAJECTORIES,
                       claims_in_background: bool = False) -> int:
    """First run: an empty database gets the demo spectra and their shipped trajectories, and their
    claims checked (for the server in the background, in its low-priority render process, so that
    the first page neither waits for it nor shares the server's GIL with it: ~1 s of a fresh
    server's first page when it ran on a thread). Returns the number of spectra added (0 when the
    database already had some)."""
    with _seed_lock:
        if store.spectra.count_spectra() > 0 or not demo_dir.is_dir():
            return 0
        log.warning("empty database: loading the demo spectra from %s", demo_dir.name)
        summary = ingest_paths(store, [demo_dir], progress=False)
        for path, problem in summary.failed:
            log.warning("demo spectrum not loaded: %s: %s", Path(path).name, problem)
        known = {r["spectrum_id"]: r for r in store.spectra.list_spectra(limit=1000)}
        shipped = [t for t in read_shipped(trajectories) if t.spectrum_id in known] if trajectories.is_file() else []
        for traj in shipped:  # where the spectrum lies here (the claim check reads it from there)
            traj.source_path = known[traj.spectrum_id]["source_path"]
            store.trajectories.save_trajectory(traj)
        log.warning("demo ready: %d spectra, %d trajectories", summary.added, len(shipped))
        if claims_in_background:
            threading.Thread(target=_check_claims, args=(store, shipped, True), daemon=True,
                             name="specreview-demo-claims").start()
        else:
            _check_claims(store, shipped)
        return summary.added


def _check_claims(store, shipped, elsewhere: bool = False) -> None:
    texts = [(t.to_json(), None) for t in shipped]  # shipped trajectories: no stored hash to compare
    results = None
    if elsewhere:
        from reviewer.services.renders import render_process

        try:
            results = render_process("ahead").call(checked_claims, texts)
        except BrokenProcessPool as err:
            log.warning("render process failed (%s); checking the demo claims in the server", err)
    checked, totals = results or checked_claims(texts)
    for problem in store_checked(store, checked):
        log.warning("demo trajectory %s", problem)
    log.warning("demo claims checked: %s", counts_text(Counter(totals)))


def write_shipped(trajectories: list[Trajectory], path: Path = DEMO_TRAJECTORIES) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same trajectories give the same bytes, so a re-make shows no spurious diff
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        for traj in trajectories:
            fh.write((traj.to_json() + "\n").encode("utf-8"))


def main() -> None:
    """Re-make the shipped demo trajectories with the agents as they are now."""
    import tempfile

    from reviewer.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "demo.duckdb")
        ingest_paths(store, [DEMO_DIR], progress=False)
        trajectories = make_demo_trajectories(store)
        store.close()
    write_shipped(trajectories)
    print(f"wrote {len(trajectories)} trajectories to {DEMO_TRAJECTORIES.relative_to(ASSETS.parent)}")


if __name__ == "__main__":
    main()
