"""Claims that are not the answer's: what a trajectory itself records as rejected (issue 50, item 7).

A verify (FORMA) trajectory tests every redshift hypothesis in its own step (`analyse_hypothesis`,
whose result holds the hypothesis' verdict) and names the ones it excluded in the synthesis verdict
step (`excluded_hypotheses`); its report then lists them again, as table rows, as "excluded #2 ..."
lines and as the result auditor's "rival QSO z=0.6323 ... but excluded". Those redshifts, and whatever the
same clause says about the lines under them, are the rival's, not claims of the answer: checked
against the spectrum at the answer's z they would be contradicted for being what the agent rejected.

The text's own words (agents.claims.rejected) catch most of these; the steps catch the rest, whatever
the wording: a clause that quotes a rejected hypothesis' redshift (to the digits it quotes) and not
the answer's states nothing checkable about the answer.
"""
from __future__ import annotations

from dataclasses import dataclass

from agents.claims.types import Claim
from agents.trajectory import HYPOTHESIS_TOOL

ROUND_Z = 1e-5  # the steps keep hypothesis redshifts to 5 decimals


@dataclass(frozen=True)
class Rival:
    z: float
    spectype: str | None


def _z(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def answer_redshift(trajectory) -> float | None:
    """The redshift the trajectory answers with: the brief's, else the synthesis step's."""
    z = _z((trajectory.outcome.get("brief") or {}).get("redshift"))
    if z is not None:
        return z
    for step in trajectory.steps:
        if step.kind == "verdict" and step.verdict is not None and step.verdict.who == "synthesis":
            z = _z((step.data or {}).get("redshift"))
            if z is not None:
                return z
    return None


def rejected_hypotheses(trajectory) -> list[Rival]:
    """Every hypothesis the trajectory's steps reject: an `analyse_hypothesis` result whose verdict is
    not SUPPORTED, and each hypothesis the synthesis verdict step lists as excluded."""
    out: list[Rival] = []
    for step in trajectory.steps:
        data = step.data or {}
        if step.kind == "tool_result" and step.tool_name == HYPOTHESIS_TOOL:
            summary = data.get("summary") or {}
            verdict = str(summary.get("verdict") or "").upper()
            z = _z(summary.get("z"))
            if z is not None and verdict and verdict != "SUPPORTED":
                out.append(Rival(z, summary.get("class")))
        elif step.kind == "verdict" and step.verdict is not None and step.verdict.who == "synthesis":
            for e in data.get("excluded_hypotheses") or []:
                z = _z(e.get("z")) if isinstance(e, dict) else None
                if z is not None:
                    out.append(Rival(z, e.get("class")))
    return out


def quotes(claim: Claim, z: float) -> bool:
    """The claim's redshift is `z` to the digits it quotes."""
    return claim.value is not None and abs(claim.value - z) <= 0.5 * 10.0 ** (-claim.decimals) + ROUND_Z


def rivals_only(text: str, claims: list[Claim], rivals: list[Rival], answer_z: float | None,
                clauses: list[tuple[int, int]]) -> list[Claim]:
    """`claims` less those in a clause that quotes a rejected hypothesis' redshift and not the answer's."""
    if not rivals:
        return claims
    cut = []
    for c in claims:
        if c.quantity != "z" or c.value is None:
            continue
        if answer_z is not None and quotes(c, answer_z):
            continue
        if any(quotes(c, r.z) for r in rivals):
            cut += [(lo, hi) for lo, hi in clauses if lo <= c.start and c.end <= hi] or [(c.start, c.end)]
    if not cut:
        return claims
    return [c for c in claims if not any(lo <= c.start and c.end <= hi for lo, hi in cut)]
