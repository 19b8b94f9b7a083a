"""The embedded default: the shipped demo trajectories are what the agents produce now, and a fresh
database gets them (with the demo spectra) in one step."""
from __future__ import annotations

import math

from reviewer.services.demo import DEMO_TRAJECTORIES, make_demo_trajectories, read_shipped, seed_demo_if_empty
from reviewer.store import Store

VOLATILE = {"id", "created_at", "timings", "elapsed_s", "latency_ms", "latency_s"}  # identity, clock, speed
# A least-squares fit of a weak line can land a few per cent apart on another CPU (its BLAS sums in
# another order): 181f76d0e8b24dbf's line 19 fits FWHM 1774 km/s on one machine and 1811 km/s on
# another, with every text, status and verdict equal; its centre's error (from a near-singular
# covariance: the line is barely there) is 55.3 A on one and 52.2 A on another (6 %). Numbers are
# compared to this tolerance; what a reviewer reads (texts, statuses, verdicts, structure) exactly.
FIT_RTOL = 0.1


def content(traj) -> dict:
    def scrub(value):
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return scrub(traj.model_dump(mode="json"))


def differences(a, b, where: str = ""):
    """Where `a` and `b` differ: exactly, except floats beyond FIT_RTOL."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            yield f"{where}: keys {sorted(a.keys() ^ b.keys())}"
            return
        for key in a:
            yield from differences(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} != {len(b)} entries"
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from differences(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        if not math.isclose(a, b, rel_tol=FIT_RTOL, abs_tol=1e-9):
            yield f"{where}: {a} != {b}"
    elif a != b or type(a) is not type(b):
        yield f"{where}: {a!r} != {b!r}"


def test_differences_are_exact_but_for_fitted_numbers():
    assert not list(differences({"z": 0.50, "text": "H-alpha"}, {"z": 0.51, "text": "H-alpha"}))
    assert list(differences({"z": 0.50}, {"z": 0.60})) == [".z: 0.5 != 0.6"]
    assert list(differences({"text": "H-alpha 6563"}, {"text": "H-alpha 6564"}))
    assert list(differences({"status": "LIKELY"}, {"status": None}))
    assert list(differences([1.0], [1.0, 2.0]))


def test_shipped_demo_trajectories_equal_what_the_agents_make_now(tmp_path):
    store = Store(tmp_path / "remake.duckdb")
    from reviewer.services.demo import DEMO_DIR
    from reviewer.services.ingest import ingest_paths

    ingest_paths(store, [DEMO_DIR], progress=False)
    fresh = sorted((content(t) for t in make_demo_trajectories(store)),
                   key=lambda c: (c["spectrum_id"], c["task"]))
    shipped = sorted((content(t) for t in read_shipped()), key=lambda c: (c["spectrum_id"], c["task"]))
    store.close()
    assert len(shipped) == len(fresh) == 65
    for a, b in zip(shipped, fresh, strict=True):
        changed = list(differences(a, b))
        assert not changed, f"{a['spectrum_id']} {a['task']}: {changed[:5]}; re-make with `python -m reviewer.services.demo`"


def test_a_fresh_database_is_seeded_once(tmp_path):
    store = Store(tmp_path / "fresh.duckdb")
    assert seed_demo_if_empty(store) == 13
    assert store.trajectories.count_trajectories() == len(read_shipped(DEMO_TRAJECTORIES))
    assert seed_demo_if_empty(store) == 0  # idempotent
    store.close()


def test_the_servers_background_claim_check_stores_what_the_foreground_one_does(tmp_path):
    """The server checks the demo's claims in a render process; the stored results are those of a
    check in this process."""
    import threading

    def claims(store):
        return store.db.rows("SELECT t.spectrum_id, t.task, c.verdict, count(*) AS n FROM claim_results c "
                             "JOIN trajectories t ON t.id = c.trajectory_id GROUP BY ALL ORDER BY ALL")

    here, away = Store(tmp_path / "here.duckdb"), Store(tmp_path / "away.duckdb")
    seed_demo_if_empty(here)
    seed_demo_if_empty(away, claims_in_background=True)
    checker = next(t for t in threading.enumerate() if t.name == "specreview-demo-claims")
    checker.join(300)
    assert not checker.is_alive()
    assert claims(away) == claims(here) and sum(r["n"] for r in claims(here)) > 600
    here.close()
    away.close()
