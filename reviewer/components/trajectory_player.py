"""Plays a trajectory back: a compact strip of steps, first / previous / play / next / last with speed,
and the whole trajectory as one scrolling transcript (built when opened). Bound to the review state."""
from __future__ import annotations

from collections import Counter

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.button_strip import ButtonStrip, strip_height
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.components.step_player import StepPlayer
from reviewer.components.step_view import TEXT_SHOWN_MAX, step_html
from reviewer.review_state import ReviewState
from reviewer.services.claims import counts_text
from reviewer.services.renders import cached_step, step_render
from reviewer.services.spectra_cache import prefetch
from reviewer.services.step_stages import stage_groups

KIND_NAME = {"prompt": "prompt", "think": "reasoning", "tool_call": "tool call", "tool_result": "tool result",
             "verdict": "auditor verdict", "answer": "answer"}


def step_title(step, n_steps: int) -> str:
    """A step button's title: which step, of what kind, with which tool."""
    tool = f" ({step.tool_name})" if getattr(step, "tool_name", None) else ""
    return f"Step {step.index + 1} of {n_steps}: {KIND_NAME.get(step.kind, step.kind)}{tool}"
# compact buttons in 3 rows hold 70 steps with their stage headings at 1440x900; a longer trajectory's
# strip scrolls (to its current step) rather than grow
STRIP_ROWS = 3
HEADER_HEIGHT_PX = 42  # the summary scrolls too: the centre column keeps its layout from item to item


def trajectory_summary(traj, claims=()) -> str:
    outcome = traj.outcome or {}
    shown = ", ".join(f"{escape(k)}: {escape(v)}" for k, v in outcome.items()
                      if k in ("answer", "prediction", "type", "redshift", "credibility", "format_correct", "status"))
    model = f" / {escape(traj.agent.model)}" if traj.agent.model else ""
    counted = Counter(r.verdict for r in claims)
    checked = f"<br><small class='sr-claims-summary'>claims: {escape(counts_text(counted))}</small>" if claims else ""
    return (f"<div><b>{escape(traj.task)}</b> · {escape(traj.agent.name)} / {escape(traj.agent.backend)}{model}"
            f" · {len(traj.steps)} steps · <small>{shown}</small>{checked}</div>")


class StepStrip(Viewer):
    """One small button per step (its number and kind); the current one is highlighted."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._buttons = ButtonStrip(css_classes=["sr-step-strip"], sizing_mode="stretch_width", margin=(0, 5),
                                    height=strip_height(STRIP_ROWS), compact=True)
        self._buttons.param.watch(self._clicked, "value")
        self.state.param.watch(self._load, "item")
        self.state.param.watch(self._show, "step_index")
        self._load()

    def _load(self, *_):
        steps = self.state.steps
        # the number only; the kind is the button's colour mark and its title (narrow buttons: 70 fit)
        labels = [str(s.index + 1) for s in steps]
        titles = [step_title(s, len(steps)) for s in steps]
        item = self.state.item
        groups = stage_groups(item.trajectory.task, steps) if item is not None and item.trajectory else []
        # the same sequence of steps (most items of one task): only the value moves
        self._buttons.param.update(labels=labels, titles=titles, groups=groups, kinds=[s.kind for s in steps],
                                   value=self.state.step_index if steps else None)

    def _show(self, *_):
        if self._buttons.value != self.state.step_index:
            self._buttons.value = self.state.step_index

    def _clicked(self, event):
        if event.new is not None and event.new != self.state.step_index:
            self.state.go_to_step(event.new)

    def __panel__(self):
        return self._buttons


class TrajectoryPlayer(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._openings = 0  # item openings so far: the player's moves name the one they were made for
        self._player = StepPlayer(on_move=self.state.go_to_step, width=330, height=32, css_classes=["sr-player"],
                                  margin=(5, 5))
        self.strip = StepStrip(state=self.state)
        self._header = TextHTML("", sizing_mode="stretch_width", css_classes=["sr-trajectory-head"], margin=(0, 5),
                                height=HEADER_HEIGHT_PX, styles={"overflow-y": "auto"})
        self._follow = pn.widgets.Checkbox.from_param(self.state.frame.param.follow_zoom, label="Follow the agent's zoom",
                                                      css_classes=["sr-follow-zoom"], margin=(10, 5), width=170)
        self.state.param.watch(self._load, "item")
        self.state.param.watch(self._show, "step_index")
        self._load()

    def _load(self, *_):
        steps = self.state.steps
        traj = self.state.item.trajectory if self.state.item is not None else None
        # a new item stops playback: it never plays on into the item opened next
        self._player.param.update(end=max(0, len(steps) - 1), value=self.state.step_index, playing=False,
                                  inactive=len(steps) < 2, item_key=self._item_key())
        self._header.object = trajectory_summary(traj, self.state.claims()) if traj is not None else \
            "<p><em>No trajectory for this spectrum.</em></p>"

    def _item_key(self) -> str:
        """A key for each opening of an item (the same trajectory opened again is another opening)."""
        self._openings += 1
        item = self.state.item
        return f"{item.trajectory_id or item.spectrum_id}#{self._openings}" if item is not None else ""

    def _show(self, *_):
        if self._player.value != self.state.step_index:
            self._player.value = self.state.step_index

    def __panel__(self):
        return pn.Column(pn.Row(self._player, self._follow, self._header, sizing_mode="stretch_width"), self.strip,
                         sizing_mode="stretch_width")


# The Transcript shows a trajectory a page of steps at a time. An import decides how long a trajectory
# and its steps are, and each step costs the server's one event loop to convert (Markdown: 0.13-0.6 s for
# a 20,000-character table, by the machine's load) and to send, and the browser to draw: a 3 MB chat
# import of 150 such steps held the server ~115 s in one build. A page ends after TRANSCRIPT_PAGE_STEPS
# steps or once its steps reach TRANSCRIPT_PAGE_COST (characters of step text, a render counted as
# RENDER_COST): two such tables at most, while the offline agents' whole trajectories (15-61 steps, a few
# kB of text, up to 15 renders) stay on one page.
TRANSCRIPT_PAGE_STEPS = 80
TRANSCRIPT_PAGE_COST = 60_000
RENDER_COST = 2_000


def step_cost(step) -> int:
    """What showing `step` in the transcript costs, in characters of its text (renders: RENDER_COST)."""
    parts = (step.text or "", str(step.tool_args or ""), str(step.answer or ""))  # each shown up to TEXT_SHOWN_MAX
    rendered = step.image_sha is not None or step.kind == "tool_result"  # a stored picture, or one made again
    return sum(min(len(p), TEXT_SHOWN_MAX) for p in parts) + (RENDER_COST if rendered else 0) + 200


def transcript_pages(steps) -> list[range]:
    """`steps` cut into the transcript's pages (each at least one step)."""
    pages, start, cost = [], 0, 0
    for i, step in enumerate(steps):
        if i > start and (i - start >= TRANSCRIPT_PAGE_STEPS or cost + step_cost(step) > TRANSCRIPT_PAGE_COST):
            pages.append(range(start, i))
            start, cost = i, 0
        cost += step_cost(step)
    if start < len(steps):
        pages.append(range(start, len(steps)))
    return pages


class Transcript(Viewer):
    """The whole trajectory as one scrolling page, built only when its tab is opened, a page of steps at a
    time (`transcript_pages`): "Show steps ..." at its end adds the next."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._column = pn.Column(sizing_mode="stretch_width", css_classes=["sr-transcript"])
        self._more = pn.widgets.Button(label="", color="light", visible=False, css_classes=["sr-transcript-more"],
                                       description="Show the next page of this trajectory's steps")
        self._more.on_click(lambda _: self._show_next_page())
        self._built_for = None
        self._pages: list[range] = []
        self._shown = 0  # pages on screen
        self.state.param.watch(lambda _: setattr(self, "_built_for", None), "item")

    def build(self):
        item = self.state.item
        if item is None or self._built_for is item:
            return
        self._built_for, self._pages, self._shown = item, transcript_pages(self.state.steps), 0
        self._column.objects = []
        self._show_next_page()

    def _page_items(self, steps: range) -> list:
        item, total, items = self.state.item, len(self.state.steps), []
        for index in steps:
            items.append(pn.pane.HTML(step_html(self.state.steps[index], total), sizing_mode="stretch_width"))
            known, png = cached_step(item, index)
            if known and png is None:
                continue
            image = pn.pane.PNG(png, sizing_mode="scale_width", max_width=720, visible=known)
            items.append(image)
            if not known:
                self._render_later(item, index, image)
        return items

    def _render_later(self, item, index: int, image: pn.pane.PNG) -> None:
        """The step's render into `image` once a render process has drawn it: the transcript's text never
        waits for renders (a page of 80 steps could wait for as many), nor for the renders other pages
        asked for first; one the transcript no longer shows is not drawn. Outside a served page: now."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            png = step_render(self.state.store, item, index)
            image.param.update(object=png, visible=png is not None)
            return

        def work():
            if self._built_for is not item:  # the transcript moved on to another item: drawn for nobody
                return
            png = step_render(self.state.store, item, index)
            if png is not None:
                doc.add_next_tick_callback(lambda: image.param.update(object=png, visible=True))

        prefetch(work)

    def _show_next_page(self) -> None:
        if self._shown >= len(self._pages):
            return
        page = self._pages[self._shown]
        self._shown += 1
        self._column.objects = [*self._column.objects, *self._page_items(page)]
        total = len(self.state.steps)
        if self._shown < len(self._pages):
            nxt = self._pages[self._shown]
            self._more.label = f"Show steps {nxt.start + 1}-{nxt.stop} of {total}"
            self._more.visible = True
        else:
            self._more.visible = False

    @property
    def steps_shown(self) -> int:
        return self._pages[self._shown - 1].stop if self._shown else 0

    def __panel__(self):
        return pn.Column(self._column, self._more, sizing_mode="stretch_width")
