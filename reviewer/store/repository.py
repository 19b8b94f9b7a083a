"""`Store`: the only SQL in the house.

Spectra, trajectories (with their steps and images) live here; the human labels and the audit
sessions are in `labels.py` / `sessions.py`, the claim checker's results in `claims.py`, the triage
inputs, weights and cached priorities in `triage.py`, mixed into the same class.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.trajectory import AgentInfo, Step, Trajectory, Verdict, image_sha
from reviewer.store.base import StoreBase
from reviewer.store.claims import ClaimsMixin
from reviewer.store.codec import now, png_size, to_json
from reviewer.store.labels import LabelsMixin
from reviewer.store.queue import QueueMixin
from reviewer.store.review_queries import ReviewQueriesMixin
from reviewer.store.sessions import SessionsMixin
from reviewer.store.triage import TriageMixin
from reviewer.store.verdict_state import VerdictStateMixin

SPECTRUM_COLUMNS = (
    "spectrum_id", "source_path", "file_name", "target", "survey", "object_id", "ra", "dec",
    "pipeline_class", "pipeline_subclass", "pipeline_z", "snr", "n_pix", "wave_min", "wave_max",
    "format", "wavelength_medium", "file_sha256", "header", "ingested_at",
)
# What a spectrum list shows: everything but the (large) header.
_LIST_COLUMNS = ", ".join(c for c in SPECTRUM_COLUMNS if c != "header")

_STEP_COLUMNS = (
    "trajectory_id", "idx", "kind", "text", "tool_name", "tool_args", "label", "image_sha",
    "is_error", "verdict", "answer", "data", "created_at",
)
_TRAJECTORY_COLUMNS = (
    "id", "spectrum_id", "source_path", "target", "task", "agent_name", "backend", "model",
    "agent_version", "answer", "answer_z", "credibility", "n_steps", "n_tool_calls", "outcome",
    "schema_version", "created_at", "saved_at",
)
_TRAJECTORY_FILTERS = ("spectrum_id", "task", "agent_name", "backend", "model", "answer", "credibility")


def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING"


class Store(LabelsMixin, SessionsMixin, QueueMixin, ReviewQueriesMixin, VerdictStateMixin, ClaimsMixin, TriageMixin,
            StoreBase):
    """Everything SpecReview keeps, in one DuckDB file. Thread-safe; one per process per file is enough
    (two `Store(path)` in one process share the connection)."""

    # -- spectra -----------------------------------------------------------------------------
    def add_spectrum(self, record: dict[str, Any]) -> str:
        """Register a spectrum (keys: SPECTRUM_COLUMNS; spectrum_id, source_path and file_sha256
        required). A spectrum_id already present is left as it is. Returns the spectrum_id."""
        missing = [k for k in ("spectrum_id", "source_path", "file_sha256") if not record.get(k)]
        if missing:
            raise ValueError(f"spectrum record lacks {', '.join(missing)}")
        unknown = set(record) - set(SPECTRUM_COLUMNS)
        if unknown:
            raise ValueError(f"unknown spectrum fields: {', '.join(sorted(unknown))}")
        values = dict(record)
        values.setdefault("file_name", Path(values["source_path"]).name)
        values["ingested_at"] = values.get("ingested_at") or now()
        values["header"] = to_json(values.get("header"))
        for key in ("object_id", "target"):
            if values.get(key) is not None:
                values[key] = str(values[key])
        self._execute(_insert_sql("spectra", SPECTRUM_COLUMNS), [values.get(c) for c in SPECTRUM_COLUMNS])
        return values["spectrum_id"]

    def trajectory_summary(self, trajectory_id: str) -> dict[str, Any] | None:
        """A trajectory's summary row (no steps): task, agent, answer, answer_z, credibility, outcome, ..."""
        return self._row(f"SELECT {', '.join(_TRAJECTORY_COLUMNS)} FROM trajectories WHERE id = ?", [trajectory_id])

    def get_spectrum(self, spectrum_id: str) -> dict[str, Any] | None:
        return self._row("SELECT * FROM spectra WHERE spectrum_id = ?", [spectrum_id])

    def _spectrum_where(self, search: str | None, survey: str | None, klass: str | None) -> tuple[str, list]:
        conds, params = [], []
        if search:
            # contains() rather than LIKE: the user's % and _ are plain characters.
            fields = ("object_id", "survey", "pipeline_class", "pipeline_subclass", "file_name", "spectrum_id", "target")
            conds.append("(" + " OR ".join(f"contains(lower({f}), ?)" for f in fields) + ")")
            params += [search.strip().lower()] * len(fields)
        if survey:
            conds.append("lower(survey) = lower(?)")
            params.append(survey)
        if klass:
            conds.append("lower(pipeline_class) = lower(?)")
            params.append(klass)
        return ("WHERE " + " AND ".join(conds)) if conds else "", params

    def list_spectra(
        self, search: str | None = None, survey: str | None = None, klass: str | None = None,
        limit: int | None = 100, offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Spectra (without headers) ordered by file and target. `search` matches object id, survey,
        class, file name, spectrum id or target, case-insensitively; `survey`/`klass` are exact."""
        where, params = self._spectrum_where(search, survey, klass)
        sql = f"SELECT {_LIST_COLUMNS} FROM spectra {where} ORDER BY source_path, target NULLS FIRST, spectrum_id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        return self._rows(sql, params)

    def count_spectra(self, search: str | None = None, survey: str | None = None, klass: str | None = None) -> int:
        where, params = self._spectrum_where(search, survey, klass)
        return int(self._scalar(f"SELECT count(*) FROM spectra {where}", params))

    def spectrum_facets(self) -> dict[str, list[str]]:
        """Distinct surveys and pipeline classes, for filter menus."""
        return {
            "survey": [r[0] for r in self._execute(
                "SELECT DISTINCT survey FROM spectra WHERE survey IS NOT NULL ORDER BY 1").fetchall()],
            "pipeline_class": [r[0] for r in self._execute(
                "SELECT DISTINCT pipeline_class FROM spectra WHERE pipeline_class IS NOT NULL ORDER BY 1").fetchall()],
        }

    def has_spectrum_file(self, file_sha256: str, target: str | None = None) -> bool:
        """Whether the spectrum `target` (None: the only one) of the file with this content is registered."""
        target = None if target is None else str(target)
        return self._scalar(
            "SELECT count(*) FROM spectra WHERE file_sha256 = ? AND target IS NOT DISTINCT FROM ?",
            [file_sha256, target],
        ) > 0

    def targets_for_file(self, file_sha256: str) -> set[str | None]:
        rows = self._execute("SELECT target FROM spectra WHERE file_sha256 = ?", [file_sha256]).fetchall()
        return {r[0] for r in rows}

    # -- images ------------------------------------------------------------------------------
    def put_image(self, png: bytes) -> str:
        """Store PNG bytes once, by content; returns the sha256."""
        sha = image_sha(png)
        width, height = png_size(png)
        self._execute(
            "INSERT INTO images (sha256, png, width, height, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [sha, png, width, height, now()],
        )
        return sha

    def get_image(self, sha: str) -> bytes | None:
        return self._scalar("SELECT png FROM images WHERE sha256 = ?", [sha])

    def has_image(self, sha: str) -> bool:
        return self._scalar("SELECT count(*) FROM images WHERE sha256 = ?", [sha]) > 0

    # -- trajectories ------------------------------------------------------------------------
    def save_trajectory(self, traj: Trajectory) -> str:
        """Write a trajectory, its steps and its images in one transaction. Saving the same id again
        replaces the earlier copy (agents own trajectories; human edits go to `revisions`)."""
        summary = _outcome_summary(traj)
        row = {
            "id": traj.id, "spectrum_id": traj.spectrum_id, "source_path": traj.source_path,
            "target": None if traj.target is None else str(traj.target), "task": traj.task,
            "agent_name": traj.agent.name, "backend": traj.agent.backend, "model": traj.agent.model,
            "agent_version": traj.agent.version, **summary,
            "n_steps": len(traj.steps), "n_tool_calls": sum(s.kind == "tool_call" for s in traj.steps),
            "outcome": to_json(traj.outcome), "schema_version": traj.schema_version,
            "created_at": traj.created_at, "saved_at": now(),
        }
        steps = [
            [traj.id, s.index, s.kind, s.text, s.tool_name, to_json(s.tool_args), s.label, s.image_sha,
             s.is_error, to_json(s.verdict.model_dump() if s.verdict else None), to_json(s.answer),
             to_json(s.data), s.created_at]
            for s in traj.steps
        ]
        with self.transaction():
            for png in traj.images.values():
                self.put_image(png)
            self._execute("DELETE FROM steps WHERE trajectory_id = ?", [traj.id])
            self._execute("DELETE FROM trajectories WHERE id = ?", [traj.id])
            self._execute(_insert_sql("trajectories", _TRAJECTORY_COLUMNS), [row[c] for c in _TRAJECTORY_COLUMNS])
            self._insert_rows("steps", _STEP_COLUMNS, steps)
        return traj.id

    def load_trajectory(self, trajectory_id: str, with_images: bool = False) -> Trajectory | None:
        """The stored trajectory (None when absent); `with_images` also fills `traj.images`."""
        row = self._row("SELECT * FROM trajectories WHERE id = ?", [trajectory_id])
        if row is None:
            return None
        step_rows = self._rows("SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx", [trajectory_id])
        steps = [
            Step(
                index=s["idx"], kind=s["kind"], text=s["text"], tool_name=s["tool_name"],
                tool_args=s["tool_args"], label=s["label"], image_sha=s["image_sha"], is_error=s["is_error"],
                verdict=Verdict.model_validate(s["verdict"]) if s["verdict"] is not None else None,
                answer=s["answer"], data=s["data"] if s["data"] is not None else {}, created_at=s["created_at"],
            )
            for s in step_rows
        ]
        traj = Trajectory(
            id=row["id"], spectrum_id=row["spectrum_id"], source_path=row["source_path"], target=row["target"],
            task=row["task"],
            agent=AgentInfo(name=row["agent_name"], backend=row["backend"], model=row["model"],
                            version=row["agent_version"]),
            steps=steps, outcome=row["outcome"] or {}, schema_version=row["schema_version"],
            created_at=row["created_at"],
        )
        if with_images:
            for sha in {s.image_sha for s in steps if s.image_sha}:
                png = self.get_image(sha)
                if png is not None:
                    traj.images[sha] = png
        return traj

    def _trajectory_where(self, filters: dict[str, Any]) -> tuple[str, list]:
        unknown = set(filters) - set(_TRAJECTORY_FILTERS)
        if unknown:
            raise ValueError(f"unknown trajectory filters: {', '.join(sorted(unknown))}")
        conds, params = [], []
        for key, value in filters.items():
            if value is not None:
                conds.append(f"t.{key} = ?")
                params.append(value)
        return ("WHERE " + " AND ".join(conds)) if conds else "", params

    def list_trajectories(self, limit: int | None = None, offset: int = 0, **filters: Any) -> list[dict[str, Any]]:
        """Trajectory summaries (no steps), newest first, with the spectrum's survey/object/class.
        Filters (equality; None = any): spectrum_id, task, agent_name, backend, model, answer, credibility."""
        where, params = self._trajectory_where(filters)
        sql = (
            "SELECT t.*, s.survey, s.object_id, s.pipeline_class, s.pipeline_z FROM trajectories t "
            f"LEFT JOIN spectra s USING (spectrum_id) {where} ORDER BY t.created_at DESC, t.id"
        )
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        return self._rows(sql, params)

    def trajectories_on_spectrum(self, spectrum_id: str) -> list[dict[str, Any]]:
        """The agents' trajectories on one spectrum, as short rows (no outcome, no steps)."""
        return self._rows("SELECT id, task, agent_name, backend, model, answer, created_at FROM trajectories "
                          "WHERE spectrum_id = ? ORDER BY created_at, id", [spectrum_id])

    def count_trajectories(self, **filters: Any) -> int:
        where, params = self._trajectory_where(filters)
        return int(self._scalar(f"SELECT count(*) FROM trajectories t {where}", params))

    def find_trajectory(self, spectrum_id: str, task: str, backend: str, model: str | None = None) -> str | None:
        """Id of the newest trajectory for this spectrum, task, backend and model (None: not done yet)."""
        return self._scalar(
            "SELECT id FROM trajectories WHERE spectrum_id = ? AND task = ? AND backend = ? "
            "AND model IS NOT DISTINCT FROM ? ORDER BY created_at DESC LIMIT 1",
            [spectrum_id, task, backend, model],
        )

    # -- tasks -------------------------------------------------------------------------------
    def put_task(self, task_id: str, title: str | None = None, spec: dict | None = None) -> str:
        """Record a task definition as it was when trajectories were made (kb/ stays the source)."""
        self._execute(
            "INSERT INTO tasks (task_id, title, spec, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [task_id, title, to_json(spec), now()],
        )
        return task_id

    def get_task(self, task_id: str) -> dict[str, Any] | None:
        return self._row("SELECT * FROM tasks WHERE task_id = ?", [task_id])


def _outcome_summary(traj: Trajectory) -> dict[str, Any]:
    """The answer, z and credibility as filterable columns, from `outcome` or else the last answer step."""
    source: dict[str, Any] = dict(traj.outcome)
    if not source:
        answers = [s.answer for s in traj.steps if s.kind == "answer" and s.answer]
        source = dict(answers[-1]) if answers else {}
    answer = next(
        (source[k] for k in ("answer", "label", "type", "spectype", "class") if isinstance(source.get(k), (str, int, float))
         and not isinstance(source.get(k), bool)),
        None,
    )
    z = source.get("z")
    cred = source.get("credibility")
    return {
        "answer": None if answer is None else str(answer),
        "answer_z": float(z) if isinstance(z, (int, float)) and not isinstance(z, bool) else None,
        "credibility": None if cred is None else str(cred),
    }


__all__ = ["SPECTRUM_COLUMNS", "Store"]
