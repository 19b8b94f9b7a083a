"""Every claim in a trajectory checked against the spectrum (issue 9, part 1).

    results = check_trajectory(trajectory, spectrum)       # list[ClaimResult], JSON via to_dict()
    summary_text(results)                                   # "7 supported, 1 contradicted, 2 unverifiable"

Claims are found by patterns (extract.py) or, optionally, by a chat model (llm.py); the same
deterministic checker (check.py) judges them all; no Panel, no SQL, no model needed.
"""
from __future__ import annotations

from dataclasses import replace

from agents.claims.check import Context, check_claim
from agents.claims.extract import _clauses, extract_claims
from agents.claims.measure import Measurer
from agents.claims.rivals import answer_redshift, rejected_hypotheses, rivals_only
from agents.claims.types import Claim, ClaimResult, summarize, summary_text
from agents.claims.window import View, step_window, trajectory_redshift

CHECKED_KINDS = ("think", "answer")
# Stored with every result (reviewer/store claim_results): bump it when a change to the patterns,
# the measurements or the tolerances can change a verdict, so results of the two checkers stay apart.
# claims-9 (issue 50, item 7): rejected rivals are not claims; measurement claims by a second method.
CHECKER_VERSION = "claims-9"

__all__ = ["CHECKER_VERSION", "Claim", "ClaimResult", "Context", "Measurer", "View", "check_claim", "check_text",
           "check_trajectory", "extract_claims", "step_window", "summarize", "summary_text"]


def check_text(text: str, ctx: Context, claims: list[Claim] | None = None) -> list[ClaimResult]:
    """Check the claims of one text (found by the patterns unless given). A redshift the text
    itself states places the lines it names: the agent's own frame, right or wrong."""
    claims = extract_claims(text) if claims is None else claims
    stated = next((c for c in claims if c.quantity == "z" and c.value is not None), None)
    local = replace(ctx, z=stated.value, z_source="text") if stated and ctx.z_source != "tool_state" else ctx
    if local.z is None and (ctx.object_class or "").upper() == "STAR":
        # a star's lines sit at rest within its radial velocity (|v| < 600 km/s: z within 0.002)
        local = replace(local, z=0.0, z_source="star at rest")
    return [check_claim(c, ctx if c is stated else local) for c in claims]


def check_trajectory(trajectory, spectrum, *, measurer: Measurer | None = None,
                     extra_claims: dict[int, list[Claim]] | None = None) -> list[ClaimResult]:
    """Check every think/answer step of a trajectory against `spectrum` (agents.spectra.read_spectrum).
    `extra_claims` (step index -> claims, e.g. from the LLM extractor) are judged the same way.
    What the trajectory's own steps reject (agents.claims.rivals: hypotheses not SUPPORTED, or excluded
    by the synthesis) is not a claim of the answer: a clause quoting such a redshift is not checked."""
    measurer = measurer or Measurer.from_spectrum(spectrum)
    z, z_source = trajectory_redshift(trajectory)
    rivals, answer_z = rejected_hypotheses(trajectory), answer_redshift(trajectory)
    out: list[ClaimResult] = []
    for step in trajectory.steps:
        if step.kind not in CHECKED_KINDS or not step.text:
            continue
        view = step_window(trajectory, step.index)
        ctx = Context(measurer, z=z, z_source=z_source, view=view.range, task=trajectory.task,
                      rest_plot=view.rest_plot)
        claims = extract_claims(step.text) + list((extra_claims or {}).get(step.index, []))
        claims = rivals_only(step.text, claims, rivals, answer_z, _clauses(step.text))
        for res in check_text(step.text, ctx, claims):
            res.step_index = step.index
            out.append(res)
    return out
