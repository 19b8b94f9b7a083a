"""The agent's claims on the current step: highlighted in its text with a verdict badge, and listed
as buttons that shade the measured window on the plot (through the review state's focus window).

Spans come from the claim checker (agents/claims) as offsets into the step's raw text, so a step with
claims is shown as escaped plain text with the spans marked, not as Markdown (whose rendering would
move the offsets). Every piece of agent text is escaped.

`ClaimFlags` (in the note form) offers the step's contradicted claims as prefilled flags
("unsupported claim: ..."): the reviewer confirms or dismisses each, and each answer is stored as a
label on that claim through the label service.
"""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.button_strip import ButtonStrip, strip_height
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services.claims import contradicted_claims
from reviewer.services.labels import CLAIM_FLAG_DONE, flag_label

VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "unverifiable": "?"}
VERDICT_CSS = {"supported": "#d4edda", "contradicted": "#f8d7da", "unverifiable": "#e2e3e5"}


def detail_text(verdict: str, measured=None, tolerance=None, unit=None, window=None, reason=None) -> str:
    """What was measured, to what tolerance, where: the text a reviewer checks the claim against."""
    parts = [verdict]
    if measured is not None:
        tol = f" ± {tolerance:.3g}" if tolerance is not None else ""
        parts.append(f"measured {measured:.4g}{tol}{f' {unit}' if unit else ''}")
    if window and window[0] is not None:
        parts.append(f"in {window[0]:.0f}–{window[1]:.0f} Å")
    if reason:
        parts.append(reason)
    return "; ".join(parts)


def claim_detail(res) -> str:
    """`detail_text` of a ClaimResult."""
    return detail_text(res.verdict, res.measured, res.tolerance, res.claim.unit, res.window, res.reason)


def row_detail(row: dict) -> str:
    """`detail_text` of a stored claim_results row."""
    return detail_text(row["verdict"], row["measured"], row["tolerance"], row["unit"],
                       [row["window_lo"], row["window_hi"]], row["reason"])


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
    """The current step's claims as buttons: choosing one shades its measured window on the plot.
    Always on the page at one height (empty on a step without claims): the step view must not grow
    and shrink from step to step."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        # a chip clicked again takes its shading off
        self._buttons = ButtonStrip(css_classes=["sr-claim-list"], margin=(2, 5), sizing_mode="stretch_width",
                                    height=strip_height(2), toggles=True)
        self._buttons.param.watch(self._chosen, "value")
        self._detail = TextHTML("", css_classes=["sr-claim-detail"], margin=(0, 5), sizing_mode="stretch_width",
                                height=34, styles={"overflow-y": "auto"})
        self.state.param.watch(self._load, ["item", "step_index"])
        self._load()

    def _results(self):
        return [r for r in self.state.claims() if r.step_index == self.state.step_index]

    def _load(self, *_):
        results = self._results()
        labels = [f"{VERDICT_MARK.get(r.verdict, '?')} {r.claim.text[:28]}" for r in results]
        self._buttons.param.update(labels=labels, value=None)
        self._detail.object = "<small><i>Choose a claim to shade where it was measured.</i></small>" if results else ""

    def _chosen(self, event):
        results = self._results()
        if event.new is None or not 0 <= event.new < len(results):
            self._detail.object = "<small><i>Choose a claim to shade where it was measured.</i></small>" if results else ""
            self.state.frame.focus_window = None
            return
        res = results[event.new]
        self._detail.object = f"<small>{escape(res.claim.text)}: {escape(claim_detail(res))}</small>"
        # a claim measured nowhere in particular shades nothing (never the previous chip's window)
        self.state.frame.focus_window = (float(res.window[0]), float(res.window[1])) if res.window else None

    def __panel__(self):
        return pn.Column(self._buttons, self._detail, sizing_mode="stretch_width", margin=0)


class ClaimFlags(Viewer):
    """The current step's contradicted claims as prefilled flags, each with Confirm (the agent's claim
    is wrong) and Dismiss (the checker was wrong) buttons and the reviewer's current answer. The claims
    are the stored results of the item on screen (read once per opened item), the answers this
    reviewer's latest (re-read after each one is saved)."""

    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self.flags: list[dict] = []  # label, decision (None / confirm / dismiss), claim (claim_results row)
        self._column = pn.Column(css_classes=["sr-claim-flags"], sizing_mode="stretch_width", visible=False,
                                 margin=(0, 0))
        self._claims_item, self._claims = None, []
        self._answers_for, self._answers = None, {}
        self._shown = None
        self.state.param.watch(self._load, ["item", "step_index", "reviewer"])
        self.state.writer.param.watch(self._saved, "ack")
        self._load()

    @property
    def visible(self) -> bool:
        return self._column.visible

    @staticmethod
    def _key(row) -> tuple:
        return row["checker_version"], row["step_idx"], row["claim_idx"]

    def _load(self, *_):
        state = self.state
        tid = state.item.trajectory_id if state.item is not None else None
        if state.item is not self._claims_item:  # a re-opened item reads its claims again
            self._claims = contradicted_claims(state.store, tid) if tid else []
            self._claims_item = state.item
        if (tid, state.reviewer) != self._answers_for:
            self._answers = {self._key(r): r for r in state.labels.my_claim_flags(state.reviewer, tid)}
            self._answers_for = (tid, state.reviewer)
        flags = []
        for row in self._claims:
            if row["step_idx"] != state.step_index:
                continue
            answer = self._answers.get(self._key(row))
            decided = answer["decision"] if answer and answer["claim_text"] == row["claim_text"] else None
            flags.append({"label": flag_label(row["claim_text"]), "decision": decided, "claim": row})
        self.flags = flags
        self._render()

    def _saved(self, event):
        if event.new is not None and event.new.kind == "claim_flag":
            self._answers_for = None
            self._load()

    @staticmethod
    def _flag_html(flag) -> str:
        status = f"{CLAIM_FLAG_DONE[flag['decision']]} by you" if flag["decision"] else "not yet decided"
        return (f"<div class='sr-claim-flag-text'><b>{escape(flag['label'])}</b> "
                f"<span class='sr-claim-flag-status'>({escape(status)})</span><br>"
                f"<small>{escape(row_detail(flag['claim']))}</small></div>")

    def html_text(self) -> str:
        return "".join(self._flag_html(f) for f in self.flags)

    def _render(self):
        shown = [(self._key(f["claim"]), f["decision"]) for f in self.flags]
        if shown == self._shown:
            return
        self._shown = shown
        rows = []
        for i, flag in enumerate(self.flags):
            confirm = pn.widgets.Button(label="Confirm", color="danger" if flag["decision"] == "confirm" else "light",
                                        css_classes=["sr-claim-flag-confirm"], width=80, margin=(2, 2),
                                        description="Confirm the flag: the agent's claim is wrong.")
            dismiss = pn.widgets.Button(label="Dismiss", color="success" if flag["decision"] == "dismiss" else "light",
                                        css_classes=["sr-claim-flag-dismiss"], width=80, margin=(2, 2),
                                        description="Dismiss the flag: the claim checker was wrong.")
            confirm.on_click(lambda _, i=i: self.confirm(i))
            dismiss.on_click(lambda _, i=i: self.dismiss(i))
            rows.append(pn.Row(pn.pane.HTML(self._flag_html(flag), sizing_mode="stretch_width", margin=(0, 5)),
                               confirm, dismiss, css_classes=["sr-claim-flag"], sizing_mode="stretch_width"))
        head = pn.pane.HTML("<b>Flags from the claim checker</b> <small>confirm: the claim is wrong; dismiss: "
                            "the checker was wrong</small>", margin=(0, 5))
        self._column.objects = [head, *rows] if rows else []
        self._column.visible = bool(rows)

    def _decide(self, index: int, decision: str):
        if not 0 <= index < len(self.flags):
            return None
        return self.state.writer.save("claim_flag", claim=self.flags[index]["claim"], decision=decision)

    def confirm(self, index: int):
        """The agent's claim is wrong: stored as this reviewer's answer to the flag."""
        return self._decide(index, "confirm")

    def dismiss(self, index: int):
        """The checker was wrong about this claim: stored as this reviewer's answer to the flag."""
        return self._decide(index, "dismiss")

    def __panel__(self):
        return self._column
