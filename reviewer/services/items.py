"""What the review state and the commands read of the stored items (trajectories, spectra, campaigns): the
store's repositories behind plain functions, so that neither the state (and what binds to it) nor the CLI
reads a repository itself (tests/test_layers.py). Writes made elsewhere are noticed through
QueueListing.content_mark."""
from __future__ import annotations

from typing import Any

from agents.trajectory import Trajectory
from reviewer.services.claim_checks import check_on_open
from reviewer.services.claims import results_from_rows


def find_campaign(store, name_or_id: str) -> dict[str, Any] | None:
    """The audit campaign named (or with the id) `name_or_id`, whole, or None."""
    found = store.sessions.find_session(name_or_id)
    return store.sessions.get_session(found["id"]) if found is not None else None


def trajectory(store, trajectory_id: str, with_images: bool = False) -> Trajectory | None:
    """The stored trajectory, or None; `with_images` also fills its images (a judge that sees them)."""
    return store.trajectories.load_trajectory(trajectory_id, with_images=with_images)


def first_trajectory_on(store, spectrum_id: str) -> Trajectory | None:
    """The first stored trajectory on a spectrum, or None when no agent ran on it."""
    found = store.trajectories.list_trajectories(spectrum_id=spectrum_id, limit=1)
    return store.trajectories.load_trajectory(found[0]["id"]) if found else None


def record_of_spectrum(store, spectrum_id: str) -> dict[str, Any] | None:
    return store.spectra.get_spectrum(spectrum_id)


# A pending check runs on the page's thread as the item opens only for a trajectory of at most this much
# text: a larger one (a client's import can hold megabytes) would stall the page; it waits for
# `specreview claims --pending`.
CHECK_ON_OPEN_MAX_CHARS = 200_000


def stored_claims(store, trajectory) -> tuple:
    """The claim checker's stored results on a trajectory (agents.claims.ClaimResult); checked now and
    stored when its check is still pending (a campaign stores first and checks after:
    reviewer/services/claim_checks.py) and its text is within CHECK_ON_OPEN_MAX_CHARS."""
    trajectory_id = trajectory.id
    rows = store.claims.claims_for(trajectory_id)
    small = sum(len(step.text or "") for step in trajectory.steps) <= CHECK_ON_OPEN_MAX_CHARS
    if not rows and small and check_on_open(store, trajectory_id):
        rows = store.claims.claims_for(trajectory_id)
    return tuple(results_from_rows(rows))


def spectrum_file_of(store, trajectory_id: str) -> tuple[str, str | None] | None:
    """(source path, target) of the spectrum a trajectory is on: what the read-ahead reads."""
    summary = store.trajectories.trajectory_summary(trajectory_id)
    record = store.spectra.get_spectrum(summary["spectrum_id"]) if summary else None
    return (record["source_path"], record.get("target")) if record else None


# -- trajectories ----------------------------------------------------------------------------------------------------
def trajectory_summary(store, trajectory_id: str) -> dict[str, Any] | None:
    """A stored trajectory's row without its steps (id, spectrum_id, task, ...), or None."""
    return store.trajectories.trajectory_summary(trajectory_id)


def trajectory_rows(store, limit: int | None = None, **filters: Any) -> list[dict[str, Any]]:
    """Stored trajectories' rows, newest first, filtered as store.trajectories.list_trajectories."""
    return store.trajectories.list_trajectories(limit=limit, **filters)


def trajectories_on(store, spectrum_id: str) -> list[dict[str, Any]]:
    """The rows of every trajectory stored on a spectrum."""
    return store.trajectories.trajectories_on_spectrum(spectrum_id)


def trajectory_for(store, spectrum_id: str, task: str, backend: str, model: str | None = None) -> str | None:
    """The id of the trajectory a backend (and model) already ran for a task on a spectrum, or None."""
    return store.trajectories.find_trajectory(spectrum_id, task, backend, model)


def spectra_with_trajectory(store, spectrum_ids, task: str, backend: str, model: str | None = None) -> set[str]:
    """Those of `spectrum_ids` on which that backend (and model) already ran the task."""
    return store.trajectories.spectra_with_trajectory(spectrum_ids, task, backend, model)


# -- spectra ---------------------------------------------------------------------------------------------------------------
def records_of_spectra(store, spectrum_ids) -> dict[str, dict[str, Any]]:
    """spectrum id -> its stored record, for those of `spectrum_ids` that are stored."""
    return store.spectra.get_spectra(spectrum_ids)


def spectra_matching(store, search: str) -> list[dict[str, Any]]:
    """Every stored spectrum's record that `search` matches (object id, survey, class, file name, spectrum id
    or target, case-insensitively), ordered by file and target; no limit."""
    return store.spectra.list_spectra(search=search, limit=None)


def targets_of_file(store, file_sha256: str) -> set[str | None]:
    """The targets stored from one file (by its content hash)."""
    return store.spectra.targets_for_file(file_sha256)
