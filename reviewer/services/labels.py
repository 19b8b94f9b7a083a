"""Label writing: the rules every human label passes before it is stored (no Panel, no SQL).

Who may write (a named reviewer; in a campaign, an assigned one while it is open; verdicts not in a
rating campaign), what a verdict must say (an override names a label from the task's answer set
that differs from the agent's own answer), what others' labels a reviewer may see (blind review),
and the acknowledgement that a label is stored. Labels are append-only: undo writes a new row that
restores what was current before, and the latest row wins.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reviewer.services import background, campaigns, stats_snapshots, triage
from reviewer.services.conflicts import sync_verdict_states
from reviewer.services.consensus import DZ_MAX, describe_label, labels_agree, normalise_label
from reviewer.services.curation import curation_status, event_refusal
from reviewer.store.claims import CLAIM_FLAG_DECISIONS

log = logging.getLogger(__name__)
VERIFY_TYPES = ("STAR", "GALAXY", "QSO", "UNKNOWN")
VET_ANSWERS = ("YES", "NO")
NAME_MAX = 64
_NAME_OK = re.compile(r"^[\w .@'+-]+$")
# what the Stats tab says in place of the team's figures while review is blind (LabelService.visible_stats)
BLIND_STATS_NOTE = ("*Blind review: these statistics are read from your own labels only: your scores, your "
                    "agreement with another reviewer on the items you have both labelled, and the agents' "
                    "accuracy by your verdicts. The team's figures are shown in an open (not blind) campaign, "
                    "or once no other reviewer has labelled an item you have not.*")
BLIND_TRIAGE_NOTE = ("*Blind review: the accuracy of the agents' answers by review priority, and the share of the "
                     "queue that could be accepted without review, are read from every reviewer's labels: they are "
                     "not shown while review is blind and another reviewer has labelled an item you have not "
                     "(`specreview triage` prints them).*")


def _refresh_priority_later(store, trajectory_id: str) -> None:
    """The review priority of a labelled item is derived data (reviewer.services.triage, ~20 ms): it is
    recomputed in the background "priority" lane after the label is stored and acknowledged, not on the
    reviewer's key press."""
    def work():
        if not store.is_open:  # the store closed before its turn (the app stopping): nothing to refresh
            return
        try:
            triage.refresh(store, [trajectory_id], refit=False)
        except Exception as err:  # a priority that cannot be refreshed must not lose the label
            if store.is_open:  # a store closed under it interrupts it: dropped, as a stale read-ahead is
                log.warning("review priority of %s not refreshed: %s", trajectory_id, err)

    background.submit("priority", work)


class LabelRefused(ValueError):
    """A label the rules refuse; the message says why, in words a reviewer can act on."""


class NameRefused(LabelRefused):
    """Refused for the reviewer's name (missing or not allowed): a valid name makes it stale."""


def check_name(name: str, what: str = "reviewer name") -> str:
    """A person's or campaign's name: printable, at most NAME_MAX characters, letters, digits and . _ - @ ' +
    (names reach pages, logs and file names: refuse rather than escape everywhere)."""
    name = unicodedata.normalize("NFC", (name or "").strip())
    if not name:
        raise NameRefused(f"A {what} is needed.")
    if len(name) > NAME_MAX:
        raise NameRefused(f"A {what} has at most {NAME_MAX} characters.")
    if not _NAME_OK.match(name):
        raise NameRefused(f"A {what} may hold letters, digits, spaces and . _ - @ ' + only.")
    return name


# Server-side limits on free text (the page's max_length is a convenience a client can skip): a label's
# text is sent to every later reviewer of the item, so its size is bounded where it is stored.
TEXT_LIMITS = {"comment": 2000, "note": 5000, "VI comment": 100, "merger's comment": 2000, "revised text": 20000}


def check_text(text: str | None, what: str) -> str | None:
    """Free text of a label, stripped (None when empty); refused past TEXT_LIMITS[what] characters."""
    text = (text or "").strip()
    if len(text) > TEXT_LIMITS[what]:
        raise LabelRefused(f"A {what} has at most {TEXT_LIMITS[what]} characters; this one has {len(text)}. "
                           "Nothing was saved.")
    return text or None


def answer_of_task(task: str, label: dict[str, Any] | None) -> dict[str, Any]:
    """`label` normalised to the task's answer set (YES / NO; a verify class with its z, if given), or
    LabelRefused."""
    label = normalise_label(label)
    if task == "verify":
        if label.get("type") not in VERIFY_TYPES:
            raise LabelRefused(f"Choose the corrected type ({', '.join(VERIFY_TYPES)}).")
        z = label.get("z")
        if z is not None and not (-0.01 <= z <= 12):
            raise LabelRefused(f"The corrected z must lie between -0.01 and 12; got {z}.")
        label = {"type": label["type"], "z": z}
    elif label.get("answer") not in VET_ANSWERS:
        raise LabelRefused("Choose the corrected answer (YES or NO).")
    else:
        label = {"answer": label["answer"]}
    return label


def validate_correction(task: str, label: dict[str, Any] | None, agent_label: dict[str, Any]) -> dict[str, Any]:
    """The corrected label of an override, normalised; refused when outside the task's answer set or
    equal to the agent's own answer (that is an approval, not an override)."""
    label = answer_of_task(task, label)
    # a verify correction without z, of the agent's own class, says nothing the agent did not: no override
    same_class = task == "verify" and label.get("z") is None and label.get("type") == normalise_label(agent_label).get("type")
    if agent_label and (same_class or labels_agree(label, agent_label)):
        extra = f" (z within {DZ_MAX} x (1+z))" if task == "verify" else ""
        raise LabelRefused(f"An override must differ from the agent's answer ({describe_label(agent_label)}){extra}: "
                           "change the corrected label, or approve.")
    return label


def default_correction(task: str, agent_label: dict[str, Any] | None) -> dict[str, Any]:
    """Where an override's corrected label starts: for a yes/no task the other answer (the only
    override there is); for verify nothing (the reviewer's answer comes from the z tab: a chosen or
    marked candidate, or the class and z typed), never the agent's own answer, which is no override."""
    own = normalise_label(agent_label)
    if task != "verify" and own.get("answer") in VET_ANSWERS:
        return {"answer": next(a for a in VET_ANSWERS if a != own["answer"])}
    return {}


def verdict_words(action: str, label: dict[str, Any] | None, agent: dict[str, Any] | None,
                  override: str = "→") -> str:
    """A verdict with the label it stands for: "approve (NO)" (the agent's answer approved), "override → YES"
    (the corrected label; `override` is the word between), "reject" (no label). An approval of an agent with
    no answer (a refusal) names none."""
    if action == "override":
        return f"override {override} {describe_label(label)}"
    if action == "approve" and normalise_label(agent):
        return f"approve ({describe_label(agent)})"
    return action


def _quoted_verdict(action: str, label: dict[str, Any] | None, agent: dict[str, Any] | None) -> str:
    """The verdict as acknowledgements name it: 'approve' (NO), 'override' to YES, 'reject'."""
    words = verdict_words(action, label, agent, override="to")
    return f"'{action}'{words[len(action):]}"


@dataclass(frozen=True)
class Ack:
    """A stored label, as the reviewer is told about it."""

    # verdict / first_look / score / note / claim_flag / step_judgment / vi / preference / resolution / revision /
    # curation / undo
    kind: str
    what: str
    reviewer: str
    row_id: str
    trajectory_id: str | None
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    previous: dict[str, Any] | None = None  # the verdict this one replaced (for undo)
    agent: dict[str, Any] | None = None  # a verdict's: the agent's own answer (what 'approve' approved)
    subject: str | None = None  # the item it is on, as the reviewer knows it (object id and task)

    def text(self) -> str:
        on = f" on {self.subject}" if self.subject else ""
        return f"Saved {self.what}{on} as {self.reviewer} at {self.at.astimezone().strftime('%H:%M:%S')}."


VERDICT_KINDS = frozenset({"verdict", "undo", "resolution"})  # acks that change consensus and the queue
CURATION_KINDS = frozenset({"revision", "curation"})
CLAIM_FLAG_DONE = {"confirm": "confirmed", "dismiss": "dismissed"}


def flag_label(claim_text: str) -> str:
    """How a contradicted claim is offered as a step flag."""
    return f"unsupported claim: {claim_text}"


class LabelService:
    """Writes labels for one reviewer in one scope (the whole queue, or a campaign)."""

    def __init__(self, store):
        self.store = store

    # ---- what a reviewer saved (the forms show it back) --------------------------------------
    def my_review(self, reviewer: str, trajectory_id: str | None) -> dict | None:
        return self.store.labels.latest_review(trajectory_id, reviewer) if trajectory_id and reviewer else None

    def my_rating(self, reviewer: str, trajectory_id: str | None, rubric_version: str) -> dict | None:
        return self.store.labels.latest_rating(trajectory_id, reviewer, rubric_version) \
            if trajectory_id and reviewer else None

    def my_notes(self, reviewer: str, trajectory_id: str | None) -> dict[int | None, dict]:
        """The reviewer's latest note on each step of a trajectory, by step index."""
        if not (trajectory_id and reviewer):
            return {}
        return {a.get("step_idx"): a for a in self.store.labels.annotations_for(trajectory_id, reviewer)}

    def my_vi(self, reviewer: str, spectrum_id: str | None) -> dict | None:
        return self.store.labels.latest_vi_label(spectrum_id, reviewer) if spectrum_id and reviewer else None

    def my_claim_flags(self, reviewer: str, trajectory_id: str | None) -> list[dict]:
        return self.store.claims.claim_flags_for(trajectory_id, reviewer) if trajectory_id and reviewer else []

    # ---- who may write ------------------------------------------------------------------------
    def check_writable(self, reviewer: str, campaign: dict | None, verdict: bool = False,
                       trajectory_id: str | None = None) -> str:
        """The reviewer's checked name, or LabelRefused: not assigned, campaign closed, a verdict in a
        rating campaign, or a trajectory that is not one of the campaign's items (its label would be
        stored and exported as the campaign's)."""
        name = check_name(reviewer)
        if campaign and trajectory_id is not None and not self.store.sessions.holds_item(campaign["id"], trajectory_id):
            raise LabelRefused(f"This item is not part of campaign '{campaign['name']}': open it from the "
                               "campaign's queue, or leave the campaign to label it.")
        if campaign:
            current = self.store.sessions.get_session(campaign["id"]) or campaign
            if current.get("closed_at") is not None:
                raise LabelRefused(f"Campaign '{campaign['name']}' is closed: its labels are frozen.")
            members = current.get("reviewers") or []
            if members and name not in members:
                raise LabelRefused(f"{name} is not assigned to campaign '{campaign['name']}'.")
            if verdict and current.get("mode") == "rating":
                raise LabelRefused(f"Campaign '{campaign['name']}' is for rating only: give a 0-5 score.")
        return name

    @staticmethod
    def _scope(campaign: dict | None) -> str | None:
        return campaign["id"] if campaign else None

    # ---- verdicts -----------------------------------------------------------------------------
    def write_verdict(self, reviewer: str, trajectory, action: str, label: dict | None = None,
                      comment: str | None = None, campaign: dict | None = None, active_s: float | None = None) -> Ack:
        """approve / override (with a corrected label from the task's answer set) / reject; `active_s`: the
        seconds the reviewer's page was in use on the item before it (reviewer.activity)."""
        from reviewer.services.consensus import agent_label

        name = self.check_writable(reviewer, campaign, verdict=True, trajectory_id=trajectory.id)
        comment = check_text(comment, "comment")
        if action not in ("approve", "override", "reject"):
            raise LabelRefused(f"A verdict is approve, override or reject; got {action!r}.")
        own = agent_label(trajectory.task, None, None, trajectory.outcome)
        if action == "override":
            if trajectory.task == "verify" and not normalise_label(label):
                raise LabelRefused("Choose the corrected class and z first: a candidate in the z tab (chosen, or "
                                   "a marked line's), or the corrected type and z below the verdict buttons.")
            label = validate_correction(trajectory.task, label, own)
        else:
            label = None
        what = f"verdict {_quoted_verdict(action, label, own)}"
        return self._verdict_row(name, trajectory.id, action, label, comment, campaign, "verdict", what, own,
                                 active_s=active_s)

    def undo_verdict(self, reviewer: str, ack: Ack, campaign: dict | None = None) -> Ack:
        """Undo a verdict this reviewer saved: a new row that restores the verdict it replaced (or
        withdraws it when there was none). Nothing is deleted."""
        name = self.check_writable(reviewer, campaign, verdict=True, trajectory_id=ack.trajectory_id)
        if ack.kind not in ("verdict",) or ack.reviewer != name:
            raise LabelRefused("Only your own last verdict can be undone.")
        prev = ack.previous
        if prev:
            action, label, comment = prev["action"], prev.get("label"), prev.get("comment")
            what = f"undo: {ack.what} withdrawn, back to {_quoted_verdict(action, label, ack.agent)}"
        else:
            action, label, comment, what = "clear", None, None, f"undo: {ack.what} withdrawn"
        return self._verdict_row(name, ack.trajectory_id, action, label, comment, campaign, "undo", what, ack.agent)

    def _verdict_row(self, name, trajectory_id, action, label, comment, campaign, kind, what, agent=None,
                     active_s: float | None = None) -> Ack:
        previous = self.store.labels.latest_review(trajectory_id, name)

        def write() -> str:
            return self.store.labels.add_review(trajectory_id, name, action, label=label, comment=comment or None,
                                                session_id=self._scope(campaign), active_s=active_s)

        def write_within_plan() -> str:  # reviewers per item: who holds the item, read in the verdict's transaction
            refusal = campaigns.overlap_refusal(self.store, campaign, trajectory_id, name)
            if refusal:
                raise LabelRefused(refusal)
            return write()

        planned = action != "clear" and campaigns.plan_of(self.store, campaign) is not None
        row_id = self.store.sessions.in_turn(write_within_plan) if planned else write()
        sync_verdict_states(self.store, trajectory_id)
        _refresh_priority_later(self.store, trajectory_id)
        stats_snapshots.written(self.store)
        return Ack(kind, what, name, row_id, trajectory_id, previous=previous, agent=agent)

    # ---- other labels -------------------------------------------------------------------------
    def write_score(self, reviewer, trajectory_id, score: int, rubric_version: str, campaign=None) -> Ack:
        name = self.check_writable(reviewer, campaign, trajectory_id=trajectory_id)
        if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 5:
            raise LabelRefused(f"A reasoning score is a whole number from 0 to 5; got {score!r}.")
        row = self.store.labels.add_rating(trajectory_id, name, score, rubric_version, session_id=self._scope(campaign))
        stats_snapshots.written(self.store)
        return Ack("score", f"score {score}", name, row, trajectory_id)

    def write_note(self, reviewer, trajectory_id, step_index, comment, flags, campaign=None) -> Ack:
        name = self.check_writable(reviewer, campaign, trajectory_id=trajectory_id)
        comment = check_text(comment, "note")
        row = self.store.labels.add_annotation(trajectory_id, name, comment=comment or None, step_idx=step_index,
                                               flags=flags, session_id=self._scope(campaign))
        where = f" on step {step_index + 1}" if step_index is not None else ""
        return Ack("note", "note" + where, name, row, trajectory_id)

    def write_claim_flag(self, reviewer, trajectory_id, step_index: int, claim_index: int, checker_version: str,
                         decision: str, campaign=None) -> Ack:
        """The reviewer's answer to a flag the claim checker raised on a step: `confirm` (the agent's
        claim is wrong) or `dismiss` (the checker was wrong). The claim must be one of that
        trajectory's stored contradicted claims (claim_results: checker version, step, claim index);
        what the checker measured is stored with the answer."""
        name = self.check_writable(reviewer, campaign)
        if decision not in CLAIM_FLAG_DECISIONS:
            raise LabelRefused(f"A flag is answered confirm or dismiss; got {decision!r}.")
        claim = next((r for r in self.store.claims.claims_for(trajectory_id, checker_version)
                      if r["step_idx"] == step_index and r["claim_idx"] == claim_index), None)
        if claim is None:
            raise LabelRefused("That claim is not among the checker's results for this trajectory: "
                               "open the item again to see its current claims.")
        if claim["verdict"] != "contradicted":
            raise LabelRefused(f"Only a claim the checker contradicted is flagged; this one is {claim['verdict']}.")
        row = self.store.claims.add_claim_flag(trajectory_id, name, step_index, claim_index, checker_version,
                                               claim["claim_text"], decision, result=claim.get("result"),
                                               session_id=self._scope(campaign))
        what = f"{CLAIM_FLAG_DONE[decision]} flag on step {step_index + 1}: {flag_label(claim['claim_text'])!r}"
        return Ack("claim_flag", what, name, row, trajectory_id)

    def write_step_judgment(self, reviewer, trajectory_id, step_index: int, judgment: str, tags=(),
                            comment: str | None = None, campaign=None) -> Ack:
        """The reviewer's judgment of one step: correct / partly / incorrect with failure-mode tags from the
        taxonomy (reviewer.services.step_judgments.check_judgment), or 'clear' to withdraw it."""
        from reviewer.services import step_judgments

        name = self.check_writable(reviewer, campaign, trajectory_id=trajectory_id)
        comment = check_text(comment, "note")
        try:
            judgment, tags = step_judgments.check_judgment(judgment, tags)
        except ValueError as err:
            raise LabelRefused(str(err)) from err
        if step_index is None or not 0 <= step_index < self._n_steps(trajectory_id):
            raise LabelRefused(f"Step {step_index} is not a step of this trajectory: open the step to judge it.")
        row = self.store.step_judgments.add_step_judgment(
            trajectory_id, name, step_index, judgment, tags, step_judgments.taxonomy_version(), comment,
            session_id=self._scope(campaign))
        stats_snapshots.written(self.store)
        what = (f"step {step_index + 1} judgment withdrawn" if judgment == "clear" else
                f"step {step_index + 1} judged {judgment}" + (f" ({', '.join(tags)})" if tags else ""))
        return Ack("step_judgment", what, name, row, trajectory_id)

    def write_first_look(self, reviewer: str, trajectory, label: dict | None, campaign: dict | None,
                         active_s: float | None = None) -> Ack:
        """The reviewer's own answer on an item of a first-look campaign, before the agent's is shown (issue 47,
        item 2); their verdict, once all is shown, is written as any other."""
        if not (campaign and campaign.get("first_look")):
            raise LabelRefused("A first look belongs to a campaign with a first look.")
        name = self.check_writable(reviewer, campaign, trajectory_id=trajectory.id)
        if trajectory.task == "verify" and not normalise_label(label).get("type"):
            raise LabelRefused("Choose your class (and z, if you can) first: below, then 'Record my first look'.")
        label = answer_of_task(trajectory.task, label)
        row = self.store.labels.add_first_look(trajectory.id, name, label, campaign["id"], active_s)
        return Ack("first_look", f"first look {describe_label(label)}", name, row, trajectory.id)

    def my_first_look(self, reviewer: str, trajectory_id: str | None, campaign: dict | None) -> dict | None:
        """The reviewer's first look on the item in a first-look campaign (None: none yet, or no first look)."""
        if not (campaign and campaign.get("first_look") and trajectory_id and reviewer):
            return None
        return self.store.labels.first_look(trajectory_id, reviewer, campaign["id"])

    def my_step_judgments(self, reviewer: str, trajectory_id: str | None, campaign=None) -> dict[int, dict]:
        """The reviewer's current judgment of each step of a trajectory, by step index."""
        if not (trajectory_id and reviewer):
            return {}
        rows = self.store.step_judgments.step_judgments_for(trajectory_id, reviewer, self._scope(campaign))
        return {r["step_idx"]: r for r in rows}

    def _n_steps(self, trajectory_id: str) -> int:
        return int((self.store.trajectories.trajectory_summary(trajectory_id) or {}).get("n_steps") or 0)

    def write_vi(self, reviewer, spectrum_id, campaign=None, **fields) -> Ack:
        name = self.check_writable(reviewer, campaign)
        fields["comment"] = check_text(fields.get("comment"), "VI comment")
        row = self.store.labels.add_vi_label(spectrum_id, name, session_id=self._scope(campaign), **fields)
        return Ack("vi", "VI label", name, row, None)

    def write_preference(self, reviewer, trajectory_id, other_id, outcome, spectrum_id, campaign=None) -> Ack:
        """This trajectory against another one of the same task on the same spectrum, or on another
        spectrum of the same object (the sky cross-match's group: another epoch or survey) (win / tie /
        loss): trajectories of different tasks answer different questions and are not compared."""
        name = self.check_writable(reviewer, campaign)
        this = self.store.trajectories.trajectory_summary(trajectory_id) or {}
        that = self.store.trajectories.trajectory_summary(other_id) if other_id != trajectory_id else None
        if not that:
            raise LabelRefused("Choose another trajectory of this spectrum to compare with.")
        same_object = this.get("spectrum_id") is not None and self.store.objects.same_object(
            this["spectrum_id"], that["spectrum_id"])
        if that["task"] != this.get("task") or not same_object:
            raise LabelRefused(f"A preference compares two trajectories of the same task on the same spectrum "
                               f"or object; this one is task '{this.get('task')}', the other '{that['task']}'"
                               f"{'' if same_object else ' on another object'}.")
        row = self.store.labels.add_preference(trajectory_id, other_id, name, outcome, spectrum_id=spectrum_id,
                                               session_id=self._scope(campaign))
        return Ack("preference", f"preference '{outcome}'", name, row, trajectory_id)

    def who_may_resolve(self, campaign: dict | None, blind: bool) -> str:
        """Who may resolve a conflict, in words (the rules `check_resolver` applies)."""
        current = (self.store.sessions.get_session(campaign["id"]) or campaign) if campaign else None
        if current is None:
            who = "Any named reviewer may resolve a conflict"
        else:
            members = current.get("reviewers") or []
            people = f"its assigned reviewers ({', '.join(members)})" if members else "any named reviewer"
            closed = " (it is closed: nobody can)" if current.get("closed_at") is not None else " while it is open"
            who = f"In campaign '{current['name']}', {people} may resolve its conflicts{closed}"
        after = ", once they have saved their own label on the item (blind review)" if blind else ""
        return f"{who}{after}. A resolution needs the merger's comment saying why that label wins."

    def check_resolver(self, reviewer: str, item: dict, campaign: dict | None = None, blind: bool = False) -> str:
        """The merger's checked name, or LabelRefused: the `check_writable` rules, and under blind review
        no resolution before the merger's own label on the item (`sees_others` on its `labels`)."""
        name = self.check_writable(reviewer, campaign)
        if item.get("hidden") or not self.sees_others(name, item.get("labels") or [], blind):
            raise LabelRefused("Blind review: save your own label on this item before you resolve its conflict.")
        return name

    def write_resolution(self, reviewer, item: dict, action: str | None, label: dict | None,
                         merger_comment: str | None, campaign=None, blind: bool = False) -> Ack:
        """A merger's answer to a conflict: for a trajectory approve / override (a label from the
        answer set) / reject; for a spectrum the merged VI fields."""
        name = self.check_resolver(reviewer, item, campaign, blind)
        merger_comment = check_text(merger_comment, "merger's comment")
        if not merger_comment:
            raise LabelRefused("A resolution needs the merger's comment: say why this label wins.")
        what = "resolution"
        if item["kind"] == "trajectory":
            summary = self.store.trajectories.trajectory_summary(item["item_id"]) or {}
            from reviewer.services.consensus import agent_label

            own = agent_label(summary.get("task"), summary.get("answer"), summary.get("answer_z"),
                              summary.get("outcome"))
            if action == "override":
                label = validate_correction(summary.get("task") or item.get("task"), label, own)
            else:
                label = None
            what = f"resolution {_quoted_verdict(action, label, own)}" if action else what
        else:
            action = None
        row = self.store.reviews.add_resolution(item["kind"], item["item_id"], name, action=action, label=label,
                                                merger_comment=merger_comment, session_id=self._scope(campaign))
        if item["kind"] == "trajectory":
            sync_verdict_states(self.store, item["item_id"])
            _refresh_priority_later(self.store, item["item_id"])
            stats_snapshots.written(self.store)
        return Ack("resolution", what, name, row, item["item_id"] if item["kind"] == "trajectory" else None)

    def write_revision(self, reviewer, trajectory, step, text, tool_args, spectrum, comment, campaign=None) -> Ack:
        """A revised step (text and/or tool arguments, re-rendered) and its `revise` curation event."""
        from reviewer.services.curation import save_revision

        name = self.check_writable(reviewer, campaign)
        comment = check_text(comment, "comment")
        if len(text or "") > TEXT_LIMITS["revised text"]:
            raise LabelRefused(f"A revised step has at most {TEXT_LIMITS['revised text']} characters. Nothing was saved.")
        try:
            save_revision(self.store, trajectory, step.index, name,
                          text=text if text != (step.text or "") else None,
                          tool_args=tool_args if tool_args != step.tool_args else None,
                          spectrum=spectrum, comment=comment)
        except ValueError as err:
            raise LabelRefused(str(err)) from err
        row = self.store.labels.add_curation_event(trajectory.id, name, "revise", comment=comment,
                                                   session_id=self._scope(campaign))
        return Ack("revision", f"revision of step {step.index + 1}", name, row, trajectory.id)

    def write_curation_event(self, reviewer, trajectory_id, event, value, comment, campaign=None) -> Ack:
        """An audit or a vote, stored only when it counts now (reviewer.services.curation.event_refusal says why
        not: an unrevised draft, an audit of one's own revision, a vote before two approving audits)."""
        name = self.check_writable(reviewer, campaign)
        comment = check_text(comment, "comment")
        history = self.store.reviews.curation_history(self._scope(campaign), [trajectory_id])
        refusal = event_refusal(curation_status(history["events"], history["revisions"]), name, event, value)
        if refusal:
            raise LabelRefused(refusal)
        row = self.store.labels.add_curation_event(trajectory_id, name, event, value=value, comment=comment,
                                                   session_id=self._scope(campaign))
        return Ack("curation", f"{event} '{value}'", name, row, trajectory_id)

    # ---- reading: blind review ----------------------------------------------------------------
    @staticmethod
    def sees_others(reviewer: str, current_labels: list[dict[str, Any]], blind: bool) -> bool:
        """The blind-review rule, for every list, column and detail a reviewer sees: while `blind`,
        other reviewers' labels on an item, and all that is derived from them (who said what, that
        they disagree, why), are shown only to a reviewer with a current label of their own on it.
        `current_labels`: the item's current labels of one kind (verdicts, or VI labels)."""
        return not blind or any(r.get("reviewer") == reviewer for r in current_labels)

    def others_visible(self, reviewer: str, trajectory_id: str, blind: bool) -> list[dict[str, Any]] | None:
        """Other reviewers' current verdicts on the item, or None while blind review hides them."""
        current = self.store.labels.reviews_for(trajectory_id)  # withdrawn verdicts are not current
        if not self.sees_others(reviewer, current, blind):
            return None
        return [r for r in current if r["reviewer"] != reviewer]

    @classmethod
    def sees_reviewer(cls, reviewer: str, other: str, blind: bool) -> bool:
        """Whether figures of `other`'s labels over items in general (the items they labelled, their
        progress, their score distribution) may be shown to `reviewer`: `sees_others` on the items
        `other` labelled, which, while blind, holds for every such item only when `other` is `reviewer`."""
        return cls.sees_others(reviewer, [{"reviewer": other}], blind)

    def check_reviewed_by(self, reviewer: str, name: str | None, blind: bool) -> str | None:
        """The queue's "Reviewed by" filter (None: none), or LabelRefused while blind for anyone but the
        reviewer: the items another reviewer labelled are their labels (`sees_reviewer`)."""
        name = unicodedata.normalize("NFC", (name or "").strip())
        if not name:
            return None
        if not self.sees_reviewer(unicodedata.normalize("NFC", (reviewer or "").strip()), name, blind):
            raise LabelRefused("Blind review: the queue can be filtered by your own name only (which items "
                               "another reviewer labelled is theirs to see).")
        return name

    def check_order(self, reviewer: str, order: str, blind: bool, session: str | None = None) -> str:
        """The queue's order, or LabelRefused for the triage priority while `sees_team_figures` does not
        hold: the priority counts each item's reviewers and is weighted by a fit on every reviewer's
        verdicts, so items others labelled would move in it."""
        if order == "priority" and not self.sees_team_figures(reviewer, blind, session):
            raise LabelRefused("Blind review: the priority order is read from every reviewer's verdicts, and "
                               "others have labelled items you have not; showing the queue order.")
        return order

    def visible_conflicts(self, reviewer: str, items: list[dict[str, Any]], blind: bool) -> list[dict[str, Any]]:
        """Conflicts (reviewer.services.conflicts.conflict_queue) as `reviewer` may see them: only those
        whose labels `sees_others` lets them see (`hidden`: False; `n_labels`: how many labels). While
        blind, an item the reviewer has not labelled is left out altogether: that it is disputed, and by
        how many, is derived from the others' labels."""
        return [{**item, "hidden": False, "n_labels": len(item.get("labels") or [])} for item in items
                if self.sees_others(reviewer, item.get("labels") or [], blind)]

    def conflict_page(self, reviewer: str, blind: bool, *, session: str | None = None, offset: int = 0,
                      limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """(a page of the conflicts `reviewer` may see, oldest first; how many they may see): while blind,
        those on which they have a current label of their own (the store's reading of `sees_others`,
        store.reviews.labelled_by), paged and counted among themselves, then checked by `visible_conflicts`."""
        from reviewer.services.conflicts import conflict_page

        found, total = conflict_page(self.store, session=session, offset=offset, limit=limit,
                                     labelled_by=reviewer if blind else None)
        return self.visible_conflicts(reviewer, found, blind), total

    # ---- reading: the Stats tab under blind review ---------------------------------------------
    def visible_stats(self, reviewer: str, data: dict[str, Any], blind: bool,
                      session: str | None = None) -> dict[str, Any]:
        """The reviewers' statistics (reviewer.services.stats.review_stats, computed once for everyone) as
        `reviewer` may see them; `blind_note` says what is left out (None when nothing is). While blind a
        figure that moves with another reviewer's label on an item the reviewer has not labelled is not
        shown: score distributions are the reviewer's own (and the LLM judges'); a pair's Spearman or
        kappa only for pairs that include the reviewer (counted on the items both labelled, where
        `sees_others` holds); the accuracy per task and by credibility from the reviewer's own verdicts
        (reviewer.services.conflicts.own_evaluation_frame, one read of their verdicts). Where nothing would be
        hidden (`sees_team_figures`: no one else labelled an item they have not), everyone's figures as they are;
        while blind, the failure modes of the steps are counted from the reviewer's own step judgments, and the
        judges are held against the reviewer's own scores."""
        if blind and "failure_modes" in data:
            from reviewer.services.stats import failure_modes, judge_report

            name = unicodedata.normalize("NFC", (reviewer or "").strip())
            data = {**data, "failure_modes": failure_modes(self.store.step_judgments.failure_mode_counts(session, name)),
                    "judges": judge_report(self.store, session, people=[name])}
        if self.sees_team_figures(reviewer, blind, session):
            return {**data, "blind_note": None}
        import pandas as pd

        from reviewer.services import stats
        from reviewer.services.conflicts import own_evaluation_frame

        dists = {rater: d for rater, d in data["distributions"].items()
                 if d.get("rater_kind") == "llm" or self.sees_reviewer(reviewer, rater, blind)}
        judges = {rater for rater, d in data["distributions"].items() if d.get("rater_kind") == "llm"}

        def pairs(frame, who: str, judged: bool):
            if frame is None or frame.empty:
                return frame
            a, b = frame[f"{who}_a"].astype(str), frame[f"{who}_b"].astype(str)
            pair_seen = [(self.sees_others(reviewer, [{"reviewer": x}, {"reviewer": y}], blind)
                          or (judged and x in judges and y in judges)) for x, y in zip(a, b, strict=True)]
            kept = frame[pair_seen]
            return kept[kept["n_shared"] > 0].reset_index(drop=True)

        own = own_evaluation_frame(self.store, reviewer, session)
        return {**data, "distributions": dists,
                "correlations": pairs(data["correlations"], "rater", True),
                "kappas": pairs(data["kappas"], "reviewer", False),
                "scores": stats.task_scores(own) if not own.empty else pd.DataFrame(),
                "coverage": stats.accuracy_vs_coverage(own[own["task"] == "verify"]) if not own.empty
                else pd.DataFrame(),
                "blind_note": BLIND_STATS_NOTE}

    def sees_team_figures(self, reviewer: str, blind: bool, session: str | None = None) -> bool:
        """Whether figures read from every item's labels whoever gave them (the reviewers' statistics of the
        session's scope; with `session` None the whole store's, as the triage's calibration and abstention:
        accuracy by priority, labelled and unreviewed counts, fitted weights) may be shown to `reviewer` as
        they are: when not blind, or when `sees_others` holds on every item holding labels they are read
        from, i.e. nobody else has a current verdict, score or resolution on a trajectory where the reviewer
        has no label of that kind (store.reviews.others_label_unlabelled, one query of the counts kept on
        write): they then hold nothing of others that the reviewer may not see (a reviewer alone, or one who
        labelled whatever the others did). Otherwise the blind view (`visible_stats`; the triage withheld)."""
        if not blind:
            return True
        name = unicodedata.normalize("NFC", (reviewer or "").strip())
        return not self.store.reviews.others_label_unlabelled(name, session)
