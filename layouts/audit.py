"""The audit screen: queue + metadata | spectrum + trajectory player | review, view controls, VI."""
from __future__ import annotations

import panel as pn

from reviewer.audit import AuditSession


def identity_prompt(session: AuditSession) -> pn.Column:
    """Asked once per browser session when no login or ?reviewer= gave a name."""
    name = pn.widgets.TextInput(placeholder="Your name", css_classes=["sr-reviewer-name"], width=220)
    start = pn.widgets.Button(label="Start reviewing", button_type="primary", css_classes=["sr-reviewer-start"])
    box = pn.Column(pn.pane.Markdown("**Who is reviewing?** Your labels are saved under this name."),
                    pn.Row(name, start), css_classes=["sr-identity"], visible=not session.reviewer)

    def accept(_=None):
        if name.value.strip():
            session.reviewer = name.value.strip()
            box.visible = False

    start.on_click(accept)
    name.param.watch(accept, "enter_pressed")
    return box


def audit_main(session: AuditSession) -> pn.Tabs:
    review = pn.Column(identity_prompt(session), session.error_alert, session.help_pane, session.plot, session.player,
                       sizing_mode="stretch_width")
    tabs = pn.Tabs(("Review", review), ("Conflicts", session.conflicts), ("Curation", session.curation),
                   ("Stats", session.stats_panel), dynamic=False, sizing_mode="stretch_width",
                   css_classes=["sr-main-tabs"])

    def on_tab(event):  # fill a page when it is opened, so its numbers are current
        {1: session.refresh_conflicts, 2: session.refresh_board, 3: session.stats_panel.refresh}.get(
            event.new, lambda: None)()

    tabs.param.watch(on_tab, "active")
    return tabs


def audit_right(session: AuditSession) -> pn.Tabs:
    review = pn.Column(session.form, session.ack_pane, pn.pane.Markdown("#### Other reviewers"), session.others,
                       pn.pane.Markdown("#### Note on the current step"), session.annotation,
                       pn.pane.Markdown("#### Preference"), session.preference, sizing_mode="stretch_width")
    return pn.Tabs(("Review", review), ("View", session.controls), ("VI", session.vi), sizing_mode="stretch_width")


def audit_sidebar(session: AuditSession) -> pn.Tabs:
    return pn.Tabs(("Queue", session.queue), ("Spectra", session.spectra), sizing_mode="stretch_width")
