"""One review state per browser session: who reviews, in which campaign, which item, which step, and
the page's last problem. Its parts have their own small states that views bind to: how the spectrum is
looked at (`frame`, reviewer.view_frame), the verdict being composed (`draft`) and the label controller
(`writer`, reviewer.label_writer). No widgets.

The item on screen is one object (`ReviewItem`: the spectrum record, the spectrum and its
trajectory together), replaced whole by `open_item`, the only way to open anything. A label is
always written for `item`, so what is shown and what is labelled cannot drift apart.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import param

from agents.spectra import SpectrumReadError
from agents.trajectory import Trajectory
from agents.verify.evaluation import C_KMS
from reviewer.activity import ActiveTime
from reviewer.label_writer import Draft, LabelWriter
from reviewer.queue_filters import DEFAULT_ORDER, ORDERS, QueueFilters
from reviewer.services import items
from reviewer.services.consensus import agent_label, labels_agree
from reviewer.services.labels import LabelRefused, LabelService, check_name, default_correction
from reviewer.services.listing import QueueListing, SpectraListing
from reviewer.services.messages import without_paths
from reviewer.services.renders import prefetch_renders, render_in_view
from reviewer.services.spectra_cache import load_spectrum, read_ahead
from reviewer.view_frame import Frame

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewItem:
    """What is on screen: a spectrum, and the trajectory on it that is being reviewed (if any)."""

    record: dict[str, Any]
    spectrum: Any = None
    trajectory: Trajectory | None = None
    agent_label: dict[str, Any] = field(default_factory=dict)
    claims: tuple = ()  # the claim checker's stored results on the trajectory (agents.claims.ClaimResult)
    first_look_task: str | None = None  # set on the spectrum alone, shown until the reviewer's first look (masked)

    @property
    def spectrum_id(self) -> str:
        return self.record["spectrum_id"]

    @property
    def trajectory_id(self) -> str | None:
        return self.trajectory.id if self.trajectory is not None else None

    @property
    def task(self) -> str | None:
        return self.trajectory.task if self.trajectory is not None else self.first_look_task

    def masked(self) -> ReviewItem:
        """The item as a first look shows it (issue 47, item 2): the spectrum and what was observed, without
        the agent's trajectory, answer and claims, and without the survey pipeline's labels (nor the header,
        which holds them)."""
        record = {k: v for k, v in self.record.items() if not k.startswith("pipeline_") and k != "header"}
        return ReviewItem(record=record, spectrum=self.spectrum, first_look_task=self.task)

    @property
    def why_not_reviewable(self) -> str:
        if self.first_look_task is not None:
            how = ("your class (and z) below the buttons, then 'Record my first look'" if self.first_look_task == "verify"
                   else "YES or NO below (Shift+Y / Shift+N)")
            return (f"First look: give your own answer first ({how}). The agent's answer, its steps and the "
                    "pipeline's labels are shown once it is recorded.")
        return "" if self.trajectory is not None else (
            "No agent trajectory on this spectrum: there is nothing to approve or override. "
            "Run an agent on it (`specreview vet` / `verify`), or open an item from the queue.")

    @property
    def subject(self) -> str:
        """The item as a reviewer names it: the object id and the task (one object has several tasks)."""
        obj = self.record.get("object_id") or self.spectrum_id
        return f"{obj} · {self.task}" if self.task is not None else str(obj)

    def default_draft(self) -> dict[str, Any]:
        """The corrected label an override starts from (reviewer.services.labels.default_correction)."""
        return default_correction(self.trajectory.task, self.agent_label) if self.trajectory is not None else {}

    def frame_z(self) -> float:
        """The redshift for the rest frame: the agent's answer for a verify item, else the pipeline's."""
        if self.agent_label.get("z") is not None:
            return float(self.agent_label["z"])
        z = self.record.get("pipeline_z")
        return float(z) if z is not None else 0.0


class ReviewState(param.Parameterized):
    reviewer = param.String(default="", doc="who is reviewing (login, ?reviewer= or typed once)")
    login = param.Boolean(default=False, doc="the name is the server's authenticated user: it cannot change")
    campaign = param.Dict(default=None, allow_None=True, doc="the audit campaign this session works in")
    blind = param.Boolean(default=True, doc="hide other reviewers' verdicts until mine is saved")
    item = param.ClassSelector(class_=ReviewItem, default=None, allow_None=True)
    step_index = param.Integer(default=0, bounds=(0, None))
    filters = param.ClassSelector(class_=QueueFilters, doc="the queue's filters (one object: the "
                                  "queue's widgets, `n` / `b` and the read-ahead all read it)")
    error = param.String(default="", doc="the last problem, shown in the page (the app keeps serving)")
    labels_seen = param.Integer(default=0, doc="the store's newest verdict row (anyone's, from anywhere) last "
                                               "seen by `poll_store`: views of others' labels re-read when it moves")
    store_mark = param.Tuple(default=(0, 0, 0), length=3, doc="the store's (spectra, trajectories, newest verdict) "
                             "last seen by `poll_store`: the lists re-read their page when it moves")
    show_help = param.Boolean(default=False)
    main_tab = param.String(default=None, allow_None=True,
                            doc="the main area's tab on screen (review, transcript, conflicts, curation, stats; None "
                                "outside the page's tabs): a hidden view re-reads when it is shown")
    position = param.Integer(default=None, allow_None=True, doc="the item's place in the filtered queue, when known")

    def __init__(self, store, login_holds=None, **params):
        params.setdefault("filters", QueueFilters())
        super().__init__(**params)
        self.store = store
        self.labels = LabelService(store)
        self.queue, self.spectra = QueueListing(store), SpectraListing(store)
        self.frame, self.draft, self.writer = Frame(), Draft(), LabelWriter(self)
        self.activity = ActiveTime()  # the page's active time (reported by its Keyboard), for time on item
        self.unrevealed: ReviewItem | None = None  # the item on screen, whole, while its first look is due
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
        claims = items.stored_claims(self.store, traj) if traj is not None else ()
        item = ReviewItem(record=record, spectrum=spec, trajectory=traj, agent_label=own, claims=claims)
        # a first-look campaign shows the spectrum alone until the reviewer's own answer (`reveal`)
        pending = traj is not None and self.first_look_campaign and \
            self.labels.my_first_look(self.reviewer, traj.id, self.campaign) is None
        self.unrevealed = item if pending else None
        self._show(item.masked() if pending else item, position)
        self.activity.start_item()
        self.queue.hold(item.trajectory_id, self.reviewer, self.session_id)  # a planned campaign reserves it (issue 47)
        prefetch_renders(self.store, item, lambda: self.on_item is item)
        self._next_read = self._read_next_spectrum()  # a Future: tests wait on it
        return True

    def _show(self, item: ReviewItem, position: int | None) -> None:
        same_spectrum = self.item is not None and self.item.spectrum_id == item.spectrum_id
        # one switch: the plot draws the new item once, in its frame (the frame's own watchers, deferred
        # to the end of the block, find the plot already showing it), with its first step and draft
        with param.parameterized.batch_call_watchers(self.frame), param.parameterized.batch_call_watchers(self.draft):
            self.frame.param.update(**self.frame.for_new_item(item.frame_z(), same_spectrum))
            self.draft.start(item.default_draft())
            self.param.update(item=item, step_index=0, error="", position=position)
        self.writer.undoable = self.writer.undoable_on(item.trajectory_id)

    @property
    def first_look_campaign(self) -> bool:
        """A campaign of first looks (issue 47, item 2): its lists (queue, curation board) never show the
        agents' answers or their evidence, and each item is masked until the reviewer's own answer."""
        return bool(self.campaign and self.campaign.get("first_look"))

    @property
    def on_item(self) -> ReviewItem | None:
        """The item the reviewer is on, whole (`item` is what the page shows: masked before a first look)."""
        return self.unrevealed or self.item

    def reveal(self) -> None:
        """After the reviewer's first look: the item whole (the agent's answer, steps, claims, the pipeline's
        labels), for their verdict."""
        if self.unrevealed is not None:
            item, self.unrevealed = self.unrevealed, None
            self._show(item, self.position)

    def overlay_spectra(self) -> list[tuple[dict[str, Any], Any, str]]:
        """(record, spectrum, colour) of each spectrum in `overlays` that can be read (one that cannot is
        left out, and the page says why)."""
        out = []
        for spectrum_id, colour in self.frame.overlays:
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
        item, reviewer, args = self.on_item, self.reviewer, self.queue_args()
        store, queue, current = self.store, self.queue, item.trajectory_id

        def locate():
            found = queue.neighbour(current, +1, reviewer, **args)
            return items.spectrum_file_of(store, found[0]) if found else None

        return read_ahead(locate, still_current=lambda: self.on_item is item and store.is_open)

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
            with param.parameterized.batch_call_watchers(self.frame):  # one step, one draw (see open_item)
                self.frame.focus_window = None
                self.step_index = max(0, min(int(index), len(self.steps) - 1))

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
        current = self.on_item.trajectory_id if self.on_item is not None else None
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

    def own_verdict_seen(self) -> None:
        """After this page's verdict, when it is all that was stored since the page last looked: the mark taken
        as seen, quietly. The lists re-read with its acknowledgement already; the next poll would read them
        again for the same verdict (~150-300 ms of the page thread at 1M trajectories). Anything stored
        elsewhere meanwhile leaves the mark to the poll, as before."""
        seen, mark = self.store_mark, self.queue.content_mark()
        if mark[:2] == seen[:2] and self.queue.verdicts_after(seen[2]) == 1:
            with param.parameterized.discard_events(self):
                self.param.update(store_mark=mark, labels_seen=mark[2])

    # ---- writing labels -------------------------------------------------------------------------
    def identity_refusal(self) -> str:
        """Why no label may be written under this session's name now ('' if one may): under a login the
        reviewer is the login, fixed when the session starts, and the login must still hold."""
        if self._login_name is not None and self.reviewer != self._login_name:
            return f"Labels in this session are saved as {self._login_name}, the login."
        if self.login_holds is not None and not self.login_holds():
            return ("Your login has ended (it expired, or you logged out): nothing was saved. "
                    "Log in again (open /login).")
        return ""

    def choose_candidate(self, candidate: dict | None) -> None:
        """Take a redshift candidate (or a marked line's z) as the reviewer's: the frame follows its z,
        the plot draws its class's template; on a verify item the corrected label starts from it (unless it is
        the agent's own answer: then there is none yet). The agent's answer is never changed."""
        if candidate is None:
            self.frame.candidate = None
            return
        z = float(candidate["z"])
        if not -0.01 <= z <= 12:
            self.error = f"z = {z:.5f} is outside -0.01 to 12: not taken."
            return
        self.error = ""
        if self.item is not None and self.item.trajectory is not None and self.item.trajectory.task == "verify":
            draft = {"type": candidate.get("class") or self.draft.label.get("type"), "z": z}
            # the agent's own answer, chosen, is no correction: the override goes on asking for one
            self.draft.label = {} if labels_agree(draft, self.item.agent_label) else draft
        self.frame.param.update(candidate=dict(candidate), z=z)

    def nudge_z(self, dv_kms: float) -> None:
        """Shift the frame's z by a velocity (Marz's and prospect's z nudge): (1+z') = (1+z)(1 + dv/c). The
        result is the reviewer's candidate, as a marked line would be (on a verify item, the correction)."""
        z = (1.0 + float(self.frame.z)) * (1.0 + dv_kms / C_KMS) - 1.0
        chosen = self.frame.candidate or {}
        own = self.item.agent_label.get("type") if self.item is not None else None
        # the class the reviewer chose last (the form's, then the candidate's), else the agent's
        cls = (self.draft.label or {}).get("type") or chosen.get("class") or own
        self.choose_candidate({"key": f"nudged:{z:.6f}", "z": z, "class": cls,
                               "source": f"nudged {dv_kms:+.0f} km/s"})

    def toggle_help(self) -> None:
        self.show_help = not self.show_help
