"""Exports: prospect VI CSV, one Parquet file per table, Spec-o3 cold-start SFT rows and
SpecVI-Bench-style rows. Every export takes `session` (id or name): with it only that audit
session's labels count, frozen at its close.

SFT and bench rows carry a `claims` field: the claim checker's result for each claim of the exported
trajectory's text (reviewer.services.claims.export_claims: step, span, verdict, measured value, tolerance,
window, reason, checker version), so training data can leave out trajectories with contradicted
claims. They are the stored results when the exported text is the stored one, else (revised text,
or never checked) checked now on the spectrum; [] when neither is possible.

The SQL is in the store (`store.reviews`, reviewer/store/review_queries.py); the row formats belong to agents/interop.

Writing is all-or-nothing: a folder export is written into a hidden staging folder beside OUT and
moved into place only when complete, the VI CSV into a temporary file renamed over OUT. A failure
(a file where a folder is needed, no permission, a full disk) raises ExportError / OSError and leaves
OUT as it was. With `overwrite=False` an export refuses to replace a file that is already there.
"""
from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import stat
import tempfile
import unicodedata
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.trajectory import UNJUDGEABLE
from reviewer.services.conflicts import evaluation_frame, verdict_for
from reviewer.services.curation import curation_board

# prospect's CSV (desihub/prospect utilities.py / save_vi.js), in this exact order
VI_COLUMNS = ("TARGETID", "EXPID", "NIGHT", "TILEID", "Spec_version", "Redrock_version", "Template_version",
              "Redrock_spectype", "Redrock_z", "Redrock_deltachi2", "VI_scanner", "VI_quality", "VI_issue",
              "VI_z", "VI_spectype", "VI_comment")
VI_COMMENT_MAX = 100
_HEADER_KEYS = {  # VI column -> header keys that may hold it (first present wins)
    "EXPID": ("EXPID",), "NIGHT": ("NIGHT",), "TILEID": ("TILEID",), "Spec_version": ("SPECPROD", "SPECVER"),
    "Redrock_version": ("RRVER", "REDROCK_VERSION"), "Template_version": ("TEMVER", "TEMPLATE_VERSION"),
    "Redrock_deltachi2": ("DELTACHI2",),
}


def vi_comment(text: str | None) -> str:
    """prospect's comment rules: commas become ';', non-ASCII becomes its ASCII base letter or '?',
    line breaks become spaces, at most 100 characters."""
    if not text:
        return ""
    text = " ".join(str(text).split()).replace(",", ";")
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
            continue
        base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
        out.append(base if base else "?")
    return "".join(out)[:VI_COMMENT_MAX]


# A spreadsheet runs a cell that starts with one of these (after blanks) as a formula: `=HYPERLINK(...)` from
# a spectrum header, an object id, a reviewer name or a comment. OWASP's advice for CSV: write such a text
# cell with a leading ' so it stays text (a tab or CR first is treated so too). A number that starts so
# (-0.001, a negative DESI TARGETID) stays a number.
_FORMULA_STARTS = ("=", "+", "-", "@")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: str) -> str:
    """`value` as a CSV cell a spreadsheet will not run: a text starting like a formula gets a leading '."""
    formula = value[:1] in ("\t", "\r") or value.lstrip()[:1] in _FORMULA_STARTS
    return "'" + value if formula and not _NUMBER.fullmatch(value) else value


def _text(value: Any) -> str:
    """One cell of text: line breaks become spaces (the CSV writer does not quote a lone CR, and a reader
    would start a new row there), commas ';' (prospect's reader splits on every comma)."""
    return "" if value is None else " ".join(str(value).splitlines()).replace(",", ";")


def _fixed(value: Any, places: int) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return f"{number:.{places}f}" if math.isfinite(number) else ""


def vi_row(label: dict[str, Any]) -> dict[str, str] | None:
    """One prospect CSV row (all strings) from a current VI label joined with its spectrum, or None
    when prospect would not write it (quality unset and no comment, issue or z)."""
    quality = label.get("quality")
    if quality is None and not (label.get("comment") or label.get("issues") or label.get("z") is not None):
        return None
    header = label.get("header") or {}
    row = {c: "" for c in VI_COLUMNS}
    # int64 ids stay text (prospect#121): never through float
    row["TARGETID"] = _text(label.get("object_id") or label.get("spectrum_target") or label["spectrum_id"])
    for column, keys in _HEADER_KEYS.items():
        row[column] = _text(next((header[k] for k in keys if header.get(k) not in (None, "")), None))
    if row["Redrock_deltachi2"]:
        row["Redrock_deltachi2"] = _fixed(row["Redrock_deltachi2"], 1)
    row["Redrock_spectype"] = _text(label.get("pipeline_class"))
    row["Redrock_z"] = _fixed(label.get("pipeline_z"), 4)
    row["VI_scanner"] = _text(label.get("reviewer"))
    row["VI_quality"] = "-1" if quality is None else str(int(quality))
    row["VI_issue"] = label.get("issues") or ""
    row["VI_z"] = "" if label.get("z") is None else repr(round(float(label["z"]), 6))
    row["VI_spectype"] = _text(label.get("spectype"))
    row["VI_comment"] = vi_comment(label.get("comment"))
    return row


class ExportError(Exception):
    """An export cannot be written where it was asked to go (one line, naming the path and why)."""


def _file_in_the_way(out: Path) -> Path | None:
    """The first existing ancestor of `out` that is not a folder (writing below it cannot work)."""
    for parent in out.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def _kind(path: Path) -> str | None:
    """What is at `path` itself (a link is not followed); None when nothing is."""
    try:
        mode = path.lstat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    for test, kind in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISFIFO, "a named pipe")):
        if test(mode):
            return kind
    return "a special file"


def _refuse_unless_regular(path: Path, kind: str | None) -> None:
    """An export replaces regular files only: renaming over a link would replace the link (not what it
    points at), over a device or a pipe the system's node."""
    if kind not in (None, "a regular file", "a folder"):
        raise ExportError(f"{path} is {kind}; an export replaces only a regular file (remove it or choose another path)")


def _make_parents(path: Path) -> list[Path]:
    """mkdir -p path; returns the folders it created (deepest last), to remove again on failure."""
    made = []
    for parent in reversed([path, *path.parents]):
        if not parent.exists():
            made.append(parent)
    path.mkdir(parents=True, exist_ok=True)
    return made


def _remove_made(made: list[Path]) -> None:
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            break


@contextmanager
def staged_folder(out_dir: str | os.PathLike, overwrite: bool = True):
    """Yield a hidden staging folder beside `out_dir`; when the block ends without error, its files
    move into `out_dir` (created if needed). Any error removes the staging folder and whatever
    folders this created, so `out_dir` is left as it was. `overwrite=False` refuses (ExportError)
    when a file to be written is already in `out_dir`."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out} is a file; this export writes a folder (choose a folder path)")
    blocker = _file_in_the_way(out)
    if blocker is not None:
        raise ExportError(f"cannot write {out}: {blocker} is a file, not a folder")
    made = _make_parents(out.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except BaseException:
        _remove_made(made)
        raise
    try:
        yield tmp
        files = sorted(p.relative_to(tmp) for p in tmp.rglob("*") if p.is_file())
        if not out.exists():
            os.rename(tmp, out)  # one atomic step
            return
        for rel in files:  # the file, and the folders it goes in, are what they look like
            for sub in (*reversed(rel.parents[:-1]), rel):
                _refuse_unless_regular(out / sub, _kind(out / sub))
        taken = [str(f) for f in files if (out / f).exists()]
        if taken and not overwrite:
            shown = ", ".join(taken[:3]) + (f" and {len(taken) - 3} more" if len(taken) > 3 else "")
            raise ExportError(f"{out} already holds {shown}; use --force to overwrite")
        for rel in files:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, out / rel)
        for folder in sorted((p for p in tmp.rglob("*") if p.is_dir()), reverse=True):
            (out / folder.relative_to(tmp)).mkdir(parents=True, exist_ok=True)  # empty ones too (images/)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_made(made)
        raise
    shutil.rmtree(tmp, ignore_errors=True)


def _write_file_atomically(out: Path, write: Callable[[Any], None], overwrite: bool = True) -> None:
    """Call write(file handle) on a temporary file beside `out`, then rename it over `out`."""
    kind = _kind(out)
    if kind == "a folder":
        raise ExportError(f"{out} is a folder; the vi export writes a CSV file (give a file name)")
    _refuse_unless_regular(out, kind)
    if kind is not None and not overwrite:
        raise ExportError(f"{out} exists; use --force to overwrite it")
    blocker = _file_in_the_way(out)
    if blocker is not None:
        raise ExportError(f"cannot write {out}: {blocker} is a file, not a folder")
    made = _make_parents(out.parent)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.partial-", dir=out.parent)
        with open(fd, "w", newline="", encoding="ascii", errors="replace") as fh:
            write(fh)
        os.replace(tmp, out)
        tmp = None
    except BaseException:
        _remove_made(made)
        raise
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def export_vi_csv(store, out_file: str | os.PathLike, session: str | None = None, overwrite: bool = True) -> int:
    """Write every inspector's current VI label as prospect's CSV; returns the number of rows.
    `overwrite=False` refuses (ExportError) when `out_file` exists."""
    rows = [r for r in (vi_row(label) for label in store.reviews.current_vi_labels(session, with_header=True)) if r is not None]
    rows.sort(key=lambda r: (r["TARGETID"], r["VI_scanner"]))

    def write(fh):
        writer = csv.DictWriter(fh, fieldnames=VI_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({column: csv_cell(cell) for column, cell in row.items()} for row in rows)

    _write_file_atomically(Path(out_file), write, overwrite)
    return len(rows)


def export_parquet(store, out_dir: str | os.PathLike, session: str | None = None,
                   overwrite: bool = True) -> dict[str, int]:
    """One `<table>.parquet` per table (label tables carry reviewer names and UTC times); returns
    rows written per table. DuckDB streams each table into its file: memory stays bounded at any size."""
    counts = {}
    with staged_folder(out_dir, overwrite) as out:
        for table in store.reviews.table_names():
            counts[table] = store.reviews.copy_table_to_parquet(table, out / f"{table}.parquet", session)
    return counts


# -- Spec-o3 rows ----------------------------------------------------------------------------
@dataclass
class RowsExport:
    written: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (trajectory_id, why)
    files: list[str] = field(default_factory=list)


SpectrumLoader = Callable[[dict[str, Any]], Any]  # spectra row -> specutils Spectrum (or None)


def default_spectrum_loader(row: dict[str, Any]):
    """Read the stored spectrum from its source path (None when the file is gone)."""
    from agents.spectra import read_spectrum

    path = row.get("source_path")
    if not path or not Path(path).exists():
        return None
    return read_spectrum(path, target=row.get("target"))


def curated_trajectory(store, trajectory_id: str, session: str | None = None,
                       spectrum_loader: SpectrumLoader = default_spectrum_loader):
    """The stored trajectory with its latest revisions applied and every render present (stored,
    or re-rendered from the spectrum). Returns (trajectory, spectrum or None)."""
    from reviewer.services.curation import apply_revisions

    traj = store.trajectories.load_trajectory(trajectory_id, with_images=True)
    if traj is None:
        raise KeyError(f"no trajectory {trajectory_id}")
    spec_row = store.spectra.get_spectrum(traj.spectrum_id) if traj.spectrum_id else None
    spectrum = spectrum_loader(spec_row) if spec_row else None
    revisions = store.reviews.revisions_in_scope(trajectory_id, session)
    traj = apply_revisions(traj, revisions, spectrum)
    for step in traj.steps:  # renders referenced by revisions, stored by the reviewer's session
        if step.image_sha and step.image_sha not in traj.images:
            png = store.images.get_image(step.image_sha)
            if png is not None:
                traj.images[step.image_sha] = png
    missing = [s for s in traj.steps if s.kind in ("prompt", "tool_result") and not s.is_error
               and (s.image_sha is None or s.image_sha not in traj.images)]
    if missing and spectrum is not None:
        from agents.vet.renders import fill_images, render_step, tool_for

        fill_images(traj, spectrum)
        tool = tool_for(traj, spectrum)
        for step in missing:
            if step.image_sha is None or step.image_sha not in traj.images:
                png = render_step(traj, step, spectrum, tool)
                if png is not None:
                    step.image_sha = traj.add_image(png)
    return traj, spectrum


def exported_claims(store, traj, spectrum, session: str | None = None) -> list[dict[str, Any]]:
    """The `claims` field of an exported row for `traj` as curated_trajectory gave it (revisions
    applied): the stored results when no revision changed its text, else a fresh check against
    `spectrum` (not stored: it is about the revised text); [] without either."""
    from reviewer.services.claims import claim_rows, export_claims

    revised = any(r.get("text") is not None for r in store.reviews.revisions_in_scope(traj.id, session))
    if not revised:
        stored = store.claims.claims_for(traj.id)
        if stored:
            return export_claims(stored)
    if spectrum is None:
        return []
    from agents.claims import check_trajectory

    return export_claims(claim_rows(check_trajectory(traj, spectrum)))


def _ground_truth(store, trajectory_id: str, session: str | None) -> str | None:
    final = verdict_for(store, trajectory_id, session)["final"]
    if final is None or final["action"] == "reject":
        return None
    from reviewer.services.consensus import normalise_label

    return normalise_label(final["label"]).get("answer")


SFT_FILE = "train_sharegpt.json"


def sft_data_info() -> dict[str, Any]:
    """LLaMA-Factory's dataset card for the export (Spec-o3 cold_start/data/data_info.json)."""
    return {"merged_train_sharegpt": {
        "file_name": SFT_FILE, "formatting": "sharegpt",
        "columns": {"messages": "conversations", "images": "images"},
        "tags": {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                 "system_tag": "system"}}}


def export_sft(store, out_dir: str | os.PathLike, session: str | None = None, task: str | None = None,
               spectrum_loader: SpectrumLoader = default_spectrum_loader, overwrite: bool = True) -> RowsExport:
    """Accepted (curated) vet trajectories, latest revisions applied, as LLaMA-Factory sharegpt rows:
    `train_sharegpt.json` + `images/` + `data_info.json` (Spec-o3 cold-start format). The ground
    truth is the settled human label when there is one, else the trajectory's own. Each row has a
    `claims` field (exported_claims)."""
    with staged_folder(out_dir, overwrite) as out:
        return _export_sft(store, out, session, task, spectrum_loader)


def _export_sft(store, out: Path, session, task, spectrum_loader) -> RowsExport:
    from agents.interop import trajectory_to_sft_row

    (out / "images").mkdir(parents=True, exist_ok=True)
    result = RowsExport()
    rows = []
    for item in curation_board(store, session=session, task=task, state="accepted"):
        tid = item["trajectory_id"]
        if item["task"] == "verify":
            result.skipped.append((tid, "verify trajectories have no Spec-o3 SFT form"))
            continue
        try:
            traj, spectrum = curated_trajectory(store, tid, session, spectrum_loader)
        except Exception as exc:
            result.skipped.append((tid, f"{type(exc).__name__}: {exc}"))
            continue
        if traj.outcome.get("status") == UNJUDGEABLE:  # Spec-o3 rows end in \boxed{YES/NO}
            result.skipped.append((tid, "the agent refused the spectrum as unjudgeable: no answer to train on"))
            continue
        missing = [s.index for s in traj.steps if s.kind in ("prompt", "tool_result") and not s.is_error
                   and s.image_sha not in traj.images]
        if missing:
            result.skipped.append((tid, f"renders missing for steps {missing} and the spectrum is unavailable"))
            continue
        index = len(rows)
        traj.outcome = {**traj.outcome, "sample_index": index}
        row, files = trajectory_to_sft_row(
            traj, image_path=lambda t, i, n=index: f"images/{t.task}_{n}_{i}.png",
            ground_truth=_ground_truth(store, tid, session))
        row["sample_index"] = index
        row["claims"] = exported_claims(store, traj, spectrum, session)
        for rel, png in files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(png)
        rows.append(row)
    (out / SFT_FILE).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    (out / "data_info.json").write_text(json.dumps(sft_data_info(), indent=2), encoding="utf-8")
    result.written = len(rows)
    result.files = [SFT_FILE, "data_info.json", "images/"]
    return result


def export_bench(store, out_dir: str | os.PathLike, session: str | None = None, task: str | None = None,
                 fmt: str = "parquet", spectrum_loader: SpectrumLoader = default_spectrum_loader,
                 overwrite: bool = True) -> RowsExport:
    """SpecVI-Bench-style rows, one per vet trajectory with a settled human YES/NO label (that label
    is the ground truth; the spectrum's flux and wavelength go in create_kwargs, the overview PNG in
    images/), written per task as `review_<task>.parquet` or `.json`. Each row has a `claims` field:
    the reviewed trajectory's claim results (exported_claims)."""
    if fmt not in ("parquet", "json"):
        raise ValueError("fmt is parquet or json")
    with staged_folder(out_dir, overwrite) as out:
        return _export_bench(store, out, session, task, fmt, spectrum_loader)


def _export_bench(store, out: Path, session, task, fmt: str, spectrum_loader) -> RowsExport:
    from agents.interop import spectrum_to_specvi_row

    (out / "images").mkdir(parents=True, exist_ok=True)
    result = RowsExport()
    by_task: dict[str, list[dict[str, Any]]] = {}
    frame = evaluation_frame(store, session=session, task=task)
    for rec in frame.to_dict("records"):
        tid = rec["trajectory_id"]
        if rec["task"] == "verify" or rec["truth"] not in ("YES", "NO"):
            continue
        try:
            traj, spectrum = curated_trajectory(store, tid, session, spectrum_loader)
        except Exception as exc:
            result.skipped.append((tid, f"{type(exc).__name__}: {exc}"))
            continue
        if spectrum is None:
            result.skipped.append((tid, "spectrum file unavailable"))
            continue
        overview = next((s for s in traj.steps if s.kind == "prompt"), None)
        images = []
        if overview is not None and overview.image_sha in traj.images:
            rel = f"images/{rec['task']}_{tid}_0.png"
            (out / rel).write_bytes(traj.images[overview.image_sha])
            images.append(rel)
        row = spectrum_to_specvi_row(spectrum, rec["task"], ground_truth=rec["truth"], images=images, index=tid)
        row["claims"] = exported_claims(store, traj, spectrum, session)
        by_task.setdefault(rec["task"], []).append(row)
    for task_id, rows in sorted(by_task.items()):
        name = f"review_{task_id}.{fmt}"
        if fmt == "json":
            (out / name).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        else:
            import pandas as pd

            pd.DataFrame(rows).to_parquet(out / name, index=False)
        result.files.append(name)
        result.written += len(rows)
    return result


TRAJECTORIES_FILE = "trajectories.jsonl"


def _jsonl_line(row: dict[str, Any]) -> str:
    """A row as one JSON line (a value JSON has no type for, such as a time, as its text)."""
    line = json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str)
    # U+2028/9 are legal in JSON strings but end a line for some readers (str.splitlines)
    return line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n"


def export_trajectories(store, out_dir: str | os.PathLike, task: str | None = None, inline_images: bool = False,
                        overwrite: bool = True) -> RowsExport:
    """Every stored trajectory (of `task`), as the agents wrote it, in SpecReview's own format
    (agents/interop/trajectory_file.py, docs/trajectory.schema.json): `trajectories.jsonl`, oldest
    first, and `images/<sha256>.png` (or data URLs in the rows with `inline_images`). A trajectory
    whose image is not in the database is skipped, named, rather than written unreadable."""
    from agents.interop.trajectory_file import IMAGES_DIR, trajectory_to_row

    with staged_folder(out_dir, overwrite) as out:
        result = RowsExport()
        (out / IMAGES_DIR).mkdir()
        rows = sorted(store.trajectories.list_trajectories(task=task), key=lambda r: (r["created_at"], r["id"]))
        with open(out / TRAJECTORIES_FILE, "w", encoding="utf-8", newline="\n") as fh:
            for rec in rows:
                traj = store.trajectories.load_trajectory(rec["id"], with_images=True)
                try:
                    row, files = trajectory_to_row(traj, inline_images)
                except KeyError as exc:
                    result.skipped.append((rec["id"], str(exc.args[0])))
                    continue
                for rel, png in files.items():
                    if not (out / rel).exists():
                        (out / rel).write_bytes(png)
                fh.write(_jsonl_line(row))
                result.written += 1
        result.files = [TRAJECTORIES_FILE, f"{IMAGES_DIR}/"]
        return result


STEPS_FILE, PAIRS_FILE = "steps.jsonl", "preference_pairs.jsonl"


def export_steps(store, out_dir: str | os.PathLike, session: str | None = None, task: str | None = None,
                 overwrite: bool = True) -> dict[str, int]:
    """The reviewers' step judgments for process supervision (reviewer.services.step_judgments): `steps.jsonl`,
    one row per judged step and reviewer (trajectory, step index, task, agent, judgment, failure-mode tags,
    reviewer, the step's text and tool call), and `preference_pairs.jsonl`, trajectories of one task on one
    spectrum with every judged step correct (chosen) against those with a step judged incorrect (rejected).
    Returns the rows written per file."""
    from reviewer.services.step_judgments import preference_pairs, supervision_rows

    rows = supervision_rows(store.step_judgments.judged_steps(session, task))
    pairs = preference_pairs(rows)
    with staged_folder(out_dir, overwrite) as out:
        for name, written in ((STEPS_FILE, rows), (PAIRS_FILE, pairs)):
            with open(out / name, "w", encoding="utf-8", newline="\n") as fh:
                fh.writelines(_jsonl_line(r) for r in written)
    return {STEPS_FILE: len(rows), PAIRS_FILE: len(pairs)}
