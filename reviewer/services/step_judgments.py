"""Judgments of single steps (issue 47, item 4): the failure-mode taxonomy, the rule a judgment passes
before it is stored, and what it becomes for training (no Panel, no SQL).

The taxonomy is data (kb/step_failure_modes.yaml): each tag's id, label, definition and source in the
papers. `check_judgment` is the one rule: a judgment is correct / partly / incorrect (or 'clear' to
withdraw one), its tags are ids of the taxonomy, and a correct step carries none (a failure mode on a
step judged correct contradicts the judgment).

`supervision_rows` turns the stored judgments into process-supervision rows (one per judged step and
reviewer, as a process reward model reads them: the step, its label and why); `preference_pairs` pairs
trajectories of one task on one spectrum whose judged steps disagree in kind: one with every judged step
correct against one with a step judged incorrect (the chosen and the rejected of a preference dataset).
"""
from __future__ import annotations

from itertools import product
from typing import Any

import kb
from reviewer.services.triage import _agent_key as agent_of  # name/backend/model: one naming of an agent
from reviewer.store.step_judgments import CLEAR, STEP_JUDGMENTS

TAXONOMY = "step_failure_modes"


def taxonomy() -> dict[str, Any]:
    """kb/step_failure_modes.yaml: version, judgments (id -> definition), tags (id -> label, definition, source)."""
    return kb.load(TAXONOMY)


def taxonomy_version() -> str:
    return str(taxonomy()["version"])


def tag_ids() -> tuple[str, ...]:
    """The failure-mode tags in the taxonomy's order (the order the form lists them and keys number them)."""
    return tuple(taxonomy()["tags"])


def check_judgment(judgment: str, tags) -> tuple[str, list[str]]:
    """(judgment, tags) as stored, or ValueError saying what is wrong: an unknown judgment or tag, or a
    tag on a step judged correct. 'clear' (withdraw) keeps no tags."""
    if judgment == CLEAR:
        return judgment, []
    if judgment not in STEP_JUDGMENTS:
        raise ValueError(f"A step is judged {', '.join(STEP_JUDGMENTS)}; got {judgment!r}.")
    tags = list(dict.fromkeys(tags or ()))
    unknown = [t for t in tags if t not in taxonomy()["tags"]]
    if unknown:
        raise ValueError(f"Unknown failure mode {', '.join(map(repr, unknown))}: the tags are those of "
                         f"kb/{TAXONOMY}.yaml ({', '.join(tag_ids())}).")
    if judgment == "correct" and tags:
        raise ValueError("A step judged correct has no failure mode: judge it partly or incorrect, or untag it.")
    return judgment, tags


def supervision_rows(judged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Process-supervision rows from `store.step_judgments.judged_steps`: one per judged step and reviewer,
    JSON-ready (times as ISO 8601 UTC)."""
    return [{
        "trajectory_id": r["trajectory_id"], "step_idx": int(r["step_idx"]), "spectrum_id": r["spectrum_id"],
        "task": r["task"], "agent": agent_of(r), "judgment": r["judgment"], "tags": list(r["tags"] or []),
        "taxonomy_version": r["taxonomy_version"], "reviewer": r["reviewer"], "comment": r["comment"],
        "step_kind": r["step_kind"], "step_text": r["step_text"], "tool_name": r["tool_name"],
        "tool_args": r["tool_args"], "session_id": r["session_id"], "judged_at": r["created_at"].isoformat(),
    } for r in judged]


def trajectory_judgments(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per trajectory of the supervision rows: its task, spectrum, agent, the judged steps and whether any
    is incorrect (a step judged incorrect by any reviewer) or all are correct (every judgment correct)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        t = out.setdefault(r["trajectory_id"], {"trajectory_id": r["trajectory_id"], "task": r["task"],
                                                 "spectrum_id": r["spectrum_id"], "agent": r["agent"],
                                                 "judgments": []})
        t["judgments"].append((r["step_idx"], r["reviewer"], r["judgment"], r["tags"]))
    for t in out.values():
        kinds = {j for _, _, j, _ in t["judgments"]}
        t["all_correct"], t["any_incorrect"] = kinds == {"correct"}, "incorrect" in kinds
    return out


def preference_pairs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Preference pairs from the supervision rows: on the same spectrum and task, each trajectory whose
    judged steps are all correct (chosen) against each with a step judged incorrect (rejected), with the
    rejected one's incorrect steps and their tags. Trajectories with partly-judged steps and no incorrect
    one take no side. Ordered by task, spectrum, chosen, rejected."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for t in trajectory_judgments(rows).values():
        if t["spectrum_id"] is not None:
            groups.setdefault((t["task"], t["spectrum_id"]), []).append(t)
    pairs = []
    for (task, spectrum), members in sorted(groups.items()):
        chosen = sorted((t for t in members if t["all_correct"]), key=lambda t: t["trajectory_id"])
        rejected = sorted((t for t in members if t["any_incorrect"]), key=lambda t: t["trajectory_id"])
        for good, bad in product(chosen, rejected):
            pairs.append({"task": task, "spectrum_id": spectrum, "chosen": good["trajectory_id"],
                          "chosen_agent": good["agent"], "rejected": bad["trajectory_id"], "rejected_agent": bad["agent"],
                          "rejected_steps": sorted({(i, tuple(tags)) for i, _, j, tags in bad["judgments"]
                                                    if j == "incorrect"}),
                          "n_judged_chosen": len(good["judgments"]), "n_judged_rejected": len(bad["judgments"])})
    for p in pairs:  # JSON-ready
        p["rejected_steps"] = [{"step_idx": i, "tags": list(tags)} for i, tags in p["rejected_steps"]]
    return pairs
