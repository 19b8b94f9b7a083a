"""What the review state reads to open an item, a campaign or the next spectrum: the store's repositories
behind plain functions, so that the state (and what binds to it) never reads a repository itself
(tests/test_layers.py). Writes made elsewhere are noticed through QueueListing.content_mark."""
from __future__ import annotations

from typing import Any

from agents.trajectory import Trajectory
from reviewer.services.claim_checks import check_on_open
from reviewer.services.claims import results_from_rows


def find_campaign(store, name_or_id: str) -> dict[str, Any] | None:
    """The audit campaign named (or with the id) `name_or_id`, whole, or None."""
    found = store.sessions.find_session(name_or_id)
    return store.sessions.get_session(found["id"]) if found is not None else None


def trajectory(store, trajectory_id: str) -> Trajectory | None:
    return store.trajectories.load_trajectory(trajectory_id)


def first_trajectory_on(store, spectrum_id: str) -> Trajectory | None:
    """The first stored trajectory on a spectrum, or None when no agent ran on it."""
    found = store.trajectories.list_trajectories(spectrum_id=spectrum_id, limit=1)
    return store.trajectories.load_trajectory(found[0]["id"]) if found else None


def record_of_spectrum(store, spectrum_id: str) -> dict[str, Any] | None:
    return store.spectra.get_spectrum(spectrum_id)


def stored_claims(store, trajectory_id: str) -> tuple:
    """The claim checker's stored results on a trajectory (agents.claims.ClaimResult); checked now and
    stored when its check is still pending (a campaign stores first and checks after:
    reviewer/services/claim_checks.py)."""
    rows = store.claims.claims_for(trajectory_id)
    if not rows and check_on_open(store, trajectory_id):
        rows = store.claims.claims_for(trajectory_id)
    return tuple(results_from_rows(rows))


def spectrum_file_of(store, trajectory_id: str) -> tuple[str, str | None] | None:
    """(source path, target) of the spectrum a trajectory is on: what the read-ahead reads."""
    summary = store.trajectories.trajectory_summary(trajectory_id)
    record = store.spectra.get_spectrum(summary["spectrum_id"]) if summary else None
    return (record["source_path"], record.get("target")) if record else None
