"""Spectra of one object (tables `object_groups`, `object_match`): the groups the cross-match made
(reviewer/services/same_object.py decides them; this only stores and reads them)."""
from __future__ import annotations

import math
from typing import Any

from reviewer.store.codec import now
from reviewer.store.database import Database

# what the Same-object panel lists of each spectrum (no header: it can be large)
_MEMBER_COLUMNS = ("s.spectrum_id, s.survey, s.object_id, s.target, s.file_name, s.ra, s.dec, s.snr, s.obs_mjd, "
                   "s.pipeline_class, s.pipeline_z, s.source_path, s.file_sha256")
_GROUP_COLUMNS = ("spectrum_id", "group_id", "n_members")


class ObjectRepository:
    def __init__(self, db: Database):
        self.db = db

    def sky_positions(self) -> list[tuple[str, float, float]]:
        """(spectrum_id, ra, dec) of every spectrum with coordinates, in a stable order."""
        return [(r[0], float(r[1]), float(r[2])) for r in self.db.execute(
            "SELECT spectrum_id, ra, dec FROM spectra WHERE ra IS NOT NULL AND dec IS NOT NULL "
            "AND isfinite(ra) AND isfinite(dec) ORDER BY spectrum_id").fetchall()]

    def positions_of(self, spectrum_ids: list[str]) -> list[tuple[str, float, float]]:
        if not spectrum_ids:
            return []
        marks = ", ".join("?" for _ in spectrum_ids)
        return [(r[0], float(r[1]), float(r[2])) for r in self.db.execute(
            f"SELECT spectrum_id, ra, dec FROM spectra WHERE spectrum_id IN ({marks}) AND ra IS NOT NULL "
            "AND dec IS NOT NULL AND isfinite(ra) AND isfinite(dec) ORDER BY spectrum_id", list(spectrum_ids)).fetchall()]

    def positions_near(self, ra: float, dec: float, box_deg: float) -> list[tuple[str, float, float]]:
        """Spectra in a box of half-size `box_deg` in dec around (ra, dec), widened in RA by 1/cos(dec)
        and taken across RA 0/360; near a pole, every RA. A candidate list: the caller measures."""
        lo, hi = dec - box_deg, dec + box_deg
        if abs(dec) + box_deg >= 89.0:
            ra_cond, params = "true", []
        else:
            half = min(180.0, box_deg / math.cos(math.radians(abs(dec) + box_deg)))
            a, b = ra - half, ra + half
            ra_cond = "(ra BETWEEN ? AND ?) OR (ra BETWEEN ? AND ?) OR (ra BETWEEN ? AND ?)"
            params = [a, b, a + 360.0, b + 360.0, a - 360.0, b - 360.0]
        return [(r[0], float(r[1]), float(r[2])) for r in self.db.execute(
            f"SELECT spectrum_id, ra, dec FROM spectra WHERE dec BETWEEN ? AND ? AND ({ra_cond}) "
            "AND isfinite(ra) AND isfinite(dec) ORDER BY spectrum_id", [lo, hi, *params]).fetchall()]

    def group_members(self, spectrum_ids: list[str]) -> set[str]:
        """Every spectrum in the groups of these spectra (these included)."""
        if not spectrum_ids:
            return set()
        marks = ", ".join("?" for _ in spectrum_ids)
        rows = self.db.execute(f"SELECT spectrum_id FROM object_groups WHERE group_id IN (SELECT group_id FROM "
                               f"object_groups WHERE spectrum_id IN ({marks}))", list(spectrum_ids)).fetchall()
        return {r[0] for r in rows} | set(spectrum_ids)

    def merge_group(self, members: list[str]) -> None:
        """Make these spectra one group (each was in none, or in a group all of whose members are here)."""
        members = sorted(set(members))
        with self.db.transaction():
            # the ids bound as one list: a group of a position visited 15,000 times is one parameter, not 15,000
            self.db.execute("DELETE FROM object_groups WHERE spectrum_id IN (SELECT unnest(?::VARCHAR[]))", [members])
            self.db.insert_rows("object_groups", _GROUP_COLUMNS, [(sid, members[0], len(members)) for sid in members])

    def record_match(self, radius_arcsec: float, n_spectra: int) -> None:
        with self.db.transaction() as cur:
            cur.execute("DELETE FROM object_match")
            cur.execute("INSERT INTO object_match (radius_arcsec, n_spectra, matched_at) VALUES (?, ?, ?)",
                        [float(radius_arcsec), int(n_spectra), now()])

    def count_positioned(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM spectra WHERE ra IS NOT NULL AND dec IS NOT NULL "
                                  "AND isfinite(ra) AND isfinite(dec)"))

    def replace_groups(self, groups: list[list[str]], radius_arcsec: float, n_spectra: int) -> None:
        """Store a cross-match's groups (each of two or more spectrum ids) in place of the last one's."""
        rows = []
        for members in groups:
            group_id = min(members)
            rows += [(sid, group_id, len(members)) for sid in members]
        with self.db.transaction() as cur:
            cur.execute("DELETE FROM object_groups")
            self.db.insert_rows("object_groups", _GROUP_COLUMNS, rows)  # one statement: 200k rows in ~0.1 s
            self.record_match(radius_arcsec, n_spectra)  # joins this transaction

    def count_groups(self) -> int:
        """Objects with several spectra."""
        return int(self.db.scalar("SELECT count(DISTINCT group_id) FROM object_groups"))

    def last_match(self) -> dict[str, Any] | None:
        """The radius and spectrum count of the last cross-match (None: never matched)."""
        return self.db.row("SELECT radius_arcsec, n_spectra, matched_at FROM object_match")

    def members(self, spectrum_id: str) -> list[dict[str, Any]]:
        """Every spectrum of the object `spectrum_id` belongs to (itself included), by date; [] when the
        cross-match found no other spectrum of it."""
        return self.db.rows(
            f"SELECT {_MEMBER_COLUMNS} FROM object_groups g JOIN spectra s USING (spectrum_id) "
            "WHERE g.group_id = (SELECT group_id FROM object_groups WHERE spectrum_id = ?) "
            "ORDER BY s.obs_mjd NULLS LAST, s.spectrum_id", [spectrum_id])

    def same_object(self, a: str, b: str) -> bool:
        return a == b or bool(self.db.scalar(
            "SELECT count(*) FROM object_groups x JOIN object_groups y USING (group_id) "
            "WHERE x.spectrum_id = ? AND y.spectrum_id = ?", [a, b]))

    def answers(self, spectrum_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The agents' answers on each of these spectra: {spectrum_id: [{id, task, agent_name, answer}]}."""
        if not spectrum_ids:
            return {}
        marks = ", ".join("?" for _ in spectrum_ids)
        out: dict[str, list[dict[str, Any]]] = {sid: [] for sid in spectrum_ids}
        for row in self.db.rows(
                "SELECT id, spectrum_id, task, agent_name, backend, model, answer, answer_z, created_at FROM trajectories "
                f"WHERE spectrum_id IN ({marks}) ORDER BY created_at, id", list(spectrum_ids)):
            out[row["spectrum_id"]].append(row)
        return out
