"""The agent's claims on the current step: highlighted in its text with a verdict badge, and listed
as buttons that shade the measured window on the plot (through the review state's focus window).

Spans come from the claim checker (agents/claims) as offsets into the step's raw text, so a step with
claims is shown as escaped plain text with the spans marked, not as Markdown (whose rendering would
move the offsets). Every piece of agent text is escaped.
"""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.safe_text import escape

VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "unverifiable": "?"}
VERDICT_CSS = {"supported": "#d4edda", "contradicted": "#f8d7da", "unverifiable": "#e2e3e5"}


def claim_detail(res) -> str:
    """What was measured, to what tolerance, where: the text a reviewer checks the claim against."""
    parts = [res.verdict]
    if res.measured is not None:
        tol = f" ± {res.tolerance:.3g}" if res.tolerance is not None else ""
        unit = f" {res.claim.unit}" if res.claim.unit else ""
        parts.append(f"measured {res.measured:.4g}{tol}{unit}")
    if res.window:
        parts.append(f"in {res.window[0]:.0f}–{res.window[1]:.0f} Å")
    if res.reason:
        parts.append(res.reason)
    return "; ".join(parts)


def highlighted_text(text: str, results: list) -> str:
    """The step text, escaped, with each claim span marked by its verdict (overlapping spans: the
    first wins) and its measurement as the hover title."""
    out, pos = [], 0
    for res in sorted(results, key=lambda r: (r.claim.start, r.claim.end)):
        start, end = res.claim.start, res.claim.end
        if start < pos or not (0 <= start < end <= len(text)):
            continue
        out.append(escape(text[pos:start]))
        out.append(f"<mark class='sr-claim sr-claim-{escape(res.verdict)}' title='{escape(claim_detail(res))}' "
                   f"style='background:{VERDICT_CSS.get(res.verdict, '#eee')}'>{escape(text[start:end])}"
                   f"<sup class='sr-claim-badge'>{VERDICT_MARK.get(res.verdict, '?')}</sup></mark>")
        pos = end
    out.append(escape(text[pos:]))
    return "<div class='sr-step-text sr-claim-text' style='white-space:pre-wrap'>" + "".join(out) + "</div>"


class ClaimList(Viewer):
    """The current step's claims as buttons: choosing one shades its measured window on the plot."""

    state = param.Parameter()

    def __init__(self, **params):
        super().__init__(**params)
        self._buttons = pn.widgets.RadioButtonGroup(options={}, value=None, button_type="light",
                                                    css_classes=["sr-claim-list"], margin=(0, 5),
                                                    sizing_mode="stretch_width")
        self._buttons.param.watch(self._chosen, "value")
        self._detail = pn.pane.HTML("", css_classes=["sr-claim-detail"], margin=(0, 5), sizing_mode="stretch_width")
        self.state.param.watch(self._load, ["item", "step_index"])
        self._load()

    def _results(self):
        return [r for r in self.state.claims() if r.step_index == self.state.step_index]

    def _load(self, *_):
        results = self._results()
        options = {f"{VERDICT_MARK.get(r.verdict, '?')} {r.claim.text[:28]}": i for i, r in enumerate(results)}
        self._buttons.param.update(options=options, value=None, visible=bool(results))
        self._detail.object = ""

    def _chosen(self, event):
        results = self._results()
        if event.new is None or not 0 <= event.new < len(results):
            return
        res = results[event.new]
        self._detail.object = f"<small>{escape(res.claim.text)}: {escape(claim_detail(res))}</small>"
        if res.window:
            self.state.focus_window = (float(res.window[0]), float(res.window[1]))

    def __panel__(self):
        return pn.Column(self._buttons, self._detail, sizing_mode="stretch_width")
