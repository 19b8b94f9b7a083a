"""Cold-start curation (Spec-o3 section 3.2): draft -> revised -> two independent audits -> a
three-reviewer acceptance vote -> accepted or rejected; and applying revisions to a trajectory.

The paper: one astronomer revises a draft (tool arguments and analysis); two *other* astronomers
audit it independently; "if either auditor requests changes, the trajectory is returned for
revision and re-audited until all three experts approve it"; after the rewrite "the three
astronomers jointly perform a final acceptance vote" and sequences that fail it are discarded.
We read that vote as unanimous (3 of 3), the same bar the audit stage sets; `accept_votes=2`
gives a majority vote instead.

Rounds: every new revision starts a new round. Audits and votes count only when made after the
latest revision, each reviewer's latest counting once; an audit by the reviewer of the latest
revision does not count (audits are independent). A revision after acceptance or rejection
reopens the trajectory for audit: changed data must be audited again.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from agents.trajectory import Trajectory
from reviewer.services.rows import group_rows

CURATION_STATES = ("draft", "revised", "changes_requested", "voting", "accepted", "rejected")
AUDIT_VALUES = ("approve", "request_changes")
VOTE_VALUES = ("accept", "reject")
AUDITS_NEEDED = 2
VOTERS = 3
ACCEPT_VOTES = 3  # unanimous; see the module doc
_INLINE_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


@dataclass
class CurationStatus:
    state: str
    revised_at: datetime | None = None
    reviser: str | None = None
    approvals: list[str] = field(default_factory=list)  # auditors approving this round
    change_requests: list[str] = field(default_factory=list)
    accepts: list[str] = field(default_factory=list)
    rejects: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # why some events did not count

    def as_dict(self) -> dict[str, Any]:
        # what dataclasses.asdict gives, without its deep copies (the board makes one per trajectory)
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), list) else v for f in _STATUS_FIELDS}


_STATUS_FIELDS = fields(CurationStatus)
_DRAFT = CurationStatus("draft").as_dict()
_DRAFT_LISTS = [k for k, v in _DRAFT.items() if isinstance(v, list)]


def _key(row: dict[str, Any]) -> tuple:
    return (row["created_at"], row.get("seq") or 0)


def _latest_by_reviewer(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=_key):
        latest[row["reviewer"]] = row
    return latest


def curation_status(events: Iterable[dict[str, Any]], revisions: Iterable[dict[str, Any]] = (), *,
                    audits_needed: int = AUDITS_NEEDED, voters: int = VOTERS,
                    accept_votes: int = ACCEPT_VOTES) -> CurationStatus:
    """The curation state of one trajectory from its full event history (rows with reviewer, event,
    value, created_at, seq) and its revision rows (reviewer, created_at). See the module doc."""
    if not 1 <= accept_votes <= voters:
        raise ValueError("accept_votes must be between 1 and the number of voters")
    events = list(events)
    marks = [(r["created_at"], r.get("seq") or 0, r["reviewer"]) for r in revisions]
    marks += [(e["created_at"], e.get("seq") or 0, e["reviewer"]) for e in events if e["event"] == "revise"]
    if not marks:
        return CurationStatus("draft")
    revised_at, revised_seq, reviser = max(marks, key=lambda m: (m[0], m[1]))
    status = CurationStatus("revised", revised_at=revised_at, reviser=reviser)
    current = [e for e in events if e["event"] in ("audit", "vote") and _key(e) > (revised_at, revised_seq)]
    audits = _latest_by_reviewer([e for e in current if e["event"] == "audit"])
    for who, row in audits.items():
        if who == reviser:
            status.ignored.append(f"{who}: audit of their own revision")
        elif row["value"] == "approve":
            status.approvals.append(who)
        elif row["value"] == "request_changes":
            status.change_requests.append(who)
        else:
            status.ignored.append(f"{who}: unknown audit value {row['value']!r}")
    if status.change_requests:
        status.state = "changes_requested"
        return status
    if len(status.approvals) < audits_needed:
        return status
    status.state = "voting"
    votes = _latest_by_reviewer([e for e in current if e["event"] == "vote"])
    for who, row in votes.items():
        if row["value"] == "accept":
            status.accepts.append(who)
        elif row["value"] == "reject":
            status.rejects.append(who)
        else:
            status.ignored.append(f"{who}: unknown vote value {row['value']!r}")
    if len(status.rejects) > voters - accept_votes:
        status.state = "rejected"
    elif len(status.accepts) >= accept_votes:
        status.state = "accepted"
    return status


NOT_COUNTED = "Not saved: it would not count."


def event_refusal(status: CurationStatus, reviewer: str, event: str, value: str | None, *,
                  audits_needed: int = AUDITS_NEEDED) -> str | None:
    """Why an audit or a vote by `reviewer` would not count in `status` (the trajectory's curation
    status now), or None when it would. An event that would not count is refused rather than stored:
    the rules above ignore it, and a reviewer told it was saved would believe it counted."""
    if event == "audit" and value not in AUDIT_VALUES:
        return f"An audit is {' or '.join(AUDIT_VALUES)}; got {value!r}."
    if event == "vote" and value not in VOTE_VALUES:
        return f"A vote is {' or '.join(VOTE_VALUES)}; got {value!r}."
    if event not in ("audit", "vote"):
        return f"A curation event here is an audit or a vote; got {event!r}."
    if status.state == "draft":
        article = "an" if event == "audit" else "a"
        return (f"{NOT_COUNTED} This trajectory is an unrevised draft: {article} {event} counts only after a revision. "
                "Revise a step first (Save revision).")
    if event == "audit" and reviewer == status.reviser:
        return (f"{NOT_COUNTED} {reviewer} made the latest revision, and audits are independent: another "
                "reviewer audits it.")
    if event == "vote" and status.state in ("revised", "changes_requested"):
        so_far = (f"changes requested by {', '.join(status.change_requests)}" if status.change_requests
                  else f"{len(status.approvals)} of {audits_needed} so far")
        return (f"{NOT_COUNTED} The vote opens once {audits_needed} auditors approve the latest revision "
                f"({so_far}).")
    return None


def status_text(status: CurationStatus) -> str:
    """A trajectory's curation state in a line, with what counts next."""
    if status.state == "draft":
        return "draft: revise a step to start its curation"
    who = lambda names: ", ".join(names) or "none"  # noqa: E731
    if status.state in ("revised", "changes_requested"):
        asked = f"; changes requested by {who(status.change_requests)}" if status.change_requests else ""
        return (f"{status.state.replace('_', ' ')} (by {status.reviser}): approving audits "
                f"{len(status.approvals)} of {AUDITS_NEEDED} ({who(status.approvals)}){asked}")
    return (f"{status.state}: votes to accept {who(status.accepts)}, to reject {who(status.rejects)} "
            f"(accepted with {ACCEPT_VOTES} of {VOTERS})")


BOARD_COLUMNS = ("spectrum_id", "object_id", "survey", "task", "agent_name", "backend", "model", "answer")
BOARD_FILTERS = ("all", "not draft", *CURATION_STATES)  # what the board can be limited to


def _board_row(t: dict[str, Any], status: dict[str, Any], revisions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"trajectory_id": t["id"], **{k: t[k] for k in BOARD_COLUMNS}, **status,
            "revised_steps": sorted({r["step_idx"] for r in revisions})}


def _status_of(tid: str, events: dict[str, list], revisions: dict[str, list], rules: dict) -> dict[str, Any]:
    """A trajectory's curation status as a dict; one with no event and no revision is a draft (most
    of a large store), without running the rules."""
    if tid in events or tid in revisions:
        return curation_status(events.get(tid, []), revisions.get(tid, []), **rules).as_dict()
    return {**_DRAFT, **{k: [] for k in _DRAFT_LISTS}}


def curation_board(store, session: str | None = None, task: str | None = None, state: str | None = None,
                   **rules: Any) -> list[dict[str, Any]]:
    """Every trajectory (of the session, if given) with its curation state and who did what:
    trajectory_id, spectrum_id, object_id, survey, task, agent_name, backend, model, answer, state,
    reviser, revised_at, approvals, change_requests, accepts, rejects, revised_steps. For exports and
    the CLI; the Curation tab reads one page at a time (`curation_page`)."""
    inputs = store.reviews.curation_inputs(session, task)
    events, revisions = group_rows(inputs["events"], "trajectory_id"), group_rows(inputs["revisions"], "trajectory_id")
    board = []
    for t in inputs["trajectories"]:
        if state not in (None, "draft") and t["id"] not in events and t["id"] not in revisions:
            continue  # a draft
        status = _status_of(t["id"], events, revisions, rules)
        if state is not None and status["state"] != state:
            continue
        board.append(_board_row(t, status, revisions.get(t["id"], [])))
    return board


def curation_page(store, session: str | None = None, task: str | None = None, state: str | None = "all",
                  offset: int = 0, limit: int = 50, **rules: Any) -> tuple[list[dict[str, Any]], int]:
    """One page of the board (rows as `curation_board` gives them, in its order) and the number of rows
    of the whole board, both limited to `state` (one of BOARD_FILTERS). Reads only what it needs: the page
    of trajectories from the database, and their events and revisions; a state filter first decides the
    state of the trajectories that have any curation event or revision (the few of a large store), those
    with neither being drafts."""
    state = state or "all"
    if state not in BOARD_FILTERS:
        raise ValueError(f"state must be one of {', '.join(BOARD_FILTERS)}; got {state!r}")
    select: dict[str, Any] = {}
    if state != "all":
        history = store.reviews.curation_history(session)
        events, revisions = group_rows(history["events"], "trajectory_id"), group_rows(history["revisions"], "trajectory_id")
        states = {tid: curation_status(events.get(tid, []), revisions.get(tid, []), **rules).state
                  for tid in events.keys() | revisions.keys()}
        keep = [tid for tid, s in states.items() if s == state or (state == "not draft" and s != "draft")]
        select = {"ids": keep, "untouched": state == "draft"}
    total = store.reviews.count_curation_trajectories(session, task, **select)
    page = store.reviews.curation_trajectories(session, task, offset=offset, limit=limit, **select) if offset < total else []
    history = store.reviews.curation_history(session, [t["id"] for t in page]) if page else {"events": [], "revisions": []}
    events, revisions = group_rows(history["events"], "trajectory_id"), group_rows(history["revisions"], "trajectory_id")
    rows = [_board_row(t, _status_of(t["id"], events, revisions, rules), revisions.get(t["id"], [])) for t in page]
    return rows, total


def trajectory_curation_status(store, trajectory_id: str, session: str | None = None) -> CurationStatus:
    """Where one trajectory stands in its curation (in a campaign's scope when `session` is given)."""
    history = store.reviews.curation_history(session, [trajectory_id])
    return curation_status(history["events"], history["revisions"])


def curation_state(events: Iterable[dict[str, Any]], revisions: Iterable[dict[str, Any]] = (), **rules: Any) -> str:
    """Just the state name (one of CURATION_STATES)."""
    return curation_status(events, revisions, **rules).state


# -- revisions -------------------------------------------------------------------------------
def _latest_revisions(revisions: Iterable[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    latest: dict[int, dict[str, Any]] = {}
    for row in sorted(revisions, key=lambda r: (r.get("version") or 0, r["created_at"], r.get("seq") or 0)):
        latest[int(row["step_idx"])] = row
    return latest


def result_step_for(traj: Trajectory, call_index: int) -> int | None:
    """Index of the tool_result answering the tool_call at `call_index` (same call_id, else the
    first tool_result after it)."""
    call = traj.steps[call_index]
    call_id = call.data.get("call_id")
    later = [s for s in traj.steps[call_index + 1:] if s.kind == "tool_result"]
    for step in later:
        if call_id is not None and step.data.get("call_id") == call_id:
            return step.index
    return later[0].index if later else None


def apply_revisions(trajectory: Trajectory, revisions: Iterable[dict[str, Any]], spectrum=None) -> Trajectory:
    """A copy of `trajectory` with each step's latest revision applied: new text, new tool
    arguments. A changed zoom (tool arguments of a tool_call, its tool_result, or the prompt's
    overview) is re-run through the zoom tool when `spectrum` is given (new render, new tool text);
    without it the revision's stored `image_sha` is used, or the render is marked deferred."""
    traj = trajectory.model_copy(deep=True)
    traj.images = dict(trajectory.images)
    tool = None
    latest = _latest_revisions(revisions)
    if latest:
        # imported Spec-o3 turns keep their raw text for exact re-export; edited ones must be
        # written from the steps (agents.interop falls back to that when no raw text is left)
        for step in traj.steps:
            step.data.pop("raw", None)
    for idx, rev in sorted(latest.items()):
        if not 0 <= idx < len(traj.steps):
            raise ValueError(f"revision of step {idx}, but the trajectory has {len(traj.steps)} steps")
        step = traj.steps[idx]
        if rev.get("text") is not None:
            step.text = rev["text"]
        if rev.get("tool_args") is None:
            continue
        args = dict(rev["tool_args"])
        step.tool_args = args
        if isinstance(args.get("label"), str):
            step.label = args["label"] or None
        target = result_step_for(traj, idx) if step.kind == "tool_call" else idx
        if target is None or traj.steps[target].kind not in ("tool_result", "prompt"):
            continue
        shown = traj.steps[target]
        if step.kind == "tool_call":
            _rewrite_inline_call(traj, idx, args)
        if shown is not step:
            shown.tool_args, shown.label = args, step.label
        if spectrum is not None:
            if tool is None:
                from agents.vet.renders import tool_for

                tool = tool_for(traj, spectrum)
            result = tool(args.get("wavelength_range"), args.get("label"), render=True)
            shown.is_error = result.is_error
            if shown.kind == "tool_result":
                shown.text = result.text
            shown.image_sha = traj.add_image(result.png) if result.png is not None else None
            shown.data.pop("deferred", None)
            if result.plotted_range is not None:
                shown.data["plotted_range"] = list(result.plotted_range)
        elif rev.get("image_sha"):
            shown.image_sha = rev["image_sha"]
            shown.data.pop("deferred", None)
        else:
            shown.image_sha = None
            shown.data["deferred"] = True
    return traj


def _rewrite_inline_call(traj: Trajectory, call_index: int, args: dict[str, Any]) -> None:
    """A Hermes model writes its calls inside its text (`<tool_call>{...}</tool_call>`): keep that
    text in step with revised arguments."""
    think = next((s for s in reversed(traj.steps[:call_index]) if s.kind == "think"), None)
    if think is None or "<tool_call>" not in think.text:
        return
    nth = sum(1 for s in traj.steps[think.index + 1:call_index] if s.kind == "tool_call")
    blocks = list(_INLINE_CALL.finditer(think.text))
    if nth >= len(blocks):
        return
    name = traj.steps[call_index].tool_name
    body = "\n" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "\n"
    block = blocks[nth]
    think.text = think.text[:block.start(1)] + body + think.text[block.end(1):]


def save_revision(store, trajectory: Trajectory, step_idx: int, reviewer: str, text: str | None = None,
                  tool_args: dict[str, Any] | None = None, spectrum=None, comment: str | None = None) -> str:
    """Store a reviewer's edit of one step (append-only, versioned by the store). When the tool
    arguments change and `spectrum` is given, the new zoom is rendered now and its PNG stored, so
    the revision carries the render the reviewer saw. Returns the revision id."""
    image_sha = None
    if tool_args is not None and spectrum is not None:
        revised = apply_revisions(trajectory, [{"step_idx": step_idx, "tool_args": tool_args, "version": 1,
                                                "created_at": datetime.min}], spectrum)
        step = revised.steps[step_idx]
        target = result_step_for(revised, step_idx) if step.kind == "tool_call" else step_idx
        sha = revised.steps[target].image_sha if target is not None else None
        if sha and sha in revised.images:
            image_sha = store.images.put_image(revised.images[sha])
    return store.labels.add_revision(trajectory.id, step_idx, reviewer, text=text, tool_args=tool_args,
                                     image_sha=image_sha, comment=comment)
