"""Batch jobs: one spectrum in (a plain dict), one trajectory out. Module level so that a process
pool or a Dask worker can unpickle them; they import agents only, never the reviewer or its
database, so a worker needs the spectrum files and nothing else. The caller stores the result.

A job dict holds the spectrum (`source_path`, `target`, `spectrum_id`), the backend and, for the
openai backend, `llm` (agents.llm.load_config overrides; the key is never in a job: each worker
reads it from its own environment or config file).
"""
from __future__ import annotations

from typing import Any


def _config(job: dict[str, Any]):
    from agents.llm import load_config

    return load_config(job.get("llm_config_path"), **(job.get("llm") or {}))


def vet_job(job: dict[str, Any], spectrum=None):
    """Read one spectrum (unless the caller read it: `spectrum`) and vet it for one task
    (agents.vet.vet_spectrum)."""
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    spec = spectrum if spectrum is not None else read_spectrum(job["source_path"], job["target"])
    cfg = _config(job) if job["backend"] == "openai" else None
    return vet_spectrum(spec, job["task"], job["backend"], eager_renders=job.get("eager", False),
                        llm_config=cfg, spectrum_id=job["spectrum_id"])


def _vet_then(job: dict[str, Any], then):
    """(trajectory, then(trajectory, spectrum)) from one read of the job's spectrum; (trajectory, the
    exception) when `then` failed: the trajectory is still stored, its claims checked later."""
    from agents.spectra import read_spectrum

    spec = read_spectrum(job["source_path"], job["target"])
    traj = vet_job(job, spectrum=spec)
    try:
        return traj, then(traj, spec)
    except Exception as exc:
        return traj, exc


def vet_and_check_job(job: dict[str, Any]):
    """`vet_job`, and the new trajectory's claims checked (agents.claims, the patterns' claims) against
    the spectrum it was made from, in the same worker: the file is read once and the check runs
    where the vetting did, beside it on every worker, not after it in the process that writes.
    Returns (trajectory, claim results), or (trajectory, the exception) when the check failed."""
    from agents.claims import check_trajectory

    return _vet_then(job, check_trajectory)


def vet_and_measure_job(job: dict[str, Any]):
    """`vet_job`, and what checking the new trajectory's claims needs of its spectrum: the Measurer
    (agents.claims: the arrays in the observed frame and their noise), made from the spectrum the job
    read. For a caller that checks the claims itself, beside this worker (reviewer.cli.vet with one
    worker process): the file is still read once. Returns (trajectory, measurer), or (trajectory,
    the exception) when the spectrum gives no measurer; the trajectory alone when the caller made the
    measurer from its own read of the same file (`job["measured"]`: it registered the file)."""
    from agents.claims import Measurer

    if job.get("measured"):
        return vet_job(job)
    return _vet_then(job, lambda traj, spec: Measurer.from_spectrum(spec))


def verify_job(job: dict[str, Any]):
    """Read one spectrum and verify it (agents.verify.verify_spectrum), with the LLM review when
    the backend is openai."""
    from agents.spectra import read_spectrum
    from agents.verify import verify_spectrum

    spec = read_spectrum(job["source_path"], job["target"])
    cfg = _config(job) if job.get("backend") == "openai" else None
    return verify_spectrum(spec, spectrum_id=job["spectrum_id"], template_dir=job.get("templates"),
                           engine=job.get("engine", "builtin"), eager_renders=job.get("eager", False),
                           llm_config=cfg)
