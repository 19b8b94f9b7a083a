"""AuditSession: the review workflow for one browser session.

It extends the viewer session with the queue, the trajectory player, the review / annotation / VI
forms and the keyboard, and writes every action to the store at once, tagged with the reviewer's
name. Labels are append-only: an action is a new row, the latest row wins.
"""
from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import panel as pn
import param

from agents.tools.render import render_png
from reviewer import stats
from reviewer.app import ReviewerSession
from reviewer.components.annotation_form import AnnotationForm
from reviewer.components.conflicts import ConflictQueue
from reviewer.components.curation_board import CurationBoard
from reviewer.components.keyboard import KEY_MAP, Keyboard
from reviewer.components.preference_form import PreferenceForm
from reviewer.components.queue import Queue
from reviewer.components.review_form import ReviewForm
from reviewer.components.safe_text import escape
from reviewer.components.stats_panel import StatsPanel
from reviewer.components.styles import STYLESHEETS
from reviewer.components.trajectory_player import TrajectoryPlayer
from reviewer.components.vi_form import VIForm

log = logging.getLogger(__name__)
write_log = logging.getLogger("specreview.writes")
_prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specreview-render")
LOG_WRITES = os.environ.get("SPECREVIEW_LOG_WRITES") == "1"
if LOG_WRITES and not write_log.handlers:
    write_log.setLevel(logging.INFO)
    write_log.addHandler(logging.StreamHandler())
    write_log.propagate = False  # once, not again through the server's root handler


# Tools whose calls show a window of the spectrum: Spec-o3's zoom tool and the FORMA graph's renders.
ZOOM_TOOLS = ("spectral_visualization_tool", "spectral_visualization", "render")


def zoom_window(args: dict | None) -> tuple[float, float] | None:
    """(min, max) of a zoom call: Spec-o3's `wavelength_range` or a render's `wave_min` / `wave_max`
    (None: the full spectrum, or no usable window)."""
    args = args or {}
    rng = args.get("wavelength_range")
    if isinstance(rng, (list, tuple)) and len(rng) == 2:
        return rng[0], rng[1]
    if args.get("wave_min") is not None and args.get("wave_max") is not None:
        return args["wave_min"], args["wave_max"]
    return None


def help_html() -> str:
    rows = "".join(f"<tr><th><kbd>{escape(k)}</kbd></th><td>{escape(v)}</td></tr>" for k, v in KEY_MAP)
    return ("<div class='sr-help'><h3>Keyboard</h3><table>" + rows + "</table>"
            "<p>Keys never fire while you type in a text field.</p></div>")


class AuditSession(ReviewerSession):
    reviewer = param.String(default="", doc="who is reviewing (auth user, ?reviewer=, or typed once)")
    trajectory_id = param.String(default=None, allow_None=True)
    session_id = param.String(default=None, allow_None=True, doc="an audit campaign, or None for the whole queue")
    blind = param.Boolean(default=True, doc="hide other reviewers' labels until mine is saved")
    ack = param.String(default="", doc="the last write acknowledged, as text")
    show_help = param.Boolean(default=False)

    def __init__(self, store, reviewer: str = "", **params):
        super().__init__(store, reviewer=reviewer, **params)
        self.trajectory = None
        self._images: dict = {}  # (trajectory id, step index) -> PNG bytes or None
        self._my_notes: dict | None = None  # step index -> this reviewer's current note on the item
        self.queue = Queue()
        self.player = TrajectoryPlayer(image_for=self.image_for)
        self.form = ReviewForm(save_review=self.save_review, save_rating=self.save_rating)
        self.annotation = AnnotationForm(save=self.save_annotation)
        self.vi = VIForm(save=self.save_vi)
        self.others = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["sr-others"])
        self.ack_pane = pn.pane.HTML("", css_classes=["sr-ack"], sizing_mode="stretch_width")
        self.help_pane = pn.pane.HTML(help_html(), visible=False, css_classes=["sr-help-pane"], stylesheets=STYLESHEETS)
        self.conflicts = ConflictQueue(resolve=self.resolve_conflict)
        self.stats_panel = StatsPanel(load=self.load_stats)
        self.curation = CurationBoard(revise=self.save_step_revision, curate=self.save_curation_event,
                                      open_item=lambda tid: setattr(self.queue, "selected_id", tid))
        self.preference = PreferenceForm(save=self.save_preference)
        self.campaign: dict | None = None  # the audit campaign this browser session works in, if any
        self.labels_written = 0
        self.keyboard = Keyboard()
        for key, action in {"n": lambda: self.queue.step(+1), "b": lambda: self.queue.step(-1),
                            "j": self.player.next, "k": self.player.previous, "a": self.form.approve,
                            "o": self.form.override, "r": self.form.reject, "?": self.toggle_help}.items():
            self.keyboard.on(key, action)
        for score in range(6):
            self.keyboard.on(str(score), lambda s=score: self.form.rate(s))
        self.queue.param.watch(self._on_queue_select, "selected_id")
        self.queue.param.watch(lambda _: self.refresh_queue(), ["task", "agent_name", "backend", "state",
                                                                "credibility", "disagreement", "reviewed_by"])
        self.player.param.watch(self._on_step, "step_index")
        self.param.watch(self._on_reviewer, "reviewer")
        self.param.watch(lambda e: setattr(self.help_pane, "visible", e.new), "show_help")
        self.param.watch(lambda e: setattr(self.ack_pane, "object", f"<span>{escape(e.new)}</span>"), "ack")
        choices = self.store.queue_choices()
        self.queue.set_choices(choices["tasks"], choices["backends"])
        self.refresh_queue()

    # ---- identity ---------------------------------------------------------------------------------
    def require_reviewer(self) -> bool:
        if not self.reviewer.strip():
            self.error = "Enter your name first: every label is saved under a reviewer's name."
            return False
        return True

    def _on_reviewer(self, _event=None) -> None:
        """A name typed at the prompt: show that reviewer's progress and labels."""
        self.error = ""
        self._my_notes = None
        self.refresh_queue()
        self._load_my_labels()

    # ---- queue and navigation ---------------------------------------------------------------------
    def refresh_queue(self) -> None:
        f = self.queue.filters()
        self.queue.items = self.store.queue_items(self.reviewer or None, session_id=self.session_id, **f)
        people = list(self.campaign["reviewers"]) if self.campaign else []
        if self.reviewer and self.reviewer not in people:
            people.insert(0, self.reviewer)
        lines = []
        for person in people:  # progress per reviewer (a campaign's assigned reviewers, and me)
            prog = self.store.queue_progress(person, session_id=self.session_id)
            lines.append(f"{person}: {prog['done']} / {prog['total']} reviewed")
        head = ""
        if self.campaign:
            closed = ", closed" if self.campaign["closed_at"] else ""
            head = f"Campaign {self.campaign['name']} ({self.campaign['mode']}{closed})\n"
        self.queue.progress = head + ("\n".join(lines) if lines else f"{len(self.queue.items)} items")

    def open_first_item(self) -> bool:
        if self.queue.items:
            self.queue.selected_id = self.queue.items[0]["trajectory_id"]
            return True
        return False

    def _on_queue_select(self, event):
        if event.new:
            self.open_trajectory(event.new)

    def open_trajectory(self, trajectory_id: str) -> bool:
        traj = self.store.load_trajectory(trajectory_id)
        if traj is None:
            self.error = f"Trajectory {trajectory_id} is not in the database."
            return False
        self.trajectory = traj
        self.trajectory_id = trajectory_id
        self._images = {}
        self._my_notes = None
        if traj.spectrum_id:
            self.open_spectrum(traj.spectrum_id)
        self._prefetch_images()
        self.form.clear()
        self.form.mode = "verify" if traj.task == "verify" else "vet"
        self.player.trajectory = traj
        self._load_my_labels()
        others = [r for r in self.store.list_trajectories(spectrum_id=traj.spectrum_id) if r["id"] != traj.id] \
            if traj.spectrum_id else []
        self.preference.set_candidates(others, prefer_task=traj.task)
        if self.queue.selected_id != trajectory_id:
            self.queue.selected_id = trajectory_id
        return True

    def _on_step(self, event=None):
        step = self.player.current
        self.curation.load_step(step)
        self.annotation.step_index = None if step is None else step.index
        self._load_my_annotation()
        rng = self._current_zoom(step)
        z = float((self.player.trajectory.steps[0].data.get("tool_state") or {}).get("redshift") or 0.0) \
            if (self.player.trajectory and self.player.trajectory.steps) else 0.0
        shaded = []
        if isinstance(rng, (list, tuple)) and len(rng) == 2:
            try:  # tool ranges are rest-frame when the tool had a redshift: shade in the observed frame
                shaded = [(float(rng[0]) * (1 + z), float(rng[1]) * (1 + z))]
            except (TypeError, ValueError):
                shaded = []
        if shaded != self.plot.shaded_ranges:  # most steps keep the previous zoom: no redraw
            self.plot.shaded_ranges = shaded

    def _current_zoom(self, step):
        """The zoom in force at this step: the window of the latest zoom call at or before it (a
        reasoning or measuring step keeps the previous zoom on screen, as the agent had it)."""
        if step is None or self.trajectory is None:
            return None
        for earlier in reversed(self.trajectory.steps[: step.index + 1]):
            if earlier.kind in ("tool_call", "tool_result") and earlier.tool_name in ZOOM_TOOLS:
                return zoom_window(earlier.tool_args)
            if earlier.kind == "prompt":
                return None
        return None

    # ---- images -------------------------------------------------------------------------------------
    def _prefetch_images(self) -> None:
        """Render a newly opened trajectory's deferred images in the background, so that stepping
        through it serves cached PNGs instead of rendering on the key press."""
        traj = self.trajectory
        if traj is None:
            return
        steps = [s for s in traj.steps if s.kind in ("prompt", "tool_result") and not s.is_error]

        def work():
            for step in steps:
                if self.trajectory is not traj:  # the reviewer moved on
                    return
                self.image_for(step)

        _prefetcher.submit(work)

    def image_for(self, step) -> bytes | None:
        """The step's stored render, or the same render re-made from the spectrum and the call."""
        key = (self.trajectory.id if self.trajectory else None, step.index)
        if key in self._images:
            return self._images[key]
        png = self._make_image(step)
        self._images[key] = png
        return png

    def _make_image(self, step) -> bytes | None:
        if step.image_sha:
            png = self.store.get_image(step.image_sha)
            if png is not None:
                return png
        if step.is_error or self.trajectory is None or self.plot.spectrum is None:
            return None
        vet = self.trajectory.agent.name == "vet"
        if not ((step.kind == "prompt" and vet) or (step.kind == "tool_result" and step.tool_name in ZOOM_TOOLS)):
            return None
        spec = self.plot.spectrum
        try:  # the same render the agent saw, re-made from the spectrum and the recorded call
            if vet:
                from agents.vet.renders import render_step
                return render_step(self.trajectory, step, spec)
            lo, hi = zoom_window(step.tool_args) or (None, None)
            return render_png(spec, lo, hi, label=(step.tool_args or {}).get("label"))
        except Exception as err:  # a render that fails must not break the review
            log.warning("could not re-render step %s: %s", step.index, err)
            return None

    # ---- writes -------------------------------------------------------------------------------------
    def _write(self, what: str, method, *args, **kwargs) -> bool:
        """One label write: refused (with the reason shown) when there is no reviewer name or the
        campaign is closed; timed, and with SPECREVIEW_LOG_WRITES=1 its latency goes to the server
        log (bench/bench_labels.py reads it). Acknowledged only after the store returned."""
        if not self._writable():
            return False
        start = time.perf_counter()
        try:
            method(*args, session_id=self.session_id, **kwargs)
        except ValueError as err:  # a label the store refuses (e.g. an override without a label)
            self.error = str(err)
            return False
        if LOG_WRITES:
            write_log.info("label-write-ms %.3f %s", 1000 * (time.perf_counter() - start), method.__name__)
        self.labels_written += 1
        self.error = ""
        self.ack = (f"Saved {what} as {self.reviewer} at {datetime.now().strftime('%H:%M:%S')} "
                    f"(#{self.labels_written} this session)")
        return True

    def _writable(self) -> bool:
        if not self.require_reviewer():
            return False
        if self.session_id and self.store.get_session(self.session_id)["closed_at"] is not None:
            self.error = f"Campaign '{self.campaign['name']}' is closed: its labels are frozen."
            return False
        return True

    def save_review(self, action: str, label: dict | None, comment: str | None) -> None:
        if self.trajectory_id is None or not self._mode_allows("verdicts"):
            return
        if self._write(f"verdict '{action}'", self.store.add_review, self.trajectory_id, self.reviewer, action,
                       label=label, comment=comment):
            self._load_my_labels()
            self.refresh_queue()

    def save_rating(self, score: int) -> None:
        if self.trajectory_id is None:
            return
        if self._write(f"score {score}", self.store.add_rating, self.trajectory_id, self.reviewer, score,
                       self.form.rubric_version):
            self._load_my_labels()

    def save_annotation(self, step_index, comment, flags) -> None:
        if self.trajectory_id is None:
            return
        where = f" on step {step_index + 1}" if step_index is not None else ""
        if self._write("note" + where, self.store.add_annotation, self.trajectory_id, self.reviewer,
                       comment=comment, step_idx=step_index, flags=flags):
            self.annotation.status = "Saved."
            self._my_notes = None

    def save_vi(self, quality, issues, z, spectype, comment) -> None:
        if not self.record:
            return
        if self._write("VI label", self.store.add_vi_label, self.record["spectrum_id"], self.reviewer,
                       quality=quality, issues=issues, z=z, spectype=spectype, comment=comment):
            self.vi.status = "Saved."

    def save_preference(self, other_id: str, outcome: str) -> None:
        if self.trajectory_id is None or not other_id:
            return
        if self._write(f"preference '{outcome}'", self.store.add_preference, self.trajectory_id, other_id,
                       self.reviewer, outcome, spectrum_id=self.trajectory.spectrum_id):
            self.preference.status = f"Saved: this trajectory {outcome}s against the other."

    def _mode_allows(self, what: str) -> bool:
        """A 'rating' campaign takes scores and notes, not verdicts."""
        if self.campaign and self.campaign["mode"] == "rating" and what == "verdicts":
            self.error = f"Campaign '{self.campaign['name']}' is for rating only: give a 0-5 score."
            return False
        return True

    # ---- campaigns ---------------------------------------------------------------------------------
    def open_campaign(self, name_or_id: str) -> bool:
        """Work inside an audit campaign: its items in its order, its blindness, its mode."""
        found = self.store.find_session(name_or_id)
        if found is None:
            self.error = f"No audit campaign named '{name_or_id}'."
            return False
        self.campaign = self.store.get_session(found["id"])
        self.session_id = found["id"]
        self.blind = bool(found["blind"])
        self.form.show_verdicts = found["mode"] != "rating"
        self.refresh_queue()
        return True

    # ---- reading my labels (and, unless blind, the others') ----------------------------------------
    def _load_my_labels(self) -> None:
        if self.trajectory_id is None:
            return
        mine = self.store.latest_review(self.trajectory_id, self.reviewer) if self.reviewer else None
        rating = (self.store.latest_rating(self.trajectory_id, self.reviewer, self.form.rubric_version)
                  if self.reviewer else None)
        parts = []
        if mine:
            parts.append(f"Your verdict: {mine['action']}" + (f" {mine['label']}" if mine.get("label") else ""))
        if rating:
            parts.append(f"your score: {int(rating['score'])}")
        self.form.param.update(saved="; ".join(parts), score=int(rating["score"]) if rating else None)
        if self.record and self.reviewer:
            self.vi.load(self.store.latest_vi_label(self.record["spectrum_id"], self.reviewer))
        self._show_others(mine is not None)
        self._load_my_annotation()

    def _load_my_annotation(self, reload: bool = False) -> None:
        if self.trajectory_id is None or not self.reviewer:
            return
        if reload or self._my_notes is None:  # one query per item, not per step
            self._my_notes = {a.get("step_idx"): a for a in self.store.annotations_for(self.trajectory_id, self.reviewer)}
        latest = self._my_notes.get(self.annotation.step_index)
        self.annotation.load(latest.get("comment") if latest else None, (latest or {}).get("flags") or [])

    def _show_others(self, mine_saved: bool) -> None:
        if self.blind and not mine_saved:
            self.others.object = "<p><em>Other reviewers' labels appear once you have saved your verdict.</em></p>"
            return
        rows = [r for r in self.store.reviews_for(self.trajectory_id) if r["reviewer"] != self.reviewer]
        if not rows:
            self.others.object = "<p><em>No other reviewer has a verdict on this item.</em></p>"
            return
        items = "".join(f"<li><b>{escape(r['reviewer'])}</b>: {escape(r['action'])} {escape(r.get('label') or '')}"
                        f"{' – ' + escape(r['comment']) if r.get('comment') else ''}</li>" for r in rows)
        self.others.object = f"<ul class='sr-others-list'>{items}</ul>"

    # ---- conflicts, curation, stats -------------------------------------------------------------------
    def refresh_conflicts(self) -> None:
        self.conflicts.items = self.store.conflict_queue(session=self.session_id)

    def resolve_conflict(self, item: dict, action: str, label, merger_comment) -> None:
        if item["kind"] == "spectrum":
            action, label = None, label or {}
        if self._write("resolution", self.store.add_resolution, item["kind"], item["item_id"], self.reviewer,
                       action=action, label=label, merger_comment=merger_comment):
            self.conflicts.status = f"Resolved {item['item_id']}."
            self.refresh_conflicts()
        else:
            self.conflicts.status = self.error

    def refresh_board(self) -> None:
        self.curation.rows = self.store.curation_board(session=self.session_id)

    def save_step_revision(self, text: str, tool_args, comment) -> None:
        if self.trajectory is None or self.player.current is None or not self._writable():
            return
        from reviewer.curation import save_revision

        step = self.player.current
        try:  # the revised zoom is rendered and stored with the revision
            save_revision(self.store, self.trajectory, step.index, self.reviewer,
                          text=text if text != (step.text or "") else None,
                          tool_args=tool_args if tool_args != step.tool_args else None,
                          spectrum=self.plot.spectrum, comment=comment)
        except ValueError as err:
            self.curation.status = str(err)
            return
        if self._write(f"revision of step {step.index + 1}", self.store.add_curation_event, self.trajectory_id,
                       self.reviewer, "revise", comment=comment):
            self.curation.status = f"Revision of step {step.index + 1} saved."
            self.refresh_board()

    def save_curation_event(self, event: str, value: str, comment) -> None:
        if self.trajectory_id is None:
            return
        if self._write(f"{event} '{value}'", self.store.add_curation_event, self.trajectory_id, self.reviewer,
                       event, value=value, comment=comment):
            self.curation.status = f"{event}: {value} saved."
            self.refresh_board()

    def load_stats(self) -> dict:
        ratings = self.store.ratings_frame(session=self.session_id)
        verdicts = self.store.verdicts_frame(session=self.session_id)
        evaluation = self.store.evaluation_frame(session=self.session_id)
        return {
            "distributions": stats.rating_distributions(ratings) if not ratings.empty else {},
            "correlations": stats.rater_correlations(ratings) if not ratings.empty else ratings,
            "kappas": stats.verdict_kappas(verdicts) if not verdicts.empty else verdicts,
            "scores": stats.task_scores(evaluation[evaluation["truth"].notna()]) if not evaluation.empty else evaluation,
            "coverage": stats.accuracy_vs_coverage(evaluation[evaluation["task"] == "verify"])
            if not evaluation.empty else evaluation,
        }

    def toggle_help(self) -> None:
        self.show_help = not self.show_help
