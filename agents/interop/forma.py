"""FORMA output folders -> what SpecReview reads of them (agents/interop/forma_steps.py turns a run
into a verify trajectory).

The format followed is FORMA's as published with the paper (Executable verification through
formalized expert reasoning in astronomical spectroscopy, Figure 4 and Methods) and its code,
github.com/mynamesnoname/AstroAgent `src/FORMA/` (workflow_orchestrator.py at commit 528e822, the
six-step graph with the no-features exit). FORMA_VERSION names it in every imported trajectory.
One spectrum's folder (its `harness_dir`) holds, by step:

  1  visual_interpreter/{name}_spectrum.npz        the snapshot the tools read (wavelength, flux, snr, ivar)
     visual_interpreter/{name}_emission.csv, _absorption.csv   CWT features;  *.png  plots (optional)
  2  single_hypothesis/{i}_lines.csv, {i}_report.md            one per redshift hypothesis
  3  feature_auditor/verdict.json;  single_hypothesis/{i}_lines_cleaned.csv
  4  hypothesis_synthesis/catalog.csv, report.md (overview table Idx | z | Verdict | Classification ...),
     hypothesis_synthesis/*.json (the synthesis verdict: redshift, classification, best_hypothesis_idx, ...)
  5  result_auditor/auditor_verdict.json
  6  final_report.md (or report_writer/final_report.md), {name}_in_brief.json (or its row of a batch's
     in_brief.csv: file_name,type,signal_clarity,redshift,redshift_rms,lines,confidence,human_review)
     stream.md  the agents' stream logs, at the top or in a step's folder

A file is found by name anywhere in the spectrum's folder. What a folder lacks is listed by name
(`missing`), never made up. Every file is untrusted: at most MAX_FILE_BYTES, JSON at most
MAX_JSON_DEPTH deep, CSV at most MAX_CSV_ROWS rows; a file that is there but cannot be read makes the
folder's import fail (FormaError, naming the file).
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.interop.jsonrows import JSONFileError, read_json, read_text
from agents.interop.rowcheck import RowError

FORMA_VERSION = "forma-528e822"  # mynamesnoname/AstroAgent src/FORMA at commit 528e822
MAX_FILE_BYTES = 32 * 2**20  # a DESI snapshot is ~0.3 MB, a stream log a few MB
MAX_CSV_ROWS = 100_000
MAX_FILES = 10_000  # per spectrum folder: a real run writes a few dozen (one pair per hypothesis)
STAGES = ("visual_interpreter", "single_hypothesis", "feature_auditor", "hypothesis_synthesis",
          "result_auditor", "report_writer")
_MARKERS = ("final_report.md", "visual_interpreter", "single_hypothesis", "result_auditor")


class FormaError(RowError):
    """A file of a FORMA folder is there but cannot be read (the message names it)."""


@dataclass
class FormaRun:
    folder: Path
    label: str  # the folder as the user named it (relative to the imported DIR)
    name: str  # FORMA's file_name: the input spectrum's stem
    brief_row: dict[str, str] | None = None  # from a batch in_brief.csv
    files: dict[str, Path] = field(default_factory=dict)  # relative path -> file (each read once)
    too_many: bool = False  # more than MAX_FILES files: refused, not read

    def find(self, pattern: str) -> list[str]:
        """Relative paths whose file name matches `pattern` (a regex), in pipeline-stage order."""
        rx = re.compile(pattern)
        hits = [rel for rel in self.files if rx.fullmatch(rel.rsplit("/", 1)[-1])]
        return sorted(hits, key=lambda rel: (_stage_rank(rel), _natural(rel)))

    def first(self, pattern: str, under: str | None = None) -> str | None:
        hits = [h for h in self.find(pattern) if under is None or h.startswith(f"{under}/") or "/" not in h]
        return hits[0] if hits else None

    def text(self, rel: str) -> str:
        try:
            return read_text(self.files[rel], MAX_FILE_BYTES)
        except JSONFileError as exc:
            raise FormaError(f"{rel}: {exc}") from None

    def json(self, rel: str) -> Any:
        try:
            return read_json(self.files[rel], MAX_FILE_BYTES)
        except JSONFileError as exc:
            raise FormaError(f"{rel}: {exc}") from None

    def csv(self, rel: str) -> list[dict[str, Any]]:
        try:
            rows = list(csv.DictReader(io.StringIO(self.text(rel))))
        except csv.Error as exc:
            raise FormaError(f"{rel}: not a readable CSV ({exc})") from None
        if len(rows) > MAX_CSV_ROWS:
            raise FormaError(f"{rel}: {len(rows):,} rows, over the {MAX_CSV_ROWS:,}-row limit")
        return [{k: _value(v) for k, v in r.items() if k is not None} for r in rows]

    def snapshot(self, rel: str) -> dict[str, Any]:
        """Coverage, pixel count and median S/N of the Visual Interpreter's spectrum snapshot (.npz);
        read without pickles (an .npz may hold code otherwise)."""
        import numpy as np

        path = self.files[rel]
        if path.stat().st_size > MAX_FILE_BYTES:
            raise FormaError(f"{rel}: larger than the {MAX_FILE_BYTES:,}-byte limit for one file")
        try:
            with np.load(path, allow_pickle=False) as npz:
                wave = np.asarray(npz["wavelength"], dtype=float)
                snr = np.asarray(npz["snr"], dtype=float) if "snr" in npz.files else None
                if "flux" not in npz.files or npz["flux"].shape != wave.shape:
                    raise ValueError("no 'flux' array the length of 'wavelength'")
        except (OSError, ValueError, KeyError) as exc:
            raise FormaError(f"{rel}: not a FORMA spectrum snapshot ({str(exc)[:160]})") from None
        wave = wave[np.isfinite(wave)]
        if wave.size == 0:
            raise FormaError(f"{rel}: the snapshot has no finite wavelength")
        out = {"coverage": [round(float(wave.min()), 2), round(float(wave.max()), 2)], "good_pixels": int(wave.size)}
        if snr is not None and np.isfinite(snr).any():
            out["median_snr"] = round(float(np.nanmedian(snr[np.isfinite(snr)])), 2)
        return out

    def digest(self) -> str:
        """A stable id for the run: its name and the bytes of every file (the same folder imports once)."""
        h = hashlib.sha256(f"forma\n{self.name}\n".encode())
        for rel in sorted(self.files):
            h.update(f"{rel}\n{_file_sha(self.files[rel])}\n".encode())
        return h.hexdigest()[:32]


def _file_sha(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:  # never read (too large): its size stands for it
        return f"size:{size}"
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stage_rank(rel: str) -> int:
    head = rel.split("/", 1)[0]
    return STAGES.index(head) if head in STAGES else len(STAGES)


def _natural(rel: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", rel)]


def _value(text: str | None) -> Any:
    """A CSV cell as a number when it is one, None when empty, else the text."""
    if text is None or text.strip() == "":
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if re.fullmatch(r"[+-]?\d+", text.strip()) else number


def _is_run(folder: Path) -> bool:
    return any((folder / m).exists() for m in _MARKERS) or any(folder.glob("*_in_brief.json"))


def _name_of(folder: Path, files: dict[str, Path]) -> str:
    for rel in sorted(files):
        base = rel.rsplit("/", 1)[-1]
        for suffix in ("_in_brief.json", "_spectrum.npz"):
            if base.endswith(suffix) and len(base) > len(suffix):
                return base[: -len(suffix)]
    return folder.name


def _batch_briefs(root: Path) -> dict[str, dict[str, str]]:
    path = root / "in_brief.csv"
    if not path.is_file():
        return {}
    try:
        rows = list(csv.DictReader(io.StringIO(read_text(path, MAX_FILE_BYTES))))
    except (csv.Error, JSONFileError) as exc:
        raise FormaError(f"in_brief.csv: cannot be read ({exc})") from None
    return {str(r.get("file_name") or ""): r for r in rows[:MAX_CSV_ROWS]}


def forma_runs(root: Path) -> list[FormaRun]:
    """One FormaRun per spectrum folder: `root` itself when it is one, else each folder directly in
    it that is (holds final_report.md, a {name}_in_brief.json or a step folder)."""
    folders = [root] if _is_run(root) else sorted(p for p in root.iterdir() if p.is_dir() and _is_run(p))
    briefs = _batch_briefs(root)
    runs = []
    for folder in folders:
        files, too_many = {}, False
        for p in folder.rglob("*"):  # a link could lead outside the folder: not followed
            if p.is_file() and not p.is_symlink() and p.name != "in_brief.csv":
                if len(files) == MAX_FILES:
                    too_many = True
                    break
                files[p.relative_to(folder).as_posix()] = p
        name = _name_of(folder, files)
        label = root.name if folder == root else folder.relative_to(root).as_posix()
        runs.append(FormaRun(folder, label, name, briefs.get(name), dict(sorted(files.items())), too_many))
    return runs
