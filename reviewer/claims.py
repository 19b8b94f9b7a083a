"""Claim checking for stored trajectories: run agents.claims on a trajectory and its spectrum, keep
the results in the store (table claim_results), and give them back as ClaimResults or as the
`claims` field of exported rows. No Panel; the SQL is the store's.

    results = check_and_store(store, trajectory, spectrum)   # list[ClaimResult], stored
    rows = store.claims_for(trajectory.id)                    # the stored rows
    results_from_rows(rows)                                   # the ClaimResults again

The batch commands (vet, verify, claims) check in the process that writes the database, with a
`ClaimChecker` that reads each spectrum once.
"""
from __future__ import annotations

from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

from agents.claims import CHECKER_VERSION, ClaimResult, Measurer, check_trajectory, summarize, summary_text

__all__ = ["CHECKER_VERSION", "ClaimChecker", "check_and_store", "claim_rows", "counts_text", "export_claims",
           "results_from_rows", "summarize", "summary_text"]


def claim_rows(results: list[ClaimResult]) -> list[dict[str, Any]]:
    """Store rows (reviewer.store.claims CLAIM_ROW_FIELDS) for a trajectory's results; claims are
    numbered within their step in the order the checker gave them."""
    rows, per_step = [], Counter()
    for res in results:
        step = -1 if res.step_index is None else int(res.step_index)
        claim = res.claim
        window = res.window or [None, None]
        rows.append({
            "step_idx": step, "claim_idx": per_step[step], "kind": claim.kind, "span_start": claim.start,
            "span_end": claim.end, "claim_text": claim.text, "verdict": res.verdict, "claimed": claim.value,
            "measured": res.measured, "tolerance": res.tolerance, "unit": claim.unit,
            "window_lo": window[0], "window_hi": window[1], "reason": res.reason, "result": res.to_dict(),
        })
        per_step[step] += 1
    return rows


def results_from_rows(rows: list[dict[str, Any]]) -> list[ClaimResult]:
    """The ClaimResults of stored rows (store.claims_for), in step and claim order."""
    out = []
    for row in rows:
        res = ClaimResult.from_dict(row["result"])
        res.step_index = row["step_idx"]
        out.append(res)
    return out


# what an exported row's `claims` field holds per claim (flat, so Parquet writes it as one struct type)
EXPORT_FIELDS = ("step_idx", "claim_idx", "kind", "span_start", "span_end", "claim_text", "verdict", "claimed",
                 "measured", "tolerance", "unit", "window_lo", "window_hi", "reason", "checker_version")


def export_claims(rows: list[dict[str, Any]], version: str | None = None) -> list[dict[str, Any]]:
    """The `claims` field of an exported SFT / bench row: one flat dict per claim (EXPORT_FIELDS),
    from store rows or from claim_rows(...) of a fresh check (`version` fills checker_version)."""
    out = []
    for row in rows:
        item = {k: row.get(k) for k in EXPORT_FIELDS}
        item["checker_version"] = row.get("checker_version") or version or CHECKER_VERSION
        for key in ("claimed", "measured", "tolerance", "window_lo", "window_hi"):
            item[key] = None if item[key] is None else float(item[key])
        out.append(item)
    return out


def counts_text(counts: dict[str, int] | None) -> str:
    """"7 supported, 1 contradicted, 2 unverifiable" from a verdict count dict (store.claim_counts)."""
    counts = counts or {}
    return ", ".join(f"{int(counts.get(v, 0))} {v}" for v in ("supported", "contradicted", "unverifiable"))


def check_and_store(store, trajectory, spectrum, *, measurer: Measurer | None = None,
                    version: str = CHECKER_VERSION) -> list[ClaimResult]:
    """Check every claim of a stored trajectory against its spectrum and replace its stored results
    for this checker version (one transaction). Returns the results."""
    results = check_trajectory(trajectory, spectrum, measurer=measurer)
    store.save_claims(trajectory.id, version, claim_rows(results))
    return results


class ClaimChecker:
    """Checks trajectories in the writing process of a batch run, reading each spectrum (and making
    its Measurer) once for all the trajectories on it (a few recent spectra are kept: a batch
    delivers one spectrum's tasks close together)."""

    def __init__(self, store=None, cache_size: int = 8, version: str = CHECKER_VERSION):
        self.store, self.version, self.cache_size = store, version, cache_size
        self._cache: OrderedDict = OrderedDict()
        self.totals: Counter = Counter()  # verdict -> claims checked by this checker
        self.with_contradicted = 0  # trajectories with at least one contradicted claim

    def _location(self, trajectory) -> tuple[str | None, str | None]:
        if self.store is not None and trajectory.spectrum_id:
            rec = self.store.get_spectrum(trajectory.spectrum_id)
            if rec is not None:
                return rec["source_path"], rec["target"]
        return trajectory.source_path, None if trajectory.target is None else str(trajectory.target)

    def spectrum(self, trajectory):
        """(spectrum, measurer) of a trajectory: from its stored spectrum record, else its own source path."""
        from agents.spectra import read_spectrum

        path, target = self._location(trajectory)
        if not path or not Path(path).exists():
            raise FileNotFoundError(f"spectrum file unavailable: {path}")
        key = (path, target)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        spectrum = read_spectrum(path, target=target)
        value = (spectrum, Measurer.from_spectrum(spectrum))
        self._cache[key] = value
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return value

    def check(self, trajectory) -> list[ClaimResult]:
        """The trajectory's claim results (raises when its spectrum cannot be read)."""
        spectrum, measurer = self.spectrum(trajectory)
        results = check_trajectory(trajectory, spectrum, measurer=measurer)
        counts = summarize(results)
        self.totals.update(counts)
        self.with_contradicted += bool(counts["contradicted"])
        return results

    def rows(self, trajectory) -> list[dict[str, Any]]:
        return claim_rows(self.check(trajectory))

    def check_and_store(self, trajectory) -> list[ClaimResult]:
        results = self.check(trajectory)
        self.store.save_claims(trajectory.id, self.version, claim_rows(results))
        return results

    def totals_text(self) -> str:
        return counts_text(self.totals)
