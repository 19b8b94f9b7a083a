"""One trajectory step, shown as the reviewer needs it: text, tool call, render, verdict, answer.

All agent text is untrusted and goes through `markdown_to_safe_html` / `escape`.
"""
from __future__ import annotations

import json

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.claims_view import ClaimList, highlighted_text
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape, markdown_to_safe_html
from reviewer.components.styles import STYLESHEETS
from reviewer.review_state import ReviewState
from reviewer.services.renders import cached_step, owner_of_render, step_marks, step_render
from reviewer.services.spectra_cache import prefetch

KIND_COLOURS = {"prompt": "#6c757d", "think": "#1f4e9c", "tool_call": "#8e44ad", "tool_result": "#16a085",
                "verdict": "#d35400", "answer": "#27ae60"}
VERDICT_COLOURS = {"KEEP": "#27ae60", "CONFIRM": "#27ae60", "FLAG": "#f39c12", "UNCERTAIN": "#f39c12",
                   "REMOVE": "#c0392b", "NEEDS_REVISION": "#c0392b"}
CREDIBILITY_COLOURS = {"HIGH": "#27ae60", "MEDIUM": "#f39c12", "LOW": "#c0392b"}


def badge(text: str, colour: str, css: str = "") -> str:
    return (f"<span class='sr-badge {css}' style='background:{colour};color:white;border-radius:4px;"
            f"padding:1px 6px;font-size:12px;margin-right:4px'>{escape(text)}</span>")


# A step's text beyond this is not sent to the page (a 50 MB step would stall every session): the
# reviewer is told how much is left out; the transcript export still has all of it.
TEXT_SHOWN_MAX = 200_000


def shown(text: str) -> str:
    """`text` as far as a page shows it: TEXT_SHOWN_MAX characters, then how many more there are."""
    if len(text) <= TEXT_SHOWN_MAX:
        return text
    return f"{text[:TEXT_SHOWN_MAX]}… ({len(text) - TEXT_SHOWN_MAX:,} more characters not shown)"


def step_html(step, total: int | None = None, claims: list | None = None) -> str:
    """The HTML of a step without its image (shared by the player and the transcript)."""
    parts = [f"<div class='sr-step sr-step-{escape(step.kind)}' data-step='{step.index}'>",
             "<div class='sr-step-head'>",
             badge(step.kind.replace("_", " "), KIND_COLOURS.get(step.kind, "#555"), "sr-kind"),
             f"<b>Step {step.index + 1}{'/' + str(total) if total else ''}</b>"]
    if step.label:
        parts.append(f" · <i>{escape(step.label)}</i>")
    parts.append("</div>")
    if step.tool_name:
        args = shown(json.dumps(step.tool_args or {}, ensure_ascii=False))
        parts.append(f"<pre class='sr-tool-call'>{escape(step.tool_name)}({escape(args)})</pre>")
    if step.verdict is not None:
        v = step.verdict
        parts.append("<div class='sr-verdict'>" + badge(v.value, VERDICT_COLOURS.get(v.value, "#555"), "sr-verdict-value"))
        if v.credibility:
            parts.append(badge(f"credibility {v.credibility}", CREDIBILITY_COLOURS.get(v.credibility, "#555")))
        parts.append(f"<small>{escape(v.who)}{' · rule ' + escape(v.rule) if v.rule else ''}"
                     f"{' · ' + escape(v.target) if v.target else ''}</small></div>")
        if v.evidence:
            parts.append("<ul class='sr-evidence'>" + "".join(f"<li>{escape(e)}</li>" for e in v.evidence) + "</ul>")
    if step.answer is not None:
        items = "".join(f"<tr><th>{escape(shown(str(k)))}</th><td>{escape(shown(str(v)))}</td></tr>"
                        for k, v in step.answer.items() if k not in ("report",))
        parts.append(f"<table class='sr-answer'>{items}</table>")
    text = step.text[:TEXT_SHOWN_MAX] if step.text else ""
    if text and claims:
        parts.append(highlighted_text(text, claims))
    elif text:
        error = " sr-error-text" if step.is_error else ""
        parts.append(f"<div class='sr-step-text{error}'>{markdown_to_safe_html(text)}</div>")
    if step.text and len(step.text) > TEXT_SHOWN_MAX:
        parts.append(f"<p class='sr-cut'><em>{len(step.text) - TEXT_SHOWN_MAX:,} more characters of this step "
                     "are not shown.</em></p>")
    if step.answer and step.answer.get("report"):
        # open: the report is read in place, in the step view's own scroll
        report = markdown_to_safe_html(shown(str(step.answer["report"])))
        parts.append(f"<details open class='sr-report'><summary>Report</summary>{report}</details>")
    parts.append("</div>")
    return "".join(parts)


# A 1x1 transparent PNG: steps without a render swap the picture's source instead of removing it.
BLANK_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da6300010000"
    "0500010d0a2db40000000049454e44ae426082")


class StepView(Viewer):
    """The current step's text and auditor verdict badges, with its zoom render beside them (so the
    render, the text and the main plot are on screen together). Bound to the review state."""

    state = param.ClassSelector(class_=ReviewState)
    image_height = param.Integer(default=220)
    as_the_agent_saw = param.Boolean(default=False, doc="the render exactly as the agent saw it (its stored "
                                     "image where there is one), without the lines SpecReview marks on it")

    def __init__(self, **params):
        super().__init__(**params)
        # fixed height, scrolling inside: a step's text length must not re-lay-out the page
        self._html = TextHTML("", sizing_mode="stretch_width", height=self.image_height + 22,
                              css_classes=["sr-step-view"], stylesheets=STYLESHEETS, styles={"overflow-y": "auto"})
        # A fixed box that stays on the page: an image appearing or disappearing would re-lay-out the
        # whole page on every step (measured: +60 ms per step in Chromium).
        self._caption = TextHTML("", css_classes=["sr-image-caption"], height=34, margin=(0, 5),
                                 width=int(self.image_height * 1.55), styles={"overflow": "hidden"})
        self._image = pn.pane.PNG(BLANK_PNG, width=int(self.image_height * 1.55), height=self.image_height,
                                  sizing_mode="fixed", css_classes=["sr-step-image"], margin=(0, 5))
        # Always on the page (a widget appearing would re-lay-out it); off where nothing is marked.
        self._agent_view = pn.widgets.Checkbox.from_param(
            self.param.as_the_agent_saw, label="As the agent saw it (no marks)", disabled=True, margin=(0, 5),
            css_classes=["sr-agent-view"])
        self.claims = ClaimList(state=self.state)
        self.state.param.watch(self._refresh, ["item", "step_index"])
        self.param.watch(self._refresh_picture, "as_the_agent_saw")
        self._refresh()

    def _refresh(self, *_):
        state = self.state
        step = state.step
        if step is None:
            why = state.item.why_not_reviewable if state.item is not None else "Open an item from the queue."
            self._html.object = f"<p><em>{escape(why)}</em></p>"
        else:
            claims = [r for r in state.claims() if r.step_index == step.index]
            self._html.object = step_html(step, len(state.steps), claims)
        self._refresh_picture()

    def _refresh_picture(self, *_):
        """The render beside the step: SpecReview's marked copy by default where the step has lines
        to mark, else (or when asked) the picture exactly as the agent saw it."""
        state = self.state
        step = state.step
        if step is None:
            self._image.object = BLANK_PNG
            self._caption.object = ""
            self._agent_view.disabled = True
            return
        item, owner = state.item, owner_of_render(state.item, step.index)
        marks = step_marks(item, owner) if owner is not None else ()
        self._agent_view.disabled = not marks
        marks = () if self.as_the_agent_saw else marks
        marked = bool(marks)
        known, png = cached_step(item, owner, marked=marked) if owner is not None else (True, None)
        if known or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            if not known:
                png = step_render(state.store, item, owner, marked=marked)
            self._show_image(png, owner, step.index, marks)
            return
        # Not rendered yet: the text shows now, the picture when a render process has drawn it (a key
        # press never waits ~40 ms for matplotlib). Bokeh documents take changes from other threads
        # only through add_next_tick_callback.
        self._image.object = BLANK_PNG  # never the previous step's picture beside this step's text
        self._caption.object = "<small><i>Rendering…</i></small>"
        doc, index = pn.state.curdoc, step.index

        def work():
            made = step_render(state.store, item, owner, marked=marked)

            def show():
                if state.item is item and state.step_index == index and marked == (
                        not self.as_the_agent_saw and not self._agent_view.disabled):
                    self._show_image(made, owner, index, marks)

            doc.add_next_tick_callback(show)

        prefetch(work)

    def _show_image(self, png, owner, index, marks=()) -> None:
        self._image.object = png if png is not None else BLANK_PNG
        parts = []
        if png is not None and owner != index:
            parts.append(f"The render the agent is looking at (step {owner + 1}).")
        if png is not None and marks:
            parts.append(marks_caption(marks))
        self._caption.object = f"<small><i>{' '.join(parts)}</i></small>" if parts else ""

    def __panel__(self):
        return pn.Row(pn.Column(self._html, self.claims, sizing_mode="stretch_width"),
                      pn.Column(self._caption, self._image, self._agent_view), sizing_mode="stretch_width")


MARKS_NAMED = 4  # a caption names this many marked lines, then counts the rest


def marks_caption(marks) -> str:
    """The caption of a marked copy (HTML, names escaped): whose marks they are, and that the agent
    did not see them."""
    names = [escape(label) for label, _ in marks[:MARKS_NAMED]]
    more = f" and {len(marks) - MARKS_NAMED} more" if len(marks) > MARKS_NAMED else ""
    return (f"Lines marked by SpecReview ({', '.join(names)}{more}); "
            "the agent saw this picture without them.")
