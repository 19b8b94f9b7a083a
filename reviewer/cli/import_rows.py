"""`specreview import sft|bench FILE`: bring Spec-o3 data into the review database.
(`specreview import trajectories|chat|forma`: runs made elsewhere, reviewer/cli/import_runs.py.)

sft FILE.json|.jsonl [--images DIR] [--task T]: LLaMA-Factory sharegpt rows of the Spec-o3 cold
start become vet trajectories (backend "spec-o3-sft"); the row's images, read from DIR (default:
the file's folder; the rows name them like `images/lf_cv_0_0.png`), go into the store. A row's
trajectory id is a hash of the row, so importing the same file again adds nothing. When a stored
spectrum has the row's `source_name` as its file name, the trajectory is linked to it.

bench FILE.parquet|.json|.jsonl [--task T] [--out DIR]: SpecVI-Bench rows become spectra. Each
row's wavelength and flux are written as a SpecReview FITS table (agents.spectra.write_fits) under
DIR (default: <database folder>/imported/<file stem>/) and ingested, so the app shows them like any
other file. The rows carry no uncertainty: IVAR is a DER_SNR estimate from the flux (the FITS
source header says so). The ground truth is NOT put in the FITS (agents must not see it): it goes to
`manifest-labels.csv` in the same folder (columns path, object_id, task, label, redshift, index),
the CSV `specreview eval --labels` reads. File names hash the spectrum, so re-importing adds nothing.

A malformed row is refused on its own, named by its place in the file (`rows.jsonl line 7`, counted
from 1 over every physical line, blank ones included; `rows.json row 3` / `x.parquet row 3` for
array and Parquet files, also from 1), the field and what was expected; the other rows import. A
row with a text field over agents.trajectory.MAX_STEP_TEXT_BYTES (1 MB of UTF-8: a think / answer /
observation text, a prompt message) is refused the same way, naming the field and the limit. A
refused bench row leaves no FITS file behind (it is written under a temporary name first, and
removed again if ingesting it fails). The summary counts imported, already present and refused
rows; the exit code is 1 when any row was refused or the file itself cannot be read (a JSON file
that does not parse is refused whole, with the line and column of the error).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

# MAX_JSON_DEPTH is imported from here by tests and callers: the rule itself lives in agents/interop/jsonrows.py
from agents.interop.jsonrows import MAX_JSON_DEPTH  # noqa: F401
from reviewer.cli.common import db_path, known_task, open_store, store_triage_signals
from reviewer.cli.console import console_of
from reviewer.cli.import_common import ImportFileError, ImportSummary, iter_rows, linked_spectrum, row_key, why
from reviewer.store import StoreUnavailable

KINDS = ("sft", "bench", "trajectories", "chat", "forma")
FOLDER_KINDS = ("trajectories", "forma")  # take a folder as well as (trajectories) a file
LABELS_FILE = "manifest-labels.csv"  # the `manifest` prefix keeps ingest from taking it for a spectrum
LABEL_COLUMNS = ("path", "object_id", "task", "label", "redshift", "index")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("import", help="import Spec-o3 SFT rows, SpecVI-Bench rows (spectra), SpecReview "
                              "trajectory files, OpenAI-style chat logs or FORMA output folders",
                              description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=KINDS)
    p.add_argument("file", help="sft: sharegpt .json/.jsonl; bench: .parquet/.json/.jsonl; trajectories: .jsonl(.gz) "
                   "or a folder of them; chat: .jsonl of {messages, spectrum, task}; forma: a FORMA output folder")
    p.add_argument("--images", default=None, metavar="DIR",
                   help="sft: folder the rows' image paths are relative to (default: the file's folder)")
    p.add_argument("--task", default=None, help="task id for every row (default: from the prompt / data_source)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="bench: folder for the FITS files and labels (default: <database folder>/imported/<stem>)")
    return p


# -- sft ----------------------------------------------------------------------------------------
def _read_images(row: dict[str, Any], base: Path, problems: list[str], where: str) -> dict[str, bytes]:
    out = {}
    root = base.resolve()
    for rel in row.get("images") or []:
        path = (base / rel).resolve()
        if root not in path.parents:  # a row names files under its data folder, nowhere else
            problems.append(f"{where}: image {rel} is outside {base}; not read")
        elif not path.is_file():
            problems.append(f"{where}: image {rel} not found under {base}")
        else:
            png = path.read_bytes()
            if png.startswith(PNG_MAGIC):
                out[rel] = png
            else:
                problems.append(f"{where}: image {rel} is not a PNG; not stored")
    return out


def import_sft(store, file: Path, images_dir: Path | None = None, task: str | None = None,
               check: Callable[[], None] | None = None) -> ImportSummary:
    from agents.interop import check_sft_row, sft_row_to_trajectory
    from reviewer.services.items import trajectory

    summary = ImportSummary()
    base = images_dir or file.parent
    for where, row, problem in iter_rows(file, check):
        if problem:
            summary.refused.append(f"{where}: {problem}")
            continue
        try:
            check_sft_row(row)  # before anything reads the row's fields
            tid = row_key("sft", row)
            if trajectory(store, tid) is not None:
                summary.skipped_existing += 1
                continue
            traj = sft_row_to_trajectory(row, _read_images(row, base, summary.problems, where), task=task)
        except Exception as exc:
            summary.refused.append(f"{where}: {why(exc)}")
            continue
        traj.id = tid
        traj.spectrum_id = linked_spectrum(store, row.get("source_name"))
        summary.save(store, traj)
    return summary


# -- bench --------------------------------------------------------------------------------------
def _task_for(row: dict[str, Any], spec_task: str | None, override: str | None) -> str | None:
    import kb

    if override:
        return override
    if spec_task:
        return spec_task
    source = row.get("data_source")
    return source if source in kb.tasks() else None


def _fits_spectrum(spec, file: Path):
    """The row's spectrum ready for write_fits: DER_SNR ivar, LAMOST-style metadata, provenance in
    the source header. The ground truth stays out."""
    import numpy as np
    from astropy.nddata import InverseVariance
    from specutils import Spectrum

    from agents.spectra.tables import der_snr_noise

    flux = np.asarray(spec.flux.value, dtype=float)
    noise = der_snr_noise(flux)
    finite = np.isfinite(flux)
    ivar = np.where(finite, 1.0 / noise**2 if noise else 1.0, 0.0)
    meta = spec.meta
    row = meta.get("specvi_row") or {}
    extra = row.get("extra_info") or {}
    header = {"SPECVI_FILE": file.name, "SPECVI_DATA_SOURCE": str(row.get("data_source")),
              "SPECVI_INDEX": str(extra.get("index")), "SPECVI_NAME": str(extra.get("name")),
              "IVARSRC": "DER_SNR estimate from the flux (SpecVI-Bench rows carry no uncertainty)"
              if noise else "unit weights (no uncertainty in the row; DER_SNR undefined)"}
    out_meta = {"survey": meta.get("survey"), "object_id": meta.get("object_id"), "format": meta.get("format"),
                "wavelength_medium": meta.get("wavelength_medium"), "header": header}
    return Spectrum(spectral_axis=spec.spectral_axis, flux=spec.flux, uncertainty=InverseVariance(ivar),
                    mask=~finite, meta=out_meta)


def _file_name(task: str | None, object_id: str, spec) -> str:
    import numpy as np

    digest = hashlib.sha256(np.ascontiguousarray(spec.spectral_axis.value, dtype=float).tobytes()
                            + np.ascontiguousarray(spec.flux.value, dtype=float).tobytes()).hexdigest()[:12]
    stem = re.sub(r"\.fits?(\.gz)?$", "", object_id, flags=re.I)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem)[:80]
    return f"{task or 'bench'}_{stem}-{digest}.fits"


def _read_labels(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        return {(r["path"], r["task"]): r for r in csv.DictReader(fh)}


def _checked_spectrum(row: Any, where: str):
    """The row's spectrum after the reader's own checks (wavelength range and order, overflow,
    all-NaN flux): RowError / SpectrumReadError say what is wrong before anything is written."""
    import numpy as np

    from agents.interop import specvi_row_to_spectrum
    from agents.spectra.core import build_spectrum

    spec = specvi_row_to_spectrum(row)
    build_spectrum(where, spec.spectral_axis.value, np.asarray(spec.flux.value, float), None, {})
    return spec


def _write_new(spec, file: Path, path: Path) -> bool:
    """Write the row's FITS at `path` unless it is there (same spectrum, same name); True when
    written now. Written under a temporary name and renamed: a failure leaves no partial file."""
    import os

    from agents.spectra import write_fits

    if path.exists():
        return False
    tmp = path.with_name(f".{path.name}.partial")
    try:
        write_fits(_fits_spectrum(spec, file), tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return True


def _write_labels(path: Path, labels: dict) -> None:
    import os

    tmp = path.with_name(f".{path.name}.partial")
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=LABEL_COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(labels[k] for k in sorted(labels))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def import_bench(store, file: Path, out_dir: Path, task: str | None = None,
                 check: Callable[[], None] | None = None) -> ImportSummary:
    import reviewer.services.ingest

    summary = ImportSummary(labels_file=out_dir / LABELS_FILE)
    made_dir = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    labels = _read_labels(summary.labels_file)
    labels_before = dict(labels)  # rewritten only when a row changed it
    try:
        for where, row, problem in iter_rows(file, check):
            if problem:
                summary.refused.append(f"{where}: {problem}")
                continue
            try:
                spec = _checked_spectrum(row, where)
                task_id = _task_for(row, spec.meta.get("task"), task)
                path = out_dir / _file_name(task_id, str(spec.meta["object_id"]), spec)
                written = _write_new(spec, file, path)
            except Exception as exc:
                summary.refused.append(f"{where}: {why(exc)}")
                continue
            try:
                result = reviewer.services.ingest.ingest_paths(store, [path], progress=False)
            except StoreUnavailable:  # the database takes no rows at all (read-only, ...): the caller says so
                if written:
                    path.unlink(missing_ok=True)
                raise
            if result.failed:
                summary.refused += [f"{where}: {why}" for _p, why in result.failed]
                if written:  # nothing stays in --out for a refused row
                    path.unlink(missing_ok=True)
                continue
            summary.added += result.added
            summary.skipped_existing += result.skipped_existing
            truth = str(spec.meta.get("ground_truth") or "").strip().upper()
            if truth not in ("YES", "NO") or task_id is None:
                summary.problems.append(f"{where}: no YES/NO ground truth or task; spectrum stored without a label")
                continue
            key = str(path.resolve())
            labels[(key, task_id)] = {"path": key, "object_id": str(spec.meta["object_id"]), "task": task_id,
                                      "label": truth, "redshift": "" if spec.meta.get("redshift") is None
                                      else repr(float(spec.meta["redshift"])),
                                      "index": str((row.get("extra_info") or {}).get("index") or "")}
    finally:
        if labels or summary.labels_file.exists():
            if labels != labels_before or not summary.labels_file.exists():
                _write_labels(summary.labels_file, labels)
        else:
            summary.labels_file = None
            if made_dir and not any(out_dir.iterdir()):
                out_dir.rmdir()  # nothing imported into a folder made for it: leave no trace
    return summary


def run(args: argparse.Namespace) -> int:
    console = console_of(args)
    file = Path(args.file).expanduser()
    if not (file.is_file() and args.kind != "forma") and not (file.is_dir() and args.kind in FOLDER_KINDS):
        what = "folder" if args.kind == "forma" else "file or folder" if args.kind in FOLDER_KINDS else "file"
        console.warn(f"specreview import: no such {what} {file}")
        return 1
    if args.task and not known_task(console, "import", args.task):
        return 2
    store = open_store(args)
    if store is None:
        return 1
    try:
        if args.kind in ("trajectories", "chat", "forma"):
            from reviewer.cli import import_runs

            summary = (import_runs.import_trajectories(store, file, console.check) if args.kind == "trajectories"
                       else import_runs.import_chat(store, file, args.task, console.check) if args.kind == "chat"
                       else import_runs.import_forma(store, file, console.check))
            what = "trajectories"
        elif args.kind == "sft":
            images = Path(args.images).expanduser() if args.images else None
            summary = import_sft(store, file, images, args.task, console.check)
            what = "trajectories"
        else:
            stem = re.sub(r"\.(parquet|jsonl?)$", "", file.name, flags=re.I)
            out = Path(args.out).expanduser() if args.out else db_path(args).parent / "imported" / stem
            summary = import_bench(store, file, out, args.task, console.check)
            what = "spectra"
        signals = store_triage_signals(store, summary.spectra)  # as a campaign's end does (vet, verify)
    except ImportFileError as exc:  # the file as a whole is not rows
        console.warn(f"specreview import: {file}: {exc}")
        return 1
    except OSError as exc:  # unreadable input, or an --out that cannot be written
        console.warn(f"specreview import: {exc.filename or file}: {exc.strerror or exc}")
        return 1
    finally:
        store.close()
    console.say(f"database: {store.path}")
    console.say(f"imported {what}: {summary.added}; already present: {summary.skipped_existing}; "
          f"refused: {len(summary.refused)}")
    if summary.linked:
        console.say(f"linked to their spectra: {summary.linked} (imported before without them)")
    if signals:
        console.say(signals)
    if summary.labels_file is not None:
        console.say(f"labels: {summary.labels_file} (score with: specreview eval --labels {summary.labels_file})")
    for p in summary.refused:
        console.warn(f"  refused: {p}")
    for p in summary.problems:
        console.warn(f"  problem: {p}")
    return 1 if summary.refused else 0
