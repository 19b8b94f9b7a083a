"""Known answers for a campaign's gold items (issue 47, item 1), from three places:

- the organiser's CSV file (`read_gold_file`): columns `file` (a stored spectrum's file name, `name#TARGET`
  for one target of a multi-target file, or a path) or `spectrum_id`, `task`, and for a yes/no task
  `answer` (YES / NO), for verify `class` (STAR / GALAXY / QSO) and `z`. It is checked whole before anything
  is written: every problem is named with its line, and one problem refuses the file;
- the survey pipeline's labels where a task maps to them (`survey_answers`): a vet task's `labels` rule in
  kb/tasks/<id>.yaml (as `specreview eval` reads them), verify's pipeline class and z;
- settled consensus (`consensus_answers`): trajectories whose label two or more reviewers agreed on, or a
  merger resolved (reviewer.services.conflicts; a single reviewer's verdict is not gold).

A known answer is about a spectrum and a task; every trajectory of that task on the spectrum can be its
gold item. How a reviewer's verdict is scored against it is reviewer.services.reviewer_stats'.
"""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.verify.evaluation import split_file

VET_ANSWERS = ("YES", "NO")
VERIFY_CLASSES = ("STAR", "GALAXY", "QSO")
GOLD_FILE_MAX_BYTES = 16 * 1024 * 1024  # a gold file of 100k rows is a few MB: bigger is not one
GOLD_FILE_MAX_ROWS = 100_000
PROBLEMS_SHOWN = 20
Z_RANGE = (-0.01, 12.0)  # the corrected z a verdict may carry (reviewer.services.labels.validate_correction)


@dataclass(frozen=True)
class KnownAnswer:
    spectrum_id: str
    task: str
    answer: str  # YES / NO, or verify's class
    z: float | None
    source: str  # file / survey / consensus
    origin: str  # the file and its line, the survey, or how the consensus was settled

    def label(self) -> dict[str, Any]:
        """The answer as a verdict label: {'answer': 'YES'} or {'type': 'QSO', 'z': 2.1}."""
        return {"answer": self.answer} if self.task != "verify" else {"type": self.answer, "z": self.z}


class GoldFileError(ValueError):
    """A gold file refused: the message names the file and each problem with its line."""


def _known_tasks() -> set[str]:
    import kb

    return {*kb.tasks(), "verify"}


def read_gold_file(store, path: str | Path, task: str) -> tuple[list[KnownAnswer], int]:
    """(the file's known answers for `task`, how many rows were for other tasks), or GoldFileError."""
    path = Path(path)
    shown = str(path)
    if not path.is_file():
        raise GoldFileError(f"{shown}: no such file")
    if path.stat().st_size > GOLD_FILE_MAX_BYTES:
        raise GoldFileError(f"{shown}: {path.stat().st_size} bytes, more than a gold file's "
                            f"{GOLD_FILE_MAX_BYTES} (one row per known answer)")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise GoldFileError(f"{shown}: not UTF-8 text (byte {err.start})") from err
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in (reader.fieldnames or [])]
    if not header:
        raise GoldFileError(f"{shown}: empty: a header line (file or spectrum_id, task, answer; for verify "
                            "class and z) is needed")
    reader.fieldnames = header
    missing = [c for c in ("task",) if c not in header]
    if "file" not in header and "spectrum_id" not in header:
        missing.insert(0, "file or spectrum_id")
    if "answer" not in header and not {"class", "z"} <= set(header):
        missing.append("answer (for verify: class and z)")
    if missing:
        raise GoldFileError(f"{shown}: line 1: the header lacks {', '.join(missing)} (it has {', '.join(header)})")
    known_tasks, problems = _known_tasks(), []
    parsed: list[tuple[int, dict[str, str]]] = []
    for row in reader:
        if reader.line_num > GOLD_FILE_MAX_ROWS + 1:
            raise GoldFileError(f"{shown}: more than {GOLD_FILE_MAX_ROWS} rows")
        if None in row:
            problems.append(f"line {reader.line_num}: more fields than the header's {len(header)}")
            continue
        parsed.append((reader.line_num, {k: (v or "").strip() for k, v in row.items()}))
    names = [split_file(r.get("file", ""))[0] for _, r in parsed if r.get("file") and not r.get("spectrum_id")]
    by_name: dict[str, list[dict]] = {}
    for found in store.spectra.spectra_named([Path(n).name for n in names]):
        by_name.setdefault(found["file_name"], []).append(found)
    answers: dict[tuple[str, str], tuple[KnownAnswer, int]] = {}
    other_tasks = 0
    for line, row in parsed:
        try:
            answer = _row_answer(store, row, by_name, known_tasks, path, line)
        except ValueError as err:
            problems.append(f"line {line}: {err}")
            continue
        key = (answer.spectrum_id, answer.task)
        if key in answers and (answers[key][0].answer, answers[key][0].z) != (answer.answer, answer.z):
            problems.append(f"line {line}: spectrum {answer.spectrum_id} has another {answer.task} answer on "
                            f"line {answers[key][1]}")
            continue
        answers.setdefault(key, (answer, line))
    if problems:
        more = f"\n  ... and {len(problems) - PROBLEMS_SHOWN} more" if len(problems) > PROBLEMS_SHOWN else ""
        raise GoldFileError(f"{shown}: {len(problems)} problem(s), nothing was written:\n  "
                            + "\n  ".join(problems[:PROBLEMS_SHOWN]) + more)
    mine = [a for a, _ in answers.values() if a.task == task]
    other_tasks = sum(1 for a, _ in answers.values() if a.task != task)
    return mine, other_tasks


def _row_answer(store, row: dict[str, str], by_name: dict[str, list[dict]], known_tasks: set[str],
                path: Path, line: int) -> KnownAnswer:
    """One row's known answer, or ValueError saying what is wrong with it."""
    task = row.get("task", "")
    if task not in known_tasks:
        raise ValueError(f"task {task!r} is not a task (one of {', '.join(sorted(known_tasks))})")
    spectrum_id = _row_spectrum(store, row, by_name, path)
    z = None
    if task == "verify":
        answer = row.get("class", "").upper()
        if answer not in VERIFY_CLASSES:
            raise ValueError(f"class {row.get('class', '')!r} is not one of {', '.join(VERIFY_CLASSES)}")
        try:
            z = float(row.get("z", ""))
        except ValueError:
            raise ValueError(f"z {row.get('z', '')!r} is not a number") from None
        if not (math.isfinite(z) and Z_RANGE[0] <= z <= Z_RANGE[1]):
            raise ValueError(f"z {z} is outside {Z_RANGE[0]}..{Z_RANGE[1]}")
    else:
        answer = row.get("answer", "").upper()
        if answer not in VET_ANSWERS:
            raise ValueError(f"answer {row.get('answer', '')!r} is not YES or NO")
    return KnownAnswer(spectrum_id, task, answer, z, "file", f"{path.name}:{line}")


def _row_spectrum(store, row: dict[str, str], by_name: dict[str, list[dict]], path: Path) -> str:
    """The stored spectrum a row names: by `spectrum_id`, else by `file` (name, name#TARGET or a path)."""
    if row.get("spectrum_id"):
        if store.spectra.get_spectrum(row["spectrum_id"]) is None:
            raise ValueError(f"spectrum_id {row['spectrum_id']!r} is not a stored spectrum")
        return row["spectrum_id"]
    entry = row.get("file", "")
    if not entry:
        raise ValueError("neither file nor spectrum_id is given")
    name, target = split_file(entry)
    found = [s for s in by_name.get(Path(name).name, []) if target is None or str(s.get("target")) == target]
    if len(found) > 1:  # the same name in several folders: the path says which
        resolved = str((path.parent / name).resolve())
        found = [s for s in found if s.get("source_path") == resolved] or found
    if not found:
        raise ValueError(f"file {entry!r} is not a stored spectrum (ingest it first)")
    if len(found) > 1:
        raise ValueError(f"file {entry!r} names {len(found)} stored spectra: give spectrum_id, or name#TARGET")
    return found[0]["spectrum_id"]


# -- the survey's labels ---------------------------------------------------------------------
def _match(rule: dict[str, str], spectrum: dict[str, Any]) -> bool:
    fields = {"class": spectrum.get("pipeline_class"), "subclass": spectrum.get("pipeline_subclass"),
              "survey": spectrum.get("survey")}
    return all(re.search(pattern, fields.get(key) or "") for key, pattern in rule.items())


def pipeline_truth(task: dict, spectrum: dict[str, Any]) -> str | None:
    """A vet task's answer from the survey pipeline's labels by the task's `labels` rule (kb/tasks/<id>.yaml):
    YES where the positive rule matches, NO where the negative one does, else None."""
    rules = task.get("labels") or {}
    if rules.get("positive") and _match(rules["positive"], spectrum):
        return "YES"
    if rules.get("negative") and _match(rules["negative"], spectrum):
        return "NO"
    return None


def survey_answers(store, task: str, spectrum_ids: list[str]) -> list[KnownAnswer]:
    """The survey pipeline's answers for `task` on these spectra, where the task maps to them."""
    import kb

    out = []
    for sid, spectrum in store.spectra.get_spectra(list(dict.fromkeys(spectrum_ids))).items():
        survey = spectrum.get("survey") or "survey"
        if task == "verify":
            z = spectrum.get("pipeline_z")
            if spectrum.get("pipeline_class") in VERIFY_CLASSES and z is not None and math.isfinite(z):
                out.append(KnownAnswer(sid, task, spectrum["pipeline_class"], float(z), "survey", survey))
            continue
        answer = pipeline_truth(kb.task(task), spectrum)
        if answer is not None:
            out.append(KnownAnswer(sid, task, answer, None, "survey", survey))
    return out


def consensus_answers(store, task: str) -> list[KnownAnswer]:
    """Answers settled by people on `task`: two or more reviewers agreeing, or a merger's resolution."""
    from reviewer.services.conflicts import evaluation_frame

    frame = evaluation_frame(store, task=task)
    if frame.empty:
        return []
    kept = frame[frame["truth_source"].isin(["agreed", "resolution"]) & frame["truth"].notna()]
    out: dict[str, KnownAnswer] = {}
    for row in kept.to_dict("records"):
        z = row.get("truth_z")
        z = float(z) if z is not None and math.isfinite(z) else None
        if task == "verify" and (str(row["truth"]).upper() not in VERIFY_CLASSES or z is None):
            continue  # a verify answer is a class and a z (UNKNOWN, or no z, is no known answer)
        out.setdefault(row["spectrum_id"], KnownAnswer(row["spectrum_id"], task, str(row["truth"]).upper(), z,
                                                       "consensus", f"{row['truth_source']} on {row['trajectory_id']}"))
    return list(out.values())
