"""One review state per browser session: who reviews, in which campaign, which item, which step, in
which frame, the draft label and the last acknowledgement. No widgets: components bind to it.

The item on screen is one object (`ReviewItem`: the spectrum record, the spectrum and its
trajectory together), replaced whole by `open_item`, the only way to open anything. A label is
always written for `item`, so what is shown and what is labelled cannot drift apart.
"""
from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import param

import kb
from agents import settings
from agents.spectra import SpectrumReadError
from agents.trajectory import Trajectory
from agents.verify.evaluation import C_KMS
from reviewer.queue_filters import DEFAULT_ORDER, ORDERS, QueueFilters
from reviewer.services import items
from reviewer.services.consensus import agent_label, labels_agree
from reviewer.services.labels import Ack, LabelRefused, LabelService, NameRefused, check_name, default_correction
from reviewer.services.listing import QueueListing, SpectraListing
from reviewer.services.messages import without_paths
from reviewer.services.renders import prefetch_renders, render_in_view
from reviewer.services.spectra_cache import load_spectrum, read_ahead
from reviewer.store import WRITE_FAILURES

log = logging.getLogger(__name__)
write_log = logging.getLogger("specreview.writes")
LOG_WRITES = settings.LOG_WRITES.flag(False)
if LOG_WRITES and not write_log.handlers:
    write_log.setLevel(logging.INFO)
    write_log.addHandler(logging.StreamHandler())
    write_log.propagate = False  # once, not again through the server's root handler


@dataclass(frozen=True)
class ReviewItem:
    """What is on screen: a spectrum, and the trajectory on it that is being reviewed (if any)."""

    record: dict[str, Any]
    spectrum: Any = None
    trajectory: Trajectory | None = None
    agent_label: dict[str, Any] = field(default_factory=dict)
    claims: tuple = ()  # the claim checker's stored results on the trajectory (agents.claims.ClaimResult)

    @property
    def spectrum_id(self) -> str:
        return self.record["spectrum_id"]

    @property
    def trajectory_id(self) -> str | None:
        return self.trajectory.id if self.trajectory is not None else None

    @property
    def why_not_reviewable(self) -> str:
        return "" if self.trajectory is not None else (
            "No agent trajectory on this spectrum: there is nothing to approve or override. "
            "Run an agent on it (`specreview vet` / `verify`), or open an item from the queue.")

    @property
    def subject(self) -> str:
        """The item as a reviewer names it: the object id and the task (one object has several tasks)."""
        obj = self.record.get("object_id") or self.spectrum_id
        return f"{obj} · {self.trajectory.task}" if self.trajectory is not None else str(obj)

    def default_draft(self) -> dict[str, Any]:
        """The corrected label an override starts from (reviewer.services.labels.default_correction)."""
        return default_correction(self.trajectory.task, self.agent_label) if self.trajectory is not None else {}

    def frame_z(self) -> float:
        """The redshift for the rest frame: the agent's answer for a verify item, else the pipeline's."""
        if self.agent_label.get("z") is not None:
            return float(self.agent_label["z"])
        z = self.record.get("pipeline_z")
        return float(z) if z is not None else 0.0


# ---- the label kinds: what `ReviewState.save` writes, as data ------------------------------------
@dataclass(frozen=True)
class LabelKind:
    """One kind of label the page writes: what must be open for it, how its label service call is made
    from the state and the fields, what its acknowledgement names and what changes with it."""

    # "trajectory": a reviewable item (else refused with the item's reason); "step": that and a step on
    # it; "item": anything open; "nothing": the label names its own subject (a conflict row)
    needs: str
    write: Callable[..., Ack]  # (state, the item's trajectory or None, **fields) -> the stored label's Ack
    requires: tuple[str, ...] = ()  # fields that must be non-empty: without one there is no choice to store yet
    subject: Callable[..., str] | None = None  # (**fields) -> what the Ack names; None: the item on screen
    after: Callable[..., dict[str, Any]] | None = None  # (state, ack) -> state changes made with the Ack


def _verdict_saved(state: ReviewState, ack: Ack) -> dict[str, Any]:
    """A verdict is what `u` withdraws, and the form starts afresh after it."""
    state._acks.append(ack)
    state._own_verdict_seen()
    return {**state._cleared_form(), "undoable": ack}


def _score(state: ReviewState, traj: Trajectory, score: int) -> Ack:
    # a score is stored with the rubric version it was given under
    version = str(kb.load("rubrics")["reasoning"]["version"])
    return state.labels.write_score(state.reviewer, traj.id, int(score), version, state.campaign)


def _conflict_subject(item: dict, **_fields) -> str:
    """A conflict is resolved from the Conflicts list, not the item on screen: the Ack names its row."""
    return " · ".join(str(v) for v in (item.get("object_id") or item.get("item_id"), item.get("task")) if v)


LABEL_KINDS: dict[str, LabelKind] = {
    "verdict": LabelKind("trajectory", lambda s, traj, action: s.labels.write_verdict(
        s.reviewer, traj, action, label=s.draft if action == "override" else None, comment=s.comment or None,
        campaign=s.campaign), after=_verdict_saved),
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
}


class ReviewState(param.Parameterized):
    reviewer = param.String(default="", doc="who is reviewing (login, ?reviewer= or typed once)")
    login = param.Boolean(default=False, doc="the name is the server's authenticated user: it cannot change")
    campaign = param.Dict(default=None, allow_None=True, doc="the audit campaign this session works in")
    blind = param.Boolean(default=True, doc="hide other reviewers' verdicts until mine is saved")
    item = param.ClassSelector(class_=ReviewItem, default=None, allow_None=True)
    step_index = param.Integer(default=0, bounds=(0, None))
    rest_frame = param.Boolean(default=False, doc="wavelengths divided by (1+z)")
    z = param.Number(default=0.0, bounds=(-0.01, 12), doc="redshift of the rest frame and the line markers")
    draft = param.Dict(default={}, doc="the corrected label an override would save")
    comment = param.String(default="", doc="comment saved with the next verdict")
    filters = param.ClassSelector(class_=QueueFilters, doc="the queue's filters (one object: the "
                                  "queue's widgets, `n` / `b` and the read-ahead all read it)")
    ack = param.ClassSelector(class_=Ack, default=None, allow_None=True, doc="the last stored label")
    error = param.String(default="", doc="the last problem, shown in the page (the app keeps serving)")
    labels_version = param.Integer(default=0, doc="bumped after every stored label: views re-read")
    labels_seen = param.Integer(default=0, doc="the store's newest verdict row (anyone's, from anywhere) last "
                                               "seen by `poll_store`: views of others' labels re-read when it moves")
    store_mark = param.Tuple(default=(0, 0, 0), length=3, doc="the store's (spectra, trajectories, newest verdict) "
                             "last seen by `poll_store`: the lists re-read their page when it moves")
    undoable = param.ClassSelector(class_=Ack, default=None, allow_None=True,
                                   doc="the verdict `u` withdraws: my last one in this session on the item on screen")
    show_help = param.Boolean(default=False)
    main_tab = param.String(default=None, allow_None=True,
                            doc="the main area's tab on screen (review, transcript, conflicts, curation, stats; None "
                                "outside the page's tabs): a hidden view re-reads when it is shown")
    position = param.Integer(default=None, allow_None=True, doc="the item's place in the filtered queue, when known")
    candidate = param.Dict(default=None, allow_None=True,
                           doc="the redshift candidate the reviewer chose (reviewer.services.candidates): its z sets the frame, "
                               "its class and z the model overlay")
    overlays = param.List(default=[], doc="[(spectrum_id, colour)]: other spectra of the item's object drawn over "
                                          "the plot, normalised to it (the Same-object panel chooses them)")
    focus_window = param.Tuple(default=None, length=2, allow_None=True,
                               doc="a window to shade instead of the agent's zoom (a claim's measured region)")
    follow_zoom = param.Boolean(default=True, doc="the plot's x range follows the agent's zoom at each step "
                                "(the reviewer's choice, kept from item to item)")
    hidden_arms = param.List(default=[], doc="spectrograph arms not drawn (DESI B/R/Z, LAMOST MRS B/R): the "
                                             "reviewer's choice, kept from item to item as prospect keeps it")

    def __init__(self, store, login_holds=None, **params):
        params.setdefault("filters", QueueFilters())
        super().__init__(**params)
        self.store = store
        self.labels = LabelService(store)
        self.queue, self.spectra = QueueListing(store), SpectraListing(store)
        self._acks: list[Ack] = []  # this session's verdicts, newest last (for undo)
        # under a login the reviewer is the login, fixed when the session starts: nothing the page
        # sends can label under another name
        self._login_name = self.reviewer if self.login else None
        # whether that login still holds (layouts.identity): asked before each write, so a login that
        # expires or is ended by a logout while the page is open saves nothing more
        self.login_holds = login_holds
        self.name_problems: set[str] = set()  # messages about the name: stale once a valid name is given
        self.store_mark = self.queue.content_mark()
        self.labels_seen = self.store_mark[2]
        # before any view's watcher: a refused "Reviewed by" is cleared before a list reads it
        self.filters.param.watch(self._check_reviewed_by, "reviewed_by")
        self.filters.param.watch(self._check_order, "sort")
        self.param.watch(self._check_reviewed_by, ["reviewer", "blind"])

    @param.depends("reviewer", watch=True)
    def _name_given(self):
        """A message about a missing or refused name is stale once a valid name is given."""
        try:
            check_name(self.reviewer)
        except LabelRefused:
            return
        error = self.error
        for problem in self.name_problems:
            error = error.replace(problem, "")
        if error != self.error:
            self.error = " ".join(error.split())

    # ---- scope ----------------------------------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        return self.campaign["id"] if self.campaign else None

    def queue_args(self) -> dict[str, Any]:
        args = {**self.filters.store_args(), "session_id": self.session_id, "blind": self.blind}
        try:  # blind review: "Reviewed by" someone else is refused (`_check_reviewed_by` says so and clears it)
            args["reviewed_by"] = self.labels.check_reviewed_by(self.reviewer, args["reviewed_by"], self.blind)
        except LabelRefused:
            args["reviewed_by"] = None
        try:  # and the priority order while it would move with others' hidden labels (`_check_order`)
            args["order"] = self.labels.check_order(self.reviewer, args["order"], self.blind, self.session_id)
        except LabelRefused:
            args["order"] = "default"
        return args

    def _check_order(self, *_) -> None:
        """The queue's order under the blind rule (LabelService.check_order): a refused order is set back
        to the queue order, and the page says why."""
        try:
            self.labels.check_order(self.reviewer, ORDERS[self.filters.sort], self.blind, self.session_id)
        except LabelRefused as err:
            self.error = str(err)
            self.filters.sort = DEFAULT_ORDER

    def _check_reviewed_by(self, *_) -> None:
        """The "Reviewed by" filter under the blind rule (LabelService.check_reviewed_by): a refused name is
        cleared from the filter, and the page says why."""
        try:
            self.labels.check_reviewed_by(self.reviewer, self.filters.reviewed_by, self.blind)
        except LabelRefused as err:
            self.error = str(err)
            self.filters.reviewed_by = ""

    def open_campaign(self, name_or_id: str) -> bool:
        campaign = items.find_campaign(self.store, name_or_id)
        if campaign is None:
            self.error = f"No audit campaign named '{name_or_id}'."
            return False
        self.param.update(campaign=campaign, blind=bool(campaign["blind"]))
        return True

    # ---- opening an item: the one way ------------------------------------------------------------
    def open_item(self, trajectory_id: str | None = None, spectrum_id: str | None = None,
                  position: int | None = None) -> bool:
        """Open a trajectory (with its spectrum), or a spectrum (with its first trajectory in the queue's
        scope, if any). On bad input the previous item stays and the page says why."""
        traj = None
        if trajectory_id is not None:
            traj = items.trajectory(self.store, trajectory_id)
            if traj is None:
                self.error = f"Trajectory {trajectory_id} is not in the database."
                return False
            spectrum_id = traj.spectrum_id
        elif spectrum_id is not None:
            traj = items.first_trajectory_on(self.store, spectrum_id)
        record = items.record_of_spectrum(self.store, spectrum_id) if spectrum_id else None
        if record is None:
            self.error = f"Spectrum {spectrum_id} is not in the database."
            return False
        try:  # the stored hash: a file changed since ingest is refused (SpectrumChanged), never shown
            spec = load_spectrum(record["source_path"], record.get("target"), record.get("file_sha256"))
        except SpectrumReadError as err:  # names the file; a wrapped exception may add its folder: cut
            self.error = f"Cannot show this spectrum: {without_paths(str(err))}"
            return False
        except OSError as err:  # moved or unreadable file
            self.error = (f"Cannot show this spectrum: {Path(record['source_path']).name}: "
                          f"{without_paths(err.strerror or str(err))}")
            return False
        own = agent_label(traj.task, None, None, traj.outcome) if traj is not None else {}
        claims = items.stored_claims(self.store, traj.id) if traj is not None else ()
        item = ReviewItem(record=record, spectrum=spec, trajectory=traj, agent_label=own, claims=claims)
        # one update: every view sees the new item, its first step, its draft and frame together
        same_spectrum = self.item is not None and self.item.spectrum_id == item.spectrum_id
        self.param.update(item=item, step_index=0, draft=item.default_draft(), comment="", z=item.frame_z(),
                          error="", position=position, focus_window=None, candidate=None,
                          undoable=self._undoable_on(item), overlays=self.overlays if same_spectrum else [])
        self.queue.hold(item.trajectory_id, self.reviewer, self.session_id)  # a planned campaign reserves it (issue 47)
        prefetch_renders(self.store, item, lambda: self.item is item)
        self._next_read = self._read_next_spectrum()  # a Future: tests wait on it
        return True

    def overlay_spectra(self) -> list[tuple[dict[str, Any], Any, str]]:
        """(record, spectrum, colour) of each spectrum in `overlays` that can be read (one that cannot is
        left out, and the page says why)."""
        out = []
        for spectrum_id, colour in self.overlays:
            record = items.record_of_spectrum(self.store, spectrum_id)
            if record is None:
                continue
            try:
                spec = load_spectrum(record["source_path"], record.get("target"), record.get("file_sha256"))
            except (SpectrumReadError, OSError) as err:
                self.error = f"Cannot overlay {record.get('object_id') or spectrum_id}: {without_paths(str(err))}"
                continue
            out.append((record, spec, colour))
        return out

    def _read_next_spectrum(self):
        """The next queue item's spectrum, read into the cache in the background: `n` to a new spectrum
        then skips reading its file (most of the server's share of such a switch)."""
        item, reviewer, args = self.item, self.reviewer, self.queue_args()
        store, queue, current = self.store, self.queue, item.trajectory_id

        def locate():
            found = queue.neighbour(current, +1, reviewer, **args)
            return items.spectrum_file_of(store, found[0]) if found else None

        return read_ahead(locate, still_current=lambda: self.item is item and store.is_open)

    # ---- steps ----------------------------------------------------------------------------------
    @property
    def steps(self):
        traj = self.item.trajectory if self.item is not None else None
        return traj.steps if traj is not None else []

    @property
    def step(self):
        steps = self.steps
        return steps[self.step_index] if 0 <= self.step_index < len(steps) else None

    def go_to_step(self, index: int) -> None:
        if self.steps:
            self.param.update(step_index=max(0, min(int(index), len(self.steps) - 1)), focus_window=None)

    def claims(self) -> tuple:
        return self.item.claims if self.item is not None else ()

    def next_step(self) -> None:
        self.go_to_step(self.step_index + 1)

    def previous_step(self) -> None:
        self.go_to_step(self.step_index - 1)

    def zoom_window(self) -> tuple[float, float] | None:
        """The observed-frame window the agent was viewing at the current step (None: whole spectrum)."""
        traj = self.item.trajectory if self.item is not None else None
        return traj.zoom_at(self.step_index) if traj is not None else None

    def render(self) -> tuple[bytes | None, int | None]:
        """The render that goes with the current step, and the step it comes from (made now if needed)."""
        return render_in_view(self.store, self.item, self.step_index)

    # ---- the queue ------------------------------------------------------------------------------
    def step_item(self, delta: int) -> None:
        """n / b: the next or previous item of the filtered queue (server-side, every item reachable)."""
        current = self.item.trajectory_id if self.item is not None else None
        found = self.queue.neighbour(current, delta, self.reviewer, **self.queue_args())
        if found is not None and found[0] != current:
            self.open_item(trajectory_id=found[0], position=found[1])

    def open_first(self) -> bool:
        rows = self.queue.page(self.reviewer, 0, 1, **self.queue_args())
        if rows:
            return self.open_item(trajectory_id=rows[0]["trajectory_id"])
        spectra = self.spectra.page("", 0, 1)
        return bool(spectra) and self.open_item(spectrum_id=spectra[0]["spectrum_id"])

    # ---- labels written elsewhere ----------------------------------------------------------------
    def poll_store(self) -> bool:
        """Whether spectra, trajectories or verdicts were stored since the last look (by anyone: the
        CLI, another browser); if so `store_mark` (the lists) and `labels_seen` (Other reviewers) move.
        One small query; the page calls it every few seconds, never on a key press."""
        mark = self.queue.content_mark()
        if mark == self.store_mark:
            return False
        self.store_mark = mark
        if mark[2] != self.labels_seen:
            self.labels_seen = mark[2]
        return True

    def _own_verdict_seen(self) -> None:
        """After this page's verdict, when it is all that was stored since the page last looked: the mark taken
        as seen, quietly. The lists re-read with its acknowledgement already; the next poll would read them
        again for the same verdict (~150-300 ms of the page thread at 1M trajectories). Anything stored
        elsewhere meanwhile leaves the mark to the poll, as before."""
        seen, mark = self.store_mark, self.queue.content_mark()
        if mark[:2] == seen[:2] and self.queue.verdicts_after(seen[2]) == 1:
            with param.parameterized.discard_events(self):
                self.param.update(store_mark=mark, labels_seen=mark[2])

    # ---- writing labels -------------------------------------------------------------------------
    def _attempt(self, write, subject: str | None = None, after=None) -> Ack | None:
        """One label write through the label service: refused with the reason shown, or stored and
        acknowledged (only after the store returned), naming the item it is on (`subject`, by default
        the item on screen); `after(ack)`: the state changes that go with the acknowledgement (made in
        the same update).
        With SPECREVIEW_LOG_WRITES=1 the write's latency (rules, store, consensus update) goes to the
        server log; bench/bench_labels.py reads it."""
        if self._login_name is not None and self.reviewer != self._login_name:
            self.error = f"Labels in this session are saved as {self._login_name}, the login."
            return None
        if self.login_holds is not None and not self.login_holds():
            self.error = ("Your login has ended (it expired, or you logged out): nothing was saved. "
                          "Log in again (open /login).")
            return None
        start = time.perf_counter()
        try:
            ack = write()
        except NameRefused as err:
            self.name_problems.add(str(err))
            self.error = str(err)
            return None
        except LabelRefused as err:
            self.error = str(err)
            return None
        except WRITE_FAILURES as err:  # not stored (read-only, disk full, closed)
            log.exception("a label write failed")
            # the exception's text can name server paths: the page gets its kind only, the log the rest
            self.param.update(ack=None, error=(
                f"NOT SAVED: the database refused the write ({type(err).__name__}). Nothing was stored; "
                "what you chose is still on screen: try again, and tell whoever runs the server if it repeats."))
            return None
        if LOG_WRITES:
            write_log.info("label-write-ms %.3f %s", 1000 * (time.perf_counter() - start), ack.kind)
        if subject is None and self.item is not None:
            if ack.trajectory_id is not None and ack.trajectory_id == self.item.trajectory_id:
                subject = self.item.subject
            elif ack.trajectory_id is None:  # a label on the spectrum (VI)
                subject = str(self.item.record.get("object_id") or self.item.spectrum_id)
        ack = replace(ack, subject=subject) if subject else ack
        changes = after(ack) if after is not None else {}
        self.param.update(ack=ack, error="", labels_version=self.labels_version + 1, **changes)
        return ack

    def _reviewable(self):
        if self.item is None or self.item.trajectory is None:
            self.error = self.item.why_not_reviewable if self.item is not None else "Open an item first."
            return None
        return self.item.trajectory

    def _undoable_on(self, item: ReviewItem | None) -> Ack | None:
        tid = item.trajectory_id if item is not None else None
        return next((a for a in reversed(self._acks) if tid is not None and a.trajectory_id == tid), None)

    def _cleared_form(self) -> dict[str, Any]:
        """The verdict form as a new item starts it: what a save or an undo leaves (nothing typed for
        one verdict is stored with the next)."""
        return {"draft": self.item.default_draft() if self.item is not None else {}, "comment": ""}

    def save(self, kind: str, /, **fields) -> Ack | None:
        """Write one label of `kind` (a key of LABEL_KINDS; `fields` are its writer's keywords) for the item
        on screen, through `_attempt`. Refused with the item's reason when it needs a trajectory and none
        is open; nothing written, and nothing said, when a form has nothing chosen yet (no step, no item,
        a required field empty)."""
        spec = LABEL_KINDS.get(kind)
        if spec is None:
            raise ValueError(f"Unknown label kind {kind!r}: the kinds are {', '.join(LABEL_KINDS)}.")
        traj = self.item.trajectory if self.item is not None else None
        # a field the kind does not take is a caller's mistake: a TypeError now, whatever is open
        inspect.signature(spec.write).bind(self, traj, **fields)
        if spec.needs in ("trajectory", "step") and self._reviewable() is None:
            return None
        if ((spec.needs == "step" and self.step is None) or (spec.needs == "item" and self.item is None)
                or not all(fields.get(name) for name in spec.requires)):
            return None
        return self._attempt(lambda: spec.write(self, traj, **fields),
                             subject=spec.subject(**fields) if spec.subject is not None else None,
                             after=partial(spec.after, self) if spec.after is not None else None)

    def undo(self) -> Ack | None:
        """Undo my last verdict in this session on the item on screen (never one on another item): a new
        row restoring the one before. The acknowledgement names the item and the verdict withdrawn.
        Not a kind of `save`: it writes no new label, it takes back one this session saved (`_acks`)."""
        if self.item is None or self.item.trajectory is None:
            self.error = "Nothing to undo: open an item first."
            return None
        last = self._undoable_on(self.item)
        if last is None:
            self.error = (f"Nothing to undo on {self.item.subject}: you saved no verdict on this item in this "
                          "session (`u` acts on the item on screen only).")
            return None

        def undone(_ack: Ack) -> dict[str, Any]:
            self._acks.remove(last)
            return {**self._cleared_form(), "undoable": self._undoable_on(self.item)}

        return self._attempt(lambda: self.labels.undo_verdict(self.reviewer, last, self.campaign), after=undone)

    def choose_candidate(self, candidate: dict | None) -> None:
        """Take a redshift candidate (or a marked line's z) as the reviewer's: the frame follows its z,
        the plot draws its class's template; on a verify item the corrected label starts from it (unless it is
        the agent's own answer: then there is none yet). The agent's answer is never changed."""
        if candidate is None:
            self.candidate = None
            return
        z = float(candidate["z"])
        if not -0.01 <= z <= 12:
            self.error = f"z = {z:.5f} is outside -0.01 to 12: not taken."
            return
        update = {"candidate": dict(candidate), "z": z, "error": ""}
        if self.item is not None and self.item.trajectory is not None and self.item.trajectory.task == "verify":
            draft = {"type": candidate.get("class") or self.draft.get("type"), "z": z}
            # the agent's own answer, chosen, is no correction: the override goes on asking for one
            update["draft"] = {} if labels_agree(draft, self.item.agent_label) else draft
        self.param.update(**update)

    def nudge_z(self, dv_kms: float) -> None:
        """Shift the frame's z by a velocity (Marz's and prospect's z nudge): (1+z') = (1+z)(1 + dv/c). The
        result is the reviewer's candidate, as a marked line would be (on a verify item, the correction)."""
        z = (1.0 + float(self.z)) * (1.0 + dv_kms / C_KMS) - 1.0
        chosen = self.candidate or {}
        own = self.item.agent_label.get("type") if self.item is not None else None
        # the class the reviewer chose last (the form's, then the candidate's), else the agent's
        cls = (self.draft or {}).get("type") or chosen.get("class") or own
        self.choose_candidate({"key": f"nudged:{z:.6f}", "z": z, "class": cls,
                               "source": f"nudged {dv_kms:+.0f} km/s"})

    def toggle_help(self) -> None:
        self.show_help = not self.show_help
