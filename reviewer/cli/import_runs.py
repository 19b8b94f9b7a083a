"""`specreview import trajectories|chat|forma`: bring runs made elsewhere into the review database.

trajectories FILE.jsonl|DIR: SpecReview's own trajectory files (docs/trajectory.schema.json; DIR:
every .jsonl / .jsonl.gz directly in it), images relative to each file's folder. Ids are kept, so
an export imported again adds nothing, and a round trip gives back every step, image and outcome.

chat FILE.jsonl: rows of OpenAI-style `messages` with a `spectrum` and a `task`
(agents/interop/chat.py). forma DIR: a FORMA run's output tree, one verify trajectory per spectrum
folder (agents/interop/forma.py).

As for sft and bench: a bad row (or FORMA folder) is refused on its own, named by file and line
(or folder and file), and the rest import; a refused row stores nothing (each trajectory is saved
with its steps and images in one transaction, after it is complete). A trajectory's spectrum must
be in the database (ingest it first): its id when stored, else the one stored spectrum of its
file name; one that cannot be found is refused for chat and FORMA (nothing to play it back on) and
imported unlinked, with a problem line, for trajectories: the ingest that brings its file later links
it (by file name and target: reviewer.services.ingest.link_waiting_trajectories), and so does an
import of the same file again once the spectrum is stored.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from reviewer.cli.import_common import ImportFileError, ImportSummary, iter_rows, linked_spectrum, row_key, why

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


def _jsonl_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.lower().endswith(JSONL_SUFFIXES))
    if not files:
        raise ImportFileError("no .jsonl or .jsonl.gz file in this folder; nothing imported")
    return files


def _stem(name: str) -> str:
    """A file name without its FITS extension (FORMA names its outputs by the input's stem)."""
    return re.sub(r"\.(fits?|fit)(\.gz)?$", "", name, flags=re.I)


def find_spectrum(store, ref: str | None, target: str | None = None) -> str | None:
    """The stored spectrum `ref` names: a spectrum id, else the one stored spectrum with that file
    name (and target, for a multi-spectrum file)."""
    from reviewer.services.items import record_of_spectrum, spectra_matching

    if not ref:
        return None
    ref = str(ref)
    if record_of_spectrum(store, ref) is not None:
        return ref
    name = Path(ref.partition("#")[0]).name
    target = target if target is not None else (ref.partition("#")[2] or None)
    stem = _stem(name)
    hits = [r for r in spectra_matching(store, stem) if _stem(r["file_name"]) == stem
            and (target is None or str(r.get("target")) == str(target))]
    exact = [r for r in hits if r["file_name"] == name]
    hits = exact or hits
    if len(hits) == 1:
        return hits[0]["spectrum_id"]
    return linked_spectrum(store, ref) if target is None else None


def import_trajectories(store, path: Path, check: Callable[[], None] | None = None) -> ImportSummary:
    summary = ImportSummary()
    for file in _jsonl_files(path):
        try:
            _import_trajectory_file(store, file, summary, check)
        except ImportFileError as exc:  # this file is not rows at all; the folder's other files still import
            summary.refused.append(f"{file.name}: {exc}")
    return summary


def _import_trajectory_file(store, file: Path, summary: ImportSummary, check: Callable[[], None] | None) -> None:
    from agents.interop.trajectory_file import row_to_trajectory
    from reviewer.services.items import record_of_spectrum, trajectory_summary

    for where, row, problem in iter_rows(file, check):
        if problem:
            summary.refused.append(f"{where}: {problem}")
            continue
        try:
            traj = row_to_trajectory(row, file.parent)
        except Exception as exc:
            summary.refused.append(f"{where}: {why(exc)}")
            continue
        stored = trajectory_summary(store, traj.id)
        if stored is not None:
            summary.skipped_existing += 1
            if stored["spectrum_id"] is None:  # imported before its spectrum was ingested: link it now
                _link_stored(store, traj, summary)
            continue
        if traj.spectrum_id is None or record_of_spectrum(store, traj.spectrum_id) is None:
            linked = find_spectrum(store, traj.source_path, traj.target)
            if linked is None and (traj.spectrum_id or traj.source_path):
                summary.problems.append(f"{where}: spectrum {traj.spectrum_id or traj.source_path} is not in "
                                        "this database yet; imported without its spectrum (the ingest of its "
                                        "file links it)")
            traj.spectrum_id = linked
        summary.save(store, traj)


def _link_stored(store, traj, summary: ImportSummary) -> None:
    """A trajectory imported before without its spectrum, whose spectrum is stored now: link it."""
    from reviewer.services.items import record_of_spectrum
    from reviewer.services.trajectories import link_to_spectrum

    sid = find_spectrum(store, traj.source_path, traj.target) if traj.source_path else None
    if sid is None and traj.spectrum_id and record_of_spectrum(store, traj.spectrum_id) is not None:
        sid = traj.spectrum_id  # the same content hash: the same spectrum
    if sid is not None and link_to_spectrum(store, traj.id, sid):
        summary.linked += 1
        summary.spectra.add(sid)


def import_chat(store, file: Path, task: str | None = None, check: Callable[[], None] | None = None) -> ImportSummary:
    from agents.interop.chat import chat_row_to_trajectory, check_chat_row
    from reviewer.services.items import record_of_spectrum, trajectory

    summary = ImportSummary()
    for where, row, problem in iter_rows(file, check):
        if problem:
            summary.refused.append(f"{where}: {problem}")
            continue
        try:
            check_chat_row(row, task)
            tid = row_key("chat", row)
            if trajectory(store, tid) is not None:
                summary.skipped_existing += 1
                continue
            sid = find_spectrum(store, row["spectrum"], row.get("target"))
            if sid is None:
                summary.refused.append(f"{where}: spectrum {str(row['spectrum'])[:200]!r} is not in the database "
                                       "(ingest its file first)")
                continue
            traj, notes = chat_row_to_trajectory(row, file.parent, task)
        except Exception as exc:
            summary.refused.append(f"{where}: {why(exc)}")
            continue
        traj.id, traj.spectrum_id = tid, sid
        traj.source_path = record_of_spectrum(store, sid)["source_path"]
        summary.problems += [f"{where}: {n}" for n in notes]
        summary.save(store, traj)
    return summary


def import_forma(store, folder: Path, check: Callable[[], None] | None = None) -> ImportSummary:
    from agents.interop.forma import forma_runs
    from agents.interop.forma_steps import run_to_trajectory
    from agents.interop.rowcheck import RowError
    from reviewer.services.items import record_of_spectrum, trajectory

    summary = ImportSummary()
    try:
        runs = forma_runs(folder)
    except RowError as exc:  # the batch's in_brief.csv cannot be read: nothing imported
        raise ImportFileError(f"{exc}; nothing imported") from None
    if not runs:
        raise ImportFileError("no FORMA output here (no folder with final_report.md, {name}_in_brief.json or a "
                              "step folder such as visual_interpreter/); nothing imported")
    for run in runs:
        if check is not None:
            check()
        where = f"{run.label}/"
        try:
            traj, missing = run_to_trajectory(run)
        except Exception as exc:
            summary.refused.append(f"{where}: {why(exc)}")
            continue
        if trajectory(store, traj.id) is not None:
            summary.skipped_existing += 1
            continue
        sid = find_spectrum(store, run.name)
        if sid is None:
            summary.refused.append(f"{where}: no stored spectrum named {run.name!r} (ingest the FITS file FORMA read "
                                   "first)")
            continue
        traj.spectrum_id = sid
        traj.source_path = record_of_spectrum(store, sid)["source_path"]
        summary.problems += [f"{where}: missing {m}" for m in missing]
        summary.save(store, traj)
    return summary
