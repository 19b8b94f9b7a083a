"""Knowledge as data: line lists, tasks, rubrics, presets. A tiny loader and no logic.

Every file here is YAML or Markdown; adding a task means adding `tasks/<id>.yaml`, no code.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

KB_DIR = Path(__file__).resolve().parent


@cache
def load(name: str) -> Any:
    """Load `kb/<name>.yaml` (cached; treat the result as read-only)."""
    with open(KB_DIR / f"{name}.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def lines(kind: str | None = None) -> list[dict]:
    """Spectral lines (rest wavelengths, vacuum, Angstrom). kind: emission / absorption / sky."""
    items = load("lines")["lines"]
    return [ln for ln in items if kind is None or ln["kind"] == kind]


def stellar_lines() -> list[dict]:
    """Lines and molecular bands labelled on stars, each with the spectral groups that show it (`types`)."""
    return load("stellar_lines")["lines"]


def presets() -> list[dict]:
    """One-click wavelength windows of the viewer (observed frame, Angstrom)."""
    return load("presets")["presets"]


@cache
def tasks() -> dict[str, dict]:
    """All vetting tasks by id, from `kb/tasks/*.yaml`."""
    out = {}
    for path in sorted((KB_DIR / "tasks").glob("*.yaml")):
        with open(path, encoding="utf-8") as fh:
            entry = yaml.safe_load(fh)
        out[entry["id"]] = entry
    return out


def task(task_id: str) -> dict:
    known = tasks()
    if task_id not in known:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(sorted(known))}")
    return known[task_id]
