"""Claim checking for stored trajectories: run agents.claims on a trajectory and its spectrum, keep
the results in the store (table claim_results), and give them back as ClaimResults or as the
`claims` field of exported rows. No Panel; the SQL is the store's.

    results = check_and_store(store, trajectory, spectrum)   # list[ClaimResult], stored
    rows = store.claims.claims_for(trajectory.id)             # the stored rows
    results_from_rows(rows)                                   # the ClaimResults again

The batch commands (vet, verify, claims) check in the process that writes the database, with a
`ClaimChecker` that reads each spectrum once. Claims are found by the patterns; with an
`LLMExtractor` (`specreview claims --backend openai`) a chat model also finds the ones the patterns
miss, as structured JSON, and the same deterministic checker judges them all. Those results are stored
under their own checker version (`llm_version`: "claims-2+llm:<model>"), so a patterns-only check and
an LLM-assisted one stay apart; where the model's reply is unusable the trajectory keeps its pattern
claims (stored under the patterns' version) and the problem names it.
"""
from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.claims import CHECKER_VERSION, ClaimResult, Measurer, check_trajectory, summarize, summary_text

__all__ = ["CHECKER_VERSION", "PATTERNS", "PATTERNS_LLM", "CheckedTrajectory", "ClaimChecker", "LLMExtractor",
           "check_and_store", "claim_counts", "claim_rows", "counts_text", "export_claims", "llm_version", "results_from_rows",
           "summarize", "summary_text"]

PATTERNS, PATTERNS_LLM = "patterns", "patterns+llm"  # which extractors found the claims that were judged


def llm_version(model: str, version: str = CHECKER_VERSION) -> str:
    """The checker version of results whose claims a chat model helped find: "claims-2+llm:<model>"."""
    return f"{version}+llm:{model}"


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
    """The ClaimResults of stored rows (store.claims.claims_for), in step and claim order."""
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


def contradicted_claims(store, trajectory_id: str) -> list[dict[str, Any]]:
    """The stored claim results of a trajectory that the checker found contradicted."""
    return [r for r in store.claims.claims_for(trajectory_id) if r["verdict"] == "contradicted"]


def claim_counts(store, trajectory_ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """trajectory id -> its stored claim checks counted by verdict (supported, contradicted, unverifiable),
    from each one's latest checker version, in one query; those with none are absent."""
    return store.claims.claim_counts(trajectory_ids)


def counts_text(counts: dict[str, int] | None) -> str:
    """"7 supported, 1 contradicted, 2 unverifiable" from a verdict count dict (store.claims.claim_counts)."""
    counts = counts or {}
    return ", ".join(f"{int(counts.get(v, 0))} {v}" for v in ("supported", "contradicted", "unverifiable"))


def check_and_store(store, trajectory, spectrum, *, measurer: Measurer | None = None,
                    version: str = CHECKER_VERSION) -> list[ClaimResult]:
    """Check every claim of a stored trajectory against its spectrum and replace its stored results
    for this checker version (one transaction). Returns the results."""
    results = check_trajectory(trajectory, spectrum, measurer=measurer)
    store.claims.save_claims(trajectory.id, version, claim_rows(results))
    return results


class LLMExtractor:
    """A chat model that finds the claims the patterns miss (agents.claims.llm), through any
    OpenAI-compatible endpoint (agents.llm config: base URL, model, key from the environment or the
    config file), with the config's retries. It only extracts; the checker judges."""

    def __init__(self, cfg, chat_model=None):
        from agents.llm import make_chat_model

        self.cfg = cfg
        self.model = cfg.model
        self.chat = chat_model if chat_model is not None else make_chat_model(cfg)

    def _invoke(self, prompt: str):
        from agents.llm import invoke_with_retries

        reply, _ = invoke_with_retries(lambda: self.chat.invoke(prompt), self.cfg)
        return reply

    def extra_claims(self, trajectory) -> dict:
        """{step index: claims the patterns missed}; raises ClaimExtractionError (a reply that is not
        the JSON claims asked for, naming the step) or agents.llm.ModelCallFailed."""
        from agents.claims.llm import trajectory_llm_claims

        return trajectory_llm_claims(self.chat, trajectory, self._invoke)

    def claims_of(self, text: str) -> list:
        """The claims of one text: the patterns', then the model's the patterns missed (what the
        evaluation set is scored with, bench/claims_eval/score.py --extractor llm); raises as
        `extra_claims`."""
        from agents.claims.llm import with_llm_claims

        return with_llm_claims(self.chat, text, self._invoke)


@dataclass
class CheckedTrajectory:
    """One trajectory's check: its results, which extractors found the claims, the checker version
    they are stored under, and why the model's claims are missing when they are (pattern claims kept)."""

    results: list[ClaimResult]
    extractor: str = PATTERNS
    version: str = CHECKER_VERSION
    problem: str | None = None


class ClaimChecker:
    """Checks trajectories in the writing process of a batch run, reading each spectrum (and making
    its Measurer) once for all the trajectories on it (a few recent spectra are kept: a batch
    delivers one spectrum's tasks close together). With an `extractor` (LLMExtractor) the model's
    claims are judged beside the patterns'."""

    def __init__(self, store=None, cache_size: int = 8, version: str = CHECKER_VERSION,
                 extractor: LLMExtractor | None = None):
        self.store, self.base_version, self.cache_size, self.extractor = store, version, cache_size, extractor
        self._cache: OrderedDict = OrderedDict()
        self.totals: Counter = Counter()  # verdict -> claims checked by this checker
        self.with_contradicted = 0  # trajectories with at least one contradicted claim

    @property
    def version(self) -> str:
        """The version this checker's results are stored under (when its extractor, if any, worked)."""
        return self.base_version if self.extractor is None else llm_version(self.extractor.model, self.base_version)

    @property
    def extractor_name(self) -> str:
        return PATTERNS if self.extractor is None else PATTERNS_LLM

    def _location(self, trajectory) -> tuple[str | None, str | None, str | None]:
        """(path, target, the content hash stored at ingest: None when the spectrum is not stored)."""
        if self.store is not None and trajectory.spectrum_id:
            rec = self.store.spectra.get_spectrum(trajectory.spectrum_id)
            if rec is not None:
                return rec["source_path"], rec["target"], rec.get("file_sha256")
        return trajectory.source_path, None if trajectory.target is None else str(trajectory.target), None

    def spectrum(self, trajectory):
        """(spectrum, measurer) of a trajectory: from its stored spectrum record, else from its own
        source path."""
        from agents.spectra import read_spectrum

        path, target, sha = self._location(trajectory)
        if not path or not Path(path).exists():
            raise FileNotFoundError(f"spectrum file unavailable: {path}")
        if sha:  # a file changed since ingest: its claims would be judged against other data
            from reviewer.services.spectra_cache import check_unchanged

            check_unchanged(path, sha)
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

    def run(self, trajectory, measurer: Measurer | None = None) -> CheckedTrajectory:
        """Check a trajectory (raises when its spectrum cannot be read), against `measurer` when its
        job made one from the spectrum it read (agents.jobs.vet_and_measure_job), else against its
        spectrum read here. A model reply that cannot be used is not an error of the check: the
        pattern claims are judged and the problem is returned."""
        from agents.claims.llm import ClaimExtractionError
        from agents.llm import ModelCallFailed

        spectrum, measurer = (None, measurer) if measurer is not None else self.spectrum(trajectory)
        extra, problem = None, None
        if self.extractor is not None:
            try:
                extra = self.extractor.extra_claims(trajectory)
            except (ClaimExtractionError, ModelCallFailed) as err:
                problem = (f"{trajectory.id}: LLM claim extraction failed ({self.extractor.model}): {err}; "
                           "pattern claims kept")
        results = check_trajectory(trajectory, spectrum, measurer=measurer, extra_claims=extra)
        counts = summarize(results)
        self.totals.update(counts)
        self.with_contradicted += bool(counts["contradicted"])
        if extra is None:
            return CheckedTrajectory(results, PATTERNS, self.base_version, problem)
        return CheckedTrajectory(results, PATTERNS_LLM, self.version)

    def accept(self, trajectory, results: list[ClaimResult]) -> list[dict[str, Any]]:
        """The store rows of results a batch job checked where it ran (agents.jobs.vet_and_check_job:
        the patterns' claims, against the spectrum the job read), counted in this checker's totals as
        its own checks are. Only for a checker without a model extractor (their version is the
        patterns')."""
        if self.extractor is not None:
            raise ValueError("results checked by the patterns alone cannot stand for a model-assisted check")
        counts = summarize(results)
        self.totals.update(counts)
        self.with_contradicted += bool(counts["contradicted"])
        return claim_rows(results)

    def check(self, trajectory, measurer: Measurer | None = None) -> list[ClaimResult]:
        """The trajectory's claim results (raises when its spectrum cannot be read)."""
        return self.run(trajectory, measurer).results

    def rows(self, trajectory, measurer: Measurer | None = None) -> list[dict[str, Any]]:
        return claim_rows(self.check(trajectory, measurer))

    def run_and_store(self, trajectory) -> CheckedTrajectory:
        """`run`, and the results stored under the version of the extractors that found them."""
        checked = self.run(trajectory)
        self.store.claims.save_claims(trajectory.id, checked.version, claim_rows(checked.results))
        return checked

    def check_and_store(self, trajectory) -> list[ClaimResult]:
        return self.run_and_store(trajectory).results

    def totals_text(self) -> str:
        return counts_text(self.totals)
