"""The Stats tab's computation at survey scale (issue 22 item 1), in the service (no browser): from the
request to every figure computed, as StatsPanel.refresh does it: the reviewers' statistics
(stats.review_stats), the triage inputs (every trajectory's signals, the labelled truth) and the
triage report at the default target (abstention table and accuracy by priority with bootstrap
intervals). Each part is timed, `--repeats` times, after one untimed warm-up read.

Also, where the code has the stored signals (schema 8): the first read after an upgrade (the table
filled from every trajectory once), and the read after writes (a verdict: nothing recomputed; a claim
check of one trajectory: its spectrum recomputed); where it has the stored settled labels (schema 9):
the first sync after an upgrade (every labelled trajectory's settled label computed and stored once).

The database is bench_scale.py's (100,035 trajectories, 2.3M steps, 17.6k verdicts). To measure the
code before a change beside the code after it in one run, run this script twice with PYTHONPATH set to
each checkout, on copies of the same database (the older code refuses a newer schema).

Run: nice .venv/bin/python bench/bench_stats.py --db DIR/scale-100000.duckdb [--repeats 3] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def machine() -> str:
    import platform

    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def timed(call) -> tuple[float, object]:
    t = time.perf_counter()
    out = call()
    return 1000 * (time.perf_counter() - t), out


def tab_once(store) -> dict[str, float]:
    """One refresh of the Stats tab, part by part (ms)."""
    from reviewer.services import stats, triage

    out = {}
    out["review_stats"], _ = timed(lambda: stats.review_stats(store))
    out["triage_inputs"], inputs = timed(lambda: triage.triage_inputs(store))
    out["triage_report"], _ = timed(lambda: triage.triage_report(store, 0.98, inputs=inputs))
    out["total"] = sum(out.values())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a bench_scale.py database (copied, never changed)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import reviewer
    from reviewer.services import triage
    from reviewer.store import Store

    res: dict = {"machine": machine(), "code": str(Path(reviewer.__file__).parent.parent), "db": str(args.db)}
    print(res["machine"], "\ncode:", res["code"], flush=True)
    stored_signals = hasattr(triage, "current_signals")
    with tempfile.TemporaryDirectory(prefix="bench_stats_", dir=os.environ.get("TMPDIR")) as tmp:
        db = Path(tmp) / "stats.duckdb"
        shutil.copyfile(args.db, db)
        t = time.perf_counter()
        store = Store(db)
        res["open_ms"] = 1000 * (time.perf_counter() - t)
        res["schema"] = store.schema_version
        res["trajectories"] = int(store.db.scalar("SELECT count(*) FROM trajectories"))
        res["reviews"] = int(store.db.scalar("SELECT count(*) FROM reviews"))
        if stored_signals:
            res["first_fill_ms"], _ = timed(lambda: triage.current_signals(store))
            print(f"  first read after the upgrade (every signal computed and stored): {res['first_fill_ms']:.0f} ms")
        if hasattr(store.verdict_state, "settled_labels"):
            from reviewer.services.conflicts import sync_verdict_states

            res["first_sync_ms"], _ = timed(lambda: sync_verdict_states(store))
            print(f"  first sync after the upgrade (every settled label computed and stored): {res['first_sync_ms']:.0f} ms")
        else:
            tab_once(store)  # the same warm-up read
        runs = [tab_once(store) for _ in range(args.repeats)]
        res["tab"] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        res["tab_runs"] = runs
        print("  tab (median ms):", json.dumps({k: round(v) for k, v in res["tab"].items()}), flush=True)
        if stored_signals:
            tid = store.db.scalar("SELECT id FROM trajectories ORDER BY created_at DESC, id LIMIT 1")
            store.labels.add_review(tid, "alice", "reject")
            res["after_verdict"] = tab_once(store)
            store.claims.save_claims(tid, "bench-checker", [{"step_idx": 0, "claim_idx": 0, "kind": "feature",
                                                             "claim_text": "bench", "verdict": "contradicted"}])
            res["after_claims"] = tab_once(store)
            print("  after a verdict:", round(res["after_verdict"]["total"]), "ms; after a claim check:",
                  round(res["after_claims"]["total"]), "ms", flush=True)
        store.close()
    res["load_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
