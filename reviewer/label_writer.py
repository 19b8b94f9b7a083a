"""Writing labels from a page: the draft verdict being composed, and the controller that writes every
label kind through `LabelService` for the item on screen and says what was stored.

The controller reads the review state (who, which campaign, which item and step) and never keeps a
copy of it: a label is always written for `state.item`, so what is shown and what is labelled cannot
drift apart.
"""
from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import param

import kb
from agents import settings
from agents.trajectory import Trajectory
from reviewer.services.labels import VET_ANSWERS, Ack, LabelRefused, NameRefused
from reviewer.store import WRITE_FAILURES

# The review state is passed in, not imported (it imports this module): `ReviewState` below names
# reviewer.review_state.ReviewState, whose item, step, reviewer, campaign and draft the writer reads.
ReviewState = param.Parameterized

log = logging.getLogger(__name__)
write_log = logging.getLogger("specreview.writes")
LOG_WRITES = settings.LOG_WRITES.flag(False)
if LOG_WRITES and not write_log.handlers:
    write_log.setLevel(logging.INFO)
    write_log.addHandler(logging.StreamHandler())
    write_log.propagate = False  # once, not again through the server's root handler


class Draft(param.Parameterized):
    """The verdict being composed: the corrected label an override would save (a yes/no task's answer, or
    a verify item's class and z: each field its own parameter, bound to its widget), and its comment."""

    answer = param.Selector(default=None, objects=[None, *VET_ANSWERS], doc="a yes/no task's corrected answer")
    type = param.String(default=None, allow_None=True, doc="a verify item's corrected class")
    z = param.Number(default=None, allow_None=True, doc="a verify item's corrected redshift")
    comment = param.String(default="", doc="comment saved with the next verdict")

    @property
    def label(self) -> dict[str, Any]:
        """The corrected label as stored: the fields set ({} when none is)."""
        return {name: value for name in LABEL_FIELDS if (value := getattr(self, name)) is not None}

    @label.setter
    def label(self, label: dict[str, Any] | None) -> None:
        self.param.update(**{name: (label or {}).get(name) for name in LABEL_FIELDS})

    def start(self, label: dict[str, Any]) -> None:
        """Afresh, from `label` (an item's default correction): nothing typed for one verdict stays for the next."""
        self.param.update(comment="", **{name: label.get(name) for name in LABEL_FIELDS})


LABEL_FIELDS = ("answer", "type", "z")


# ---- the label kinds: what `LabelWriter.save` writes, as data -------------------------------------
@dataclass(frozen=True)
class LabelKind:
    """One kind of label the page writes: what must be open for it, how its label service call is made
    from the state and the fields, what its acknowledgement names and what changes with it."""

    # "trajectory": a reviewable item (else refused with the item's reason); "step": that and a step on
    # it; "item": anything open; "nothing": the label names its own subject (a conflict row)
    needs: str
    write: Callable[..., Ack]  # (state, the item's trajectory or None, **fields) -> the stored label's Ack
    requires: tuple[str, ...] = ()  # fields that must be non-empty: without one there is no choice to store yet
    subject: Callable[..., str] | None = None  # (state, **fields) -> what the Ack names; None: the item on screen
    verdict: bool = False  # a verdict: what `u` withdraws, and the form starts afresh after it
    reveals: bool = False  # a first look: the item is shown whole after it


def _score(state: ReviewState, traj: Trajectory, score: int) -> Ack:
    # a score is stored with the rubric version it was given under
    version = str(kb.load("rubrics")["reasoning"]["version"])
    return state.labels.write_score(state.reviewer, traj.id, int(score), version, state.campaign)


def _conflict_subject(_state, item: dict, **_fields) -> str:
    """A conflict is resolved from the Conflicts list, not the item on screen: the Ack names its row."""
    return " · ".join(str(v) for v in (item.get("object_id") or item.get("item_id"), item.get("task")) if v)


def _first_look(state: ReviewState, _traj, label: dict) -> Ack:
    """The reviewer's own answer on the item shown masked (ReviewState.unrevealed), before the agent's."""
    if state.unrevealed is None:
        raise LabelRefused("Your first look on this item is recorded: the agent's answer is shown; give your verdict.")
    return state.labels.write_first_look(state.reviewer, state.unrevealed.trajectory, label, state.campaign,
                                         state.activity.seconds_on_item())


LABEL_KINDS: dict[str, LabelKind] = {
    "verdict": LabelKind("trajectory", lambda s, traj, action: s.labels.write_verdict(
        s.reviewer, traj, action, label=s.draft.label if action == "override" else None,
        comment=s.draft.comment or None, campaign=s.campaign, active_s=s.activity.seconds_on_item()), verdict=True),
    "first_look": LabelKind("nothing", _first_look, reveals=True,
                            subject=lambda s, **_: s.item.subject if s.item is not None else ""),
    "score": LabelKind("trajectory", _score),
    "note": LabelKind("trajectory", lambda s, traj, comment, flags, whole_trajectory=False: s.labels.write_note(
        s.reviewer, traj.id, None if whole_trajectory else s.step_index, comment, flags, s.campaign)),
    # confirm or dismiss the checker's flag on one of the item's contradicted claims
    "claim_flag": LabelKind("trajectory", lambda s, traj, claim, decision: s.labels.write_claim_flag(
        s.reviewer, traj.id, claim["step_idx"], claim["claim_idx"], claim["checker_version"], decision, s.campaign)),
    # a VI is on the spectrum: a spectrum without a trajectory takes one too
    "vi": LabelKind("item", lambda s, _traj, **vi: s.labels.write_vi(s.reviewer, s.item.spectrum_id, s.campaign, **vi)),
    "preference": LabelKind("trajectory", lambda s, traj, other_id, outcome: s.labels.write_preference(
        s.reviewer, traj.id, other_id, outcome, s.item.spectrum_id, s.campaign), requires=("other_id",)),
    "resolution": LabelKind("nothing", lambda s, _traj, item, action, label, comment: s.labels.write_resolution(
        s.reviewer, item, action, label, comment, s.campaign, blind=s.blind), subject=_conflict_subject),
    "revision": LabelKind("step", lambda s, traj, text, tool_args, comment: s.labels.write_revision(
        s.reviewer, traj, s.step, text, tool_args, s.item.spectrum, comment, s.campaign)),
    "curation_event": LabelKind("trajectory", lambda s, traj, event, value, comment: s.labels.write_curation_event(
        s.reviewer, traj.id, event, value, comment, s.campaign)),
    # correct / partly / incorrect on the step on screen, with failure-mode tags (issue 47, item 4)
    "step_judgment": LabelKind("step", lambda s, traj, judgment, tags=(): s.labels.write_step_judgment(
        s.reviewer, traj.id, s.step_index, judgment, tags, campaign=s.campaign)),
}


class LabelWriter(param.Parameterized):
    """Writes the page's labels for the item on screen (LABEL_KINDS through `LabelService`), refused with
    the reason on the page or stored and acknowledged; undoes this session's verdicts."""

    ack = param.ClassSelector(class_=Ack, default=None, allow_None=True,
                              doc="the last stored label (a new object at every store: views re-read on it)")
    undoable = param.ClassSelector(class_=Ack, default=None, allow_None=True,
                                   doc="the verdict `u` withdraws: my last one in this session on the item on screen")

    def __init__(self, state: ReviewState, **params):
        super().__init__(**params)
        self.state = state
        self._verdicts: list[Ack] = []  # this session's verdicts, newest last (for undo)
        self.stored = 0  # labels stored in this session (the acknowledgement numbers them)

    def undoable_on(self, trajectory_id: str | None) -> Ack | None:
        return next((a for a in reversed(self._verdicts)
                     if trajectory_id is not None and a.trajectory_id == trajectory_id), None)

    def _cleared_form(self) -> None:
        """The verdict form as a new item starts it: what a save or an undo leaves (nothing typed for one
        verdict is stored with the next)."""
        item = self.state.item
        self.state.draft.start(item.default_draft() if item is not None else {})

    def _attempt(self, write, subject: str | None = None, after=None) -> Ack | None:
        """One label write through the label service: refused with the reason shown, or stored and
        acknowledged (only after the store returned), naming the item it is on (`subject`, by default
        the item on screen); `after(ack)`: what changes with the acknowledgement (its return: the
        writer's parameters set in the same update as `ack`).
        With SPECREVIEW_LOG_WRITES=1 the write's latency (rules, store, consensus update) goes to the
        server log; bench/bench_labels.py reads it."""
        state = self.state
        refusal = state.identity_refusal()
        if refusal:
            state.error = refusal
            return None
        start = time.perf_counter()
        try:
            ack = write()
        except NameRefused as err:
            state.name_problems.add(str(err))
            state.error = str(err)
            return None
        except LabelRefused as err:
            state.error = str(err)
            return None
        except WRITE_FAILURES as err:  # not stored (read-only, disk full, closed)
            log.exception("a label write failed")
            self.ack = None
            # the exception's text can name server paths: the page gets its kind only, the log the rest
            state.error = (f"NOT SAVED: the database refused the write ({type(err).__name__}). Nothing was "
                           "stored; what you chose is still on screen: try again, and tell whoever runs the "
                           "server if it repeats.")
            return None
        if LOG_WRITES:
            write_log.info("label-write-ms %.3f %s", 1000 * (time.perf_counter() - start), ack.kind)
        item = state.item
        if subject is None and item is not None:
            if ack.trajectory_id is not None and ack.trajectory_id == item.trajectory_id:
                subject = item.subject
            elif ack.trajectory_id is None:  # a label on the spectrum (VI)
                subject = str(item.record.get("object_id") or item.spectrum_id)
        ack = replace(ack, subject=subject) if subject else ack
        state.error = ""
        self.stored += 1
        self.param.update(ack=ack, **(after(ack) if after is not None else {}))
        return ack

    def _verdict_saved(self, ack: Ack) -> dict[str, Any]:
        """A verdict is what `u` withdraws, and the form starts afresh after it."""
        self._verdicts.append(ack)
        self.state.own_verdict_seen()
        self._cleared_form()
        return {"undoable": ack}

    def save(self, kind: str, /, **fields) -> Ack | None:
        """Write one label of `kind` (a key of LABEL_KINDS; `fields` are its writer's keywords) for the item
        on screen, through `_attempt`. Refused with the item's reason when it needs a trajectory and none
        is open; nothing written, and nothing said, when a form has nothing chosen yet (no step, no item,
        a required field empty)."""
        spec = LABEL_KINDS.get(kind)
        if spec is None:
            raise ValueError(f"Unknown label kind {kind!r}: the kinds are {', '.join(LABEL_KINDS)}.")
        state = self.state
        traj = state.item.trajectory if state.item is not None else None
        # a field the kind does not take is a caller's mistake: a TypeError now, whatever is open
        inspect.signature(spec.write).bind(state, traj, **fields)
        if spec.needs in ("trajectory", "step") and traj is None:
            state.error = state.item.why_not_reviewable if state.item is not None else "Open an item first."
            return None
        if ((spec.needs == "step" and state.step is None) or (spec.needs == "item" and state.item is None)
                or not all(fields.get(name) for name in spec.requires)):
            return None
        return self._attempt(partial(spec.write, state, traj, **fields),
                             subject=spec.subject(state, **fields) if spec.subject is not None else None,
                             after=self._verdict_saved if spec.verdict else self._revealed if spec.reveals else None)

    def _revealed(self, _ack: Ack) -> dict[str, Any]:
        self.state.reveal()
        return {}

    def undo(self) -> Ack | None:
        """Undo my last verdict in this session on the item on screen (never one on another item): a new
        row restoring the one before. The acknowledgement names the item and the verdict withdrawn.
        Not a kind of `save`: it writes no new label, it takes back one this session saved."""
        state = self.state
        if state.item is None or state.item.trajectory is None:
            state.error = "Nothing to undo: open an item first."
            return None
        last = self.undoable_on(state.item.trajectory_id)
        if last is None:
            state.error = (f"Nothing to undo on {state.item.subject}: you saved no verdict on this item in this "
                           "session (`u` acts on the item on screen only).")
            return None
        def undone(_ack: Ack) -> dict[str, Any]:
            self._verdicts.remove(last)
            self._cleared_form()
            return {"undoable": self.undoable_on(state.item.trajectory_id)}

        return self._attempt(lambda: state.labels.undo_verdict(state.reviewer, last, state.campaign), after=undone)
