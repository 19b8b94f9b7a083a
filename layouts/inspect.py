"""The inspect screen, laid out like the LAMOST spectrum viewer: metadata | spectrum | controls."""
from __future__ import annotations

import os
from pathlib import Path

import panel as pn

from reviewer.app import ReviewerSession, seed_demo_if_empty
from reviewer.store import Store

CSS = (Path(__file__).resolve().parents[1] / "assets" / "specreview.css")


def create_app(db: str | os.PathLike | None = None) -> pn.template.FastListTemplate:
    store = Store(db)
    seed_demo_if_empty(store)
    session = ReviewerSession(store)
    wanted = pn.state.session_args.get("spectrum", [b""])[0].decode() if pn.state.session_args else ""
    if not (wanted and session.open_spectrum(wanted)):
        session.open_first()
    template = pn.template.FastListTemplate(
        title="SpecReview",
        sidebar=[pn.pane.Markdown("### Spectra"), session.spectra, pn.pane.Markdown("### Metadata"), session.metadata],
        main=[session.error_alert, session.plot],
        right_sidebar=[session.controls],
        sidebar_width=360,
        right_sidebar_width=300,
        collapsed_right_sidebar=False,
        raw_css=[CSS.read_text()] if CSS.exists() else [],
        accent="#1f4e9c",
    )
    template.session = session  # handy for tests and for other screens
    return template
