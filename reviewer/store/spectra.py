"""Spectra (table `spectra`): one row per spectrum of an ingested file, found by id, content and filters."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.store.codec import now, to_json
from reviewer.store.database import Database

SPECTRUM_COLUMNS = (
    "spectrum_id", "source_path", "file_name", "target", "survey", "object_id", "ra", "dec",
    "pipeline_class", "pipeline_subclass", "pipeline_z", "snr", "n_pix", "wave_min", "wave_max",
    "format", "wavelength_medium", "file_sha256", "header", "ingested_at", "obs_mjd", "survey_ids",
)
# What a spectrum list shows: everything but the (large) header.
_LIST_COLUMNS = ", ".join(c for c in SPECTRUM_COLUMNS if c != "header")


def _spectrum_row(record: dict[str, Any]) -> list[Any]:
    """A record's `spectra` row in SPECTRUM_COLUMNS order; ValueError names what is missing or unknown."""
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
    values["survey_ids"] = to_json(values.get("survey_ids"))
    for key in ("object_id", "target"):
        if values.get(key) is not None:
            values[key] = str(values[key])
    return [values.get(c) for c in SPECTRUM_COLUMNS]


class SpectrumRepository:
    def __init__(self, db: Database):
        self.db = db

    def add_spectrum(self, record: dict[str, Any]) -> str:
        """Register a spectrum (keys: SPECTRUM_COLUMNS; spectrum_id, source_path and file_sha256
        required). A spectrum_id already present is left as it is. Returns the spectrum_id."""
        return self.add_spectra([record])[0]

    def add_spectra(self, records: list[dict[str, Any]]) -> list[str]:
        """`add_spectrum` of many records in one statement (an ingest's group of files)."""
        rows = [_spectrum_row(record) for record in records]
        self.db.insert_rows("spectra", SPECTRUM_COLUMNS, rows, ignore_duplicates=True)
        return [row[0] for row in rows]

    def get_spectrum(self, spectrum_id: str) -> dict[str, Any] | None:
        return self.db.row("SELECT * FROM spectra WHERE spectrum_id = ?", [spectrum_id])

    def get_spectra(self, spectrum_ids) -> dict[str, dict[str, Any]]:
        """`get_spectrum` of many ids in one query: id -> row, the ids not stored left out."""
        ids = [str(i) for i in dict.fromkeys(spectrum_ids)]
        if not ids:
            return {}
        rows = self.db.rows("SELECT * FROM spectra WHERE spectrum_id IN (SELECT unnest(?::VARCHAR[]))", [ids])
        return {r["spectrum_id"]: r for r in rows}

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
        return self.db.rows(sql, params)

    def count_spectra(self, search: str | None = None, survey: str | None = None, klass: str | None = None) -> int:
        where, params = self._spectrum_where(search, survey, klass)
        return int(self.db.scalar(f"SELECT count(*) FROM spectra {where}", params))

    def spectrum_facets(self) -> dict[str, list[str]]:
        """Distinct surveys and pipeline classes, for filter menus."""
        return {
            "survey": [r[0] for r in self.db.execute(
                "SELECT DISTINCT survey FROM spectra WHERE survey IS NOT NULL ORDER BY 1").fetchall()],
            "pipeline_class": [r[0] for r in self.db.execute(
                "SELECT DISTINCT pipeline_class FROM spectra WHERE pipeline_class IS NOT NULL ORDER BY 1").fetchall()],
        }

    def spectra_named(self, file_names: list[str]) -> list[dict[str, Any]]:
        """spectrum_id, file_name, target and source_path of the spectra with these file names."""
        names = [str(n) for n in dict.fromkeys(file_names)]
        if not names:
            return []
        return self.db.rows("SELECT spectrum_id, file_name, target, source_path FROM spectra "
                            "WHERE file_name IN (SELECT unnest(?::VARCHAR[])) ORDER BY spectrum_id", [names])

    def has_spectrum_file(self, file_sha256: str, target: str | None = None) -> bool:
        """Whether the spectrum `target` (None: the only one) of the file with this content is registered."""
        target = None if target is None else str(target)
        return self.db.scalar(
            "SELECT count(*) FROM spectra WHERE file_sha256 = ? AND target IS NOT DISTINCT FROM ?",
            [file_sha256, target],
        ) > 0

    def targets_for_file(self, file_sha256: str) -> set[str | None]:
        rows = self.db.execute("SELECT target FROM spectra WHERE file_sha256 = ?", [file_sha256]).fetchall()
        return {r[0] for r in rows}

    def targets_for_files(self, file_sha256s: list[str]) -> dict[str, set[str | None]]:
        """`targets_for_file` of many contents in one query (contents with no spectrum left out)."""
        out: dict[str, set[str | None]] = {}
        for sha, target in self.db.execute(
                "SELECT file_sha256, target FROM spectra WHERE file_sha256 IN (SELECT unnest(?::VARCHAR[]))",
                [list(dict.fromkeys(file_sha256s))]).fetchall():
            out.setdefault(sha, set()).add(target)
        return out

    # -- file stamps (table file_stamps): a known file passed on a stat ---------------------------
    def file_stamps(self, paths: list[str]) -> dict[str, tuple[tuple[int, int, int, int, int], str]]:
        """{path: ((dev, ino, size, mtime_ns, ctime_ns), content sha256)} as stored for these paths."""
        rows = self.db.execute(
            "SELECT path, dev, ino, size, mtime_ns, ctime_ns, file_sha256 FROM file_stamps "
            "WHERE path IN (SELECT unnest(?::VARCHAR[]))", [list(paths)]).fetchall()
        return {r[0]: (tuple(r[1:6]), r[6]) for r in rows}

    def put_file_stamps(self, stamps: list[tuple[str, tuple[int, int, int, int, int], str]]) -> None:
        """Store (path, stat stamp, content sha256) rows, replacing a path's earlier row; one statement."""
        if not stamps:
            return
        columns = list(zip(*[(path, *stamp, sha) for path, stamp, sha in stamps], strict=True))
        self.db.execute(
            "INSERT OR REPLACE INTO file_stamps SELECT unnest(?::VARCHAR[]), unnest(?::UBIGINT[]), "
            "unnest(?::UBIGINT[]), unnest(?::BIGINT[]), unnest(?::BIGINT[]), unnest(?::BIGINT[]), "
            "unnest(?::VARCHAR[])", [list(c) for c in columns])
