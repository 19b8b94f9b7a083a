"""Agents' trajectories (tables `trajectories`, `steps`) and the images their steps show (`images`, stored
once by content). The schema's `tasks` table (v1) is kept for old files but nothing writes it: kb/
is where task definitions live, and each trajectory records its task id."""
from __future__ import annotations

from typing import Any

from agents.trajectory import AgentInfo, Step, Trajectory, Verdict, finite_or_none, image_sha
from reviewer.store.codec import now, png_size, to_json
from reviewer.store.database import Database, forget_signals

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


class ImageRepository:
    def __init__(self, db: Database):
        self.db = db

    def put_image(self, png: bytes) -> str:
        """Store PNG bytes once, by content; returns the sha256."""
        sha = image_sha(png)
        width, height = png_size(png)
        self.db.execute(
            "INSERT INTO images (sha256, png, width, height, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [sha, png, width, height, now()],
        )
        return sha

    def get_image(self, sha: str) -> bytes | None:
        return self.db.scalar("SELECT png FROM images WHERE sha256 = ?", [sha])

    def has_image(self, sha: str) -> bool:
        return self.db.scalar("SELECT count(*) FROM images WHERE sha256 = ?", [sha]) > 0


class TrajectoryRepository:
    """Trajectories with their steps, and the task definitions. Images go through `images`: a
    trajectory is saved with its images and can be loaded with them."""

    def __init__(self, db: Database, images: ImageRepository):
        self.db = db
        self._images = images

    def save_trajectory(self, traj: Trajectory) -> str:
        """Write a trajectory, its steps and its images in one transaction. Saving the same id again
        replaces the earlier copy (agents own trajectories; human edits go to `revisions`)."""
        # its spectrum's stored triage signals (siblings compare answers with it) are recomputed on the next read
        forget_signals(self.db, "trajectory_id = ? OR spectrum_id IS NOT DISTINCT FROM ?", [traj.id, traj.spectrum_id])
        self.save_trajectories([traj])
        return traj.id

    def save_trajectories(self, trajs: list[Trajectory]) -> list[str]:
        """`save_trajectory` for many trajectories, in one transaction of a few statements (not a
        handful per trajectory): a batch run's group of finished trajectories. Their stored triage
        signals are not dropped here (a caller's transaction skips that: reviewer/store/triage.py
        rechecks recent writes)."""
        trajs = list({traj.id: traj for traj in trajs}.values())  # an id given twice: its last copy
        rows, steps, images = [], [], {}
        for traj in trajs:
            row = _trajectory_row(traj)
            rows.append([row[c] for c in _TRAJECTORY_COLUMNS])
            steps += _step_rows(traj)
            images.update(traj.images)
        ids = [traj.id for traj in trajs]
        if not ids:
            return ids
        with self.db.transaction():
            for png in images.values():
                self._images.put_image(png)
            self.db.execute("DELETE FROM steps WHERE trajectory_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
            self.db.execute("DELETE FROM trajectories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids])
            self.db.insert_rows("trajectories", _TRAJECTORY_COLUMNS, rows, ignore_duplicates=True)
            self.db.insert_rows("steps", _STEP_COLUMNS, steps)
        return ids

    def load_trajectory(self, trajectory_id: str, with_images: bool = False) -> Trajectory | None:
        """The stored trajectory (None when absent); `with_images` also fills `traj.images`."""
        row = self.db.row("SELECT * FROM trajectories WHERE id = ?", [trajectory_id])
        if row is None:
            return None
        step_rows = self.db.rows("SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx", [trajectory_id])
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
                png = self._images.get_image(sha)
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
        return self.db.rows(sql, params)

    def trajectories_on_spectrum(self, spectrum_id: str) -> list[dict[str, Any]]:
        """The agents' trajectories on one spectrum, as short rows (no outcome, no steps)."""
        return self.db.rows("SELECT id, task, agent_name, backend, model, answer, created_at FROM trajectories "
                            "WHERE spectrum_id = ? ORDER BY created_at, id", [spectrum_id])

    def count_trajectories(self, **filters: Any) -> int:
        where, params = self._trajectory_where(filters)
        return int(self.db.scalar(f"SELECT count(*) FROM trajectories t {where}", params))

    def spectra_with_trajectory(self, spectrum_ids, task: str, backend: str, model: str | None = None) -> set[str]:
        """The spectra among `spectrum_ids` that have a trajectory for this task, backend and model
        (`find_trajectory` of many spectra in one query)."""
        ids = [str(i) for i in dict.fromkeys(spectrum_ids)]
        if not ids:
            return set()
        rows = self.db.execute(
            "SELECT DISTINCT spectrum_id FROM trajectories WHERE spectrum_id IN (SELECT unnest(?::VARCHAR[])) "
            "AND task = ? AND backend = ? AND model IS NOT DISTINCT FROM ?", [ids, task, backend, model]).fetchall()
        return {r[0] for r in rows}

    def find_trajectory(self, spectrum_id: str, task: str, backend: str, model: str | None = None) -> str | None:
        """Id of the newest trajectory for this spectrum, task, backend and model (None: not done yet)."""
        return self.db.scalar(
            "SELECT id FROM trajectories WHERE spectrum_id = ? AND task = ? AND backend = ? "
            "AND model IS NOT DISTINCT FROM ? ORDER BY created_at DESC LIMIT 1",
            [spectrum_id, task, backend, model],
        )

    def unlinked_with_file(self) -> list[dict[str, Any]]:
        """Trajectories stored without a spectrum that name a file (imported before their spectrum was
        ingested): id, source_path, target."""
        return self.db.rows("SELECT id, source_path, target FROM trajectories "
                            "WHERE spectrum_id IS NULL AND source_path IS NOT NULL ORDER BY id")

    def link_spectra(self, links: list[tuple[str, str, str]]) -> int:
        """Link trajectories stored without a spectrum to one: (trajectory id, spectrum id, its source
        path), each only while still unlinked; how many were linked."""
        if not links:
            return 0
        ids = [tid for tid, _, _ in links]
        forget_signals(self.db, "trajectory_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
        done = self.db.execute(
            "UPDATE trajectories SET spectrum_id = l.sid, source_path = l.path FROM (SELECT unnest(?::VARCHAR[]) AS tid, "
            "unnest(?::VARCHAR[]) AS sid, unnest(?::VARCHAR[]) AS path) AS l "
            "WHERE trajectories.id = l.tid AND trajectories.spectrum_id IS NULL RETURNING trajectories.id",
            [ids, [sid for _, sid, _ in links], [path for _, _, path in links]]).fetchall()
        return len(done)

    def trajectory_summary(self, trajectory_id: str) -> dict[str, Any] | None:
        """A trajectory's summary row (no steps): task, agent, answer, answer_z, credibility, outcome, ..."""
        return self.db.row(f"SELECT {', '.join(_TRAJECTORY_COLUMNS)} FROM trajectories WHERE id = ?", [trajectory_id])

    def credibility_of(self, trajectory_ids) -> dict[str, str | None]:
        """The stored credibility (the FORMA verdict's tier, or None) of each of `trajectory_ids` that exists."""
        ids = [str(i) for i in trajectory_ids]
        if not ids:
            return {}
        rows = self.db.rows("SELECT id, credibility FROM trajectories WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids])
        return {r["id"]: r["credibility"] for r in rows}


def _trajectory_row(traj: Trajectory) -> dict[str, Any]:
    """The `trajectories` row of a trajectory (its summary columns, saved now)."""
    return {
        "id": traj.id, "spectrum_id": traj.spectrum_id, "source_path": traj.source_path,
        "target": None if traj.target is None else str(traj.target), "task": traj.task,
        "agent_name": traj.agent.name, "backend": traj.agent.backend, "model": traj.agent.model,
        "agent_version": traj.agent.version, **_outcome_summary(traj),
        "n_steps": len(traj.steps), "n_tool_calls": sum(s.kind == "tool_call" for s in traj.steps),
        "outcome": to_json(traj.outcome), "schema_version": traj.schema_version,
        "created_at": traj.created_at, "saved_at": now(),
    }


def _step_rows(traj: Trajectory) -> list[list[Any]]:
    """The `steps` rows of a trajectory, in _STEP_COLUMNS order."""
    return [
        [traj.id, s.index, s.kind, s.text, s.tool_name, to_json(s.tool_args), s.label, s.image_sha,
         s.is_error, to_json(s.verdict.model_dump() if s.verdict else None), to_json(s.answer),
         to_json(s.data), s.created_at]
        for s in traj.steps
    ]


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
        "answer_z": finite_or_none(z),
        "credibility": None if cred is None else str(cred),
    }
