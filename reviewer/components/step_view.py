"""One trajectory step, shown as the reviewer needs it: text, tool call, verdict, answer, report (its
render is reviewer.components.step_render, beside the verdict).

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
        # open: the report is read in place, whole (the main column scrolls)
        report = markdown_to_safe_html(shown(str(step.answer["report"])))
        parts.append(f"<details open class='sr-report'><summary>Report</summary>{report}</details>")
    parts.append("</div>")
    return "".join(parts)


class StepView(Viewer):
    """The current step's text, tool call, auditor verdict badges and report, and the checker's claims on
    it; its whole text on the page (the main column scrolls, not a box inside it). The step's render is
    `StepRender`, beside the verdict. Bound to the review state."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._html = TextHTML("", sizing_mode="stretch_width", css_classes=["sr-step-view"], stylesheets=STYLESHEETS)
        self.claims = ClaimList(state=self.state)
        self.state.param.watch(self._refresh, ["item", "step_index"])
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

    def __panel__(self):
        return pn.Column(self._html, self.claims, sizing_mode="stretch_width")
