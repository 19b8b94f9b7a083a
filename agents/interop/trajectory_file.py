"""SpecReview's own trajectory file: JSON Lines, one trajectory per line, versioned by
`schema_version` (agents.trajectory.SCHEMA_VERSION) and described by docs/trajectory.schema.json
(JSON Schema draft 2020-12, made by trajectory_json_schema(); a test keeps the file in step).

A line is a Trajectory's JSON (agents/trajectory.py: spectrum ref, task, agent, steps, outcome) plus
`images`: {sha256 of the PNG: where its bytes are}, a path relative to the JSONL file's folder
(`images/<sha256>.png`, the export's default) or a `data:image/png;base64,...` URL. Every step's
`image_sha` has an entry, and each PNG's sha256 must equal its key: the store keeps images by content.

Reading refuses a line (RowError naming the field) that does not fit the schema, is of a newer
schema version, has a text over agents.trajectory.MAX_STEP_TEXT_BYTES or an image it cannot read;
writing and reading again gives the same trajectory, step for step, image for image.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.interop.images import data_url, read_image
from agents.interop.jsonrows import jsonl_rows
from agents.interop.rowcheck import RowError, check_text_sizes, kind_of, need_type
from agents.trajectory import SCHEMA_VERSION, Trajectory, image_sha

IMAGES_DIR = "images"
SCHEMA_FILE = "trajectory.schema.json"  # under docs/
_SHA_PATTERN = "^[0-9a-f]{64}$"


def trajectory_to_row(traj: Trajectory, inline_images: bool = False) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(row, {relative path: PNG bytes}) for one trajectory: images as files under images/ (or,
    `inline_images`, as data URLs in the row and no files). KeyError names a step's image that is
    not in `traj.images` (load the trajectory with its images)."""
    row = json.loads(traj.model_dump_json())
    images, files = {}, {}
    for step in traj.steps:
        sha = step.image_sha
        if sha is None or sha in images:
            continue
        png = traj.images.get(sha)
        if png is None:
            raise KeyError(f"step {step.index}: image {sha} is not in the trajectory's images")
        if inline_images:
            images[sha] = data_url(png)
        else:
            images[sha] = f"{IMAGES_DIR}/{sha}.png"
            files[images[sha]] = png
    row["images"] = images
    return row, files


def _validation_problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".") or "row"
    return f"{where}: {err['msg']}"


def row_to_trajectory(row: Any, base: Path | None = None) -> Trajectory:
    """The trajectory a row describes, with its images read (paths relative to `base`); RowError
    naming the field for anything that does not fit."""
    if not isinstance(row, dict):
        raise RowError(f"expected a JSON object, got {kind_of(row)}")
    version = row.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or not isinstance(version, int):
        raise RowError(f"schema_version: expected a number, got {kind_of(version)}")
    if version > SCHEMA_VERSION:
        raise RowError(f"schema_version: {version} is newer than this SpecReview reads ({SCHEMA_VERSION})")
    images = need_type(row.get("images") or {}, dict, "images", "an object {sha256: path or data URL}")
    body = {k: v for k, v in row.items() if k != "images"}
    check_text_sizes(body)
    try:
        traj = Trajectory.model_validate(body)
    except ValidationError as exc:
        raise RowError(_validation_problem(exc)) from None
    for sha, ref in images.items():
        where = f"images.{str(sha)[:16]}"
        if base is None and not (isinstance(ref, str) and ref.startswith("data:")):
            raise RowError(f"{where}: a path, but this row has no folder to read it from")
        png = read_image(ref, base or Path("."), where)
        if image_sha(png) != sha:
            raise RowError(f"{where}: the PNG's sha256 is {image_sha(png)[:16]}…, not its key")
        traj.images[sha] = png
    for step in traj.steps:
        if step.image_sha is not None and step.image_sha not in traj.images:
            raise RowError(f"steps[{step.index}].image_sha: {step.image_sha[:16]}… has no entry in 'images'")
    return traj


def read_trajectories(path: Path, on_problem: Callable[[str, str], None] | None = None) -> Iterator[Trajectory]:
    """Trajectories of a .jsonl / .jsonl.gz file, images relative to its folder. A bad line goes to
    `on_problem(where, why)`, or raises RowError when none is given."""
    for where, row, problem in jsonl_rows(path):
        try:
            if problem:
                raise RowError(problem)
            yield row_to_trajectory(row, path.parent)
        except RowError as exc:
            if on_problem is None:
                raise RowError(f"{where}: {exc}") from None
            on_problem(where, str(exc))


def trajectory_json_schema() -> dict[str, Any]:
    """The JSON Schema of one line (docs/trajectory.schema.json)."""
    schema = Trajectory.model_json_schema(mode="serialization")
    schema["properties"]["images"] = {
        "type": "object", "title": "Images",
        "description": "PNG renders the steps show, by sha256 of their bytes: a path relative to the "
                       "JSONL file's folder, or a data:image/png;base64 URL",
        "propertyNames": {"pattern": _SHA_PATTERN},
        "additionalProperties": {"type": "string"},
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"https://specreview.invalid/trajectory/{SCHEMA_VERSION}",
            "title": f"SpecReview trajectory, schema_version {SCHEMA_VERSION}",
            "description": "One line of a SpecReview trajectories JSONL file (agents/interop/trajectory_file.py).",
            **{k: v for k, v in schema.items() if k != "title"}}


if __name__ == "__main__":  # python -m agents.interop.trajectory_file > docs/trajectory.schema.json
    print(json.dumps(trajectory_json_schema(), indent=2, sort_keys=True))
