"""What every `specreview import` kind shares (reviewer/cli/import_rows.py: sft and bench;
reviewer/cli/import_runs.py: trajectories, chat and FORMA): the summary, reading a file's rows, a
refused row's reason, a row's stable id and the stored spectrum a file name names. Below both, so that
neither imports the other for them (issue 49: the two imported each other)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.interop.jsonrows import TOO_DEEP, JSONFileError, jsonl_rows, too_deep


@dataclass
class ImportSummary:
    added: int = 0
    skipped_existing: int = 0
    linked: int = 0  # already present without their spectrum, linked to it now
    refused: list[str] = field(default_factory=list)  # rows not imported: "<file> line N: why"
    problems: list[str] = field(default_factory=list)  # imported, with a warning (a missing image, no label)
    labels_file: Path | None = None
    # of the trajectories added (None: those without a spectrum), whose triage signals the import stores
    spectra: set[str | None] = field(default_factory=set)

    def save(self, store, traj) -> None:
        """Store an imported trajectory and count it."""
        from reviewer.services.trajectories import save_trajectory

        save_trajectory(store, traj)
        self.added += 1
        self.spectra.add(traj.spectrum_id)


class ImportFileError(ValueError):
    """The whole file cannot be read as rows (not JSON, not Parquet, not UTF-8)."""


def iter_rows(path: Path, check: Callable[[], None] | None = None) -> Iterator[tuple[str, Any, str | None]]:
    """(where, row, problem) for each row of a .parquet, .json (a list, or one object) or .jsonl
    file. `where` names the file and the line (JSONL: physical line, from 1) or row (from 1);
    `problem` is set, and `row` None, for a JSONL line that is not valid JSON and for a row nested
    deeper than MAX_JSON_DEPTH. A file that cannot be read at all raises ImportFileError (or OSError).
    `check()`, called before each row, may raise to stop the import (reviewer.cli.console)."""
    for where, row, problem in _parsed_rows(path):
        if check is not None:
            check()
        if problem is None and isinstance(row, dict | list | tuple) and too_deep(row):
            yield where, None, TOO_DEEP
        else:
            yield where, row, problem


def _parsed_rows(path: Path) -> Iterator[tuple[str, Any, str | None]]:
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, ValueError) as exc:
            raise ImportFileError(f"not a readable Parquet file ({str(exc)[:160]})") from None
        for i, row in enumerate(rows, 1):
            yield f"{path.name} row {i}", row, None
        return
    if name.endswith((".jsonl", ".jsonl.gz")):
        try:  # one JSONL reader for every import and the demo file (agents/interop/jsonrows.py)
            yield from jsonl_rows(path)
        except JSONFileError as exc:
            raise ImportFileError(str(exc)) from None
        return
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(f"not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
                              "nothing imported") from None
    except RecursionError:
        raise ImportFileError(f"{TOO_DEEP}; nothing imported") from None
    for i, row in enumerate(data if isinstance(data, list) else [data], 1):
        yield f"{path.name} row {i}", row, None


def why(exc: BaseException) -> str:
    """A refused row's reason: the message of our own errors, the type too for anything else."""
    from agents.interop import RowError
    from agents.spectra import SpectrumReadError

    if isinstance(exc, SpectrumReadError):
        return exc.problem
    if isinstance(exc, RowError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"cannot write {exc.filename}: {exc.strerror or exc}" if exc.filename else f"cannot write: {exc}"
    return f"unexpected error ({type(exc).__name__}: {exc})"


def row_key(kind: str, row: dict[str, Any]) -> str:
    """A stable id for a row: the same row always maps to the same stored item."""
    canon = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{kind}\n{canon}".encode()).hexdigest()[:32]


def linked_spectrum(store, source_name: str | None) -> str | None:
    """The stored spectrum whose file name is the row's source file, when exactly one is."""
    from reviewer.services.items import spectra_matching

    if not source_name:
        return None
    name = Path(str(source_name)).name
    hits = [r for r in spectra_matching(store, name) if r["file_name"] == name]
    exact = [r for r in hits if r["source_path"] == str(source_name)]
    pick = exact or hits
    return pick[0]["spectrum_id"] if len(pick) == 1 else None
