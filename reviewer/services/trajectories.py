"""Storing agent runs made by the commands (vet, verify, judge, import): a trajectory with its steps and
images, its claim checks beside it, a trajectory imported before its spectrum linked to it once stored, and
an LLM judge's scores and failures. Plain functions over the store's repositories, so that the CLI writes
through the services as it reads (tests/test_layers.py)."""
from __future__ import annotations

from agents.trajectory import Trajectory


def save_trajectory(store, trajectory: Trajectory) -> str:
    """Store one trajectory with its steps and images (in one transaction); its id."""
    return store.trajectories.save_trajectory(trajectory)


def save_checked(store, trajectory: Trajectory, version: str | None, rows: list[dict] | None) -> None:
    """One trajectory and its claim checks (`rows` under checker `version`; None: not checked), in one
    transaction: neither is stored without the other."""
    with store.transaction():
        store.trajectories.save_trajectory(trajectory)
        if rows is not None:
            store.claims.save_claims(trajectory.id, version, rows)


def save_checked_group(store, pending: list[tuple[Trajectory, list[dict] | None]], version: str | None) -> None:
    """(trajectory, claim rows or None) pairs in a few statements (one for the trajectories, one for the
    claims); the caller holds the transaction that makes the group whole or nothing."""
    store.trajectories.save_trajectories([traj for traj, _ in pending])
    checked = [(traj.id, rows) for traj, rows in pending if rows is not None]
    if checked:
        store.claims.save_claims_of(version, checked)


def link_to_spectrum(store, trajectory_id: str, spectrum_id: str) -> bool:
    """Link a trajectory stored without a spectrum to a stored one (and its file); False when the
    trajectory was linked already (or the spectrum is not stored)."""
    record = store.spectra.get_spectrum(spectrum_id)
    return record is not None and store.trajectories.link_spectra([(trajectory_id, spectrum_id,
                                                                     record["source_path"])]) > 0


# -- an LLM judge's scores (`specreview judge`) -------------------------------------------------------------------------------
def judged_by(store, judge: str, rubric_version: str) -> set[str]:
    """The ids of the trajectories a judge has scored under a rubric version."""
    return store.reviews.rated_trajectory_ids(judge, rubric_version)


def save_judge_score(store, trajectory_id: str, judge: str, score: float, rubric_version: str,
                     comment: str | None = None) -> str:
    """An LLM judge's 0-5 score of a trajectory (a rating of kind "llm"); the rating's id."""
    return store.labels.add_rating(trajectory_id, judge, score, rubric_version, rater_kind="llm", comment=comment)


def save_judge_failure(store, trajectory_id: str, judge: str, rubric_version: str, error: str,
                       reply: str | None = None) -> str:
    """A judge call that gave no usable score, with the reason (and the reply, if any)."""
    return store.reviews.add_judge_failure(trajectory_id, judge, rubric_version, error, reply)

