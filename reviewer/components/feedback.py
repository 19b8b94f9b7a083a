"""What the reviewer is told: the last stored label (acknowledged only after the store returned),
the last problem, and, once blind review allows it, other reviewers' verdicts on the item."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import on_labels
from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape, plain_alert
from reviewer.review_state import ReviewState
from reviewer.services.labels import VERDICT_KINDS, verdict_words

MESSAGE_BOX_PX = 66  # four lines of the sidebar's text


class AckView(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        writer, error = self.state.writer, self.state.param.error
        # bound, so a problem found while the page was built (the address, the login) shows at once
        self._ack = TextHTML(pn.bind(lambda ack: "" if ack is None else
                                     f"<span>{escape(ack.text())} (#{writer.stored} this session)</span>",
                                     writer.param.ack),
                             css_classes=["sr-ack"], sizing_mode="stretch_width", margin=(0, 5))
        self._error = TextHTML(pn.bind(plain_alert, error), visible=pn.bind(bool, error), css_classes=["sr-error"],
                               sizing_mode="stretch_width")

    def __panel__(self):
        # a box of fixed height: a message appearing, growing or going never moves the tabs and the
        # verdict buttons under it (a long one scrolls in its box)
        return pn.Column(self._error, self._ack, sizing_mode="stretch_width", height=MESSAGE_BOX_PX,
                         css_classes=["sr-messages"], styles={"overflow-y": "auto"}, margin=(0, 0, 4, 0))


class OthersView(Viewer):
    state = param.ClassSelector(class_=ReviewState)

    def __init__(self, **params):
        super().__init__(**params)
        self._pane = TextHTML("", sizing_mode="stretch_width", css_classes=["sr-others"])
        # labels_seen: verdicts stored elsewhere (another browser, the CLI), noticed by the page's poll
        self.state.param.watch(self._show, ["item", "reviewer", "blind", "labels_seen"])
        on_labels(self.state, VERDICT_KINDS, self._show)
        self._show()

    def _show(self, *_):
        state = self.state
        tid = state.item.trajectory_id if state.item is not None else None
        if tid is None:
            self._pane.object = ""
            return
        rows = state.labels.others_visible(state.reviewer, tid, state.blind)
        if rows is None:
            self._pane.object = "<p><em>Other reviewers' verdicts appear once you have saved yours.</em></p>"
        elif not rows:
            self._pane.object = "<p><em>No other reviewer has a verdict on this item.</em></p>"
        else:
            own = state.item.agent_label  # what an 'approve' approved: each line names its label
            items = "".join(
                f"<li><b>{escape(r['reviewer'])}</b>: {escape(verdict_words(r['action'], r.get('label'), own))}"
                f"{' – ' + escape(r['comment']) if r.get('comment') else ''}</li>" for r in rows)
            self._pane.object = f"<ul class='sr-others-list'>{items}</ul>"

    def __panel__(self):
        return pn.Column(pn.pane.HTML("<b>Other reviewers</b>", margin=(0, 5)), self._pane, sizing_mode="stretch_width")
