"""The stages of a FORMA (verify) trajectory, for grouping its steps in the player's strip: the
evidence gathered, the redshift hypotheses tested, the line-by-line audits, the rule audits of the
result, and the report. Stages only move forward: a step that names none (a render, a prompt) stays
in the stage of the step before it."""
from __future__ import annotations

STAGES = ("evidence", "hypotheses", "lines", "audits", "report")
HYPOTHESIS_TOOLS = {"redshift_hypotheses", "analyse_hypothesis"}
AUDIT_TOOLS = {"feature_audit"}
LINE_AUDITOR = "feature_auditor"  # its verdicts are on one line of one hypothesis each


def own_stage(step) -> int:
    """The stage a step names by itself (0, evidence, when it names none)."""
    if step.kind == "answer":
        return STAGES.index("report")
    if step.verdict is not None:
        return STAGES.index("lines" if step.verdict.who == LINE_AUDITOR else "audits")
    if step.tool_name in AUDIT_TOOLS:
        return STAGES.index("audits")
    if step.tool_name in HYPOTHESIS_TOOLS:
        return STAGES.index("hypotheses")
    return 0


def stage_groups(task: str, steps) -> list[list]:
    """[[first step index, stage name], ...] of a FORMA trajectory's steps; [] for other tasks (their
    strips are not grouped)."""
    if task != "verify" or not steps:
        return []
    groups, stage = [], -1
    for position, step in enumerate(steps):
        now = max(stage, own_stage(step))
        if now != stage:
            groups.append([position, STAGES[now]])
            stage = now
    return groups
