"""The app `panel serve reviewer` shows: the LAMOST-style viewer with the audit workflow around it."""
from __future__ import annotations

import os

import panel as pn
from panel.io.resources import CDN_DIST

from layouts.audit import audit_main, audit_right, audit_sidebar
from reviewer.app import seed_demo_if_empty
from reviewer.audit import AuditSession
from reviewer.store import Store


class OfflineFast(pn.theme.Fast):
    """The Fast design without its web font: an observatory network may not reach Google's CDN."""

    _resources = {
        **pn.theme.Fast._resources,
        "font": {},
        # relative resources resolve by class name: point at Fast's own bundled file
        "js_modules": {**pn.theme.Fast._resources["js_modules"],
                       "fast-design": f"{CDN_DIST}bundled/fast/js/fast_design.js"},
    }


def _url_arg(name: str) -> str:
    args = pn.state.session_args or {}
    values = args.get(name) or [b""]
    return values[0].decode("utf-8", "replace").strip()


def reviewer_identity() -> str:
    """The login (basic auth / OAuth) wins; otherwise ?reviewer=NAME; otherwise ask in the page."""
    return (pn.state.user or "").strip() if pn.state.user and pn.state.user != "guest" else _url_arg("reviewer")


def create_app(db: str | os.PathLike | None = None) -> pn.template.FastListTemplate:
    store = Store(db)
    seed_demo_if_empty(store)
    session = AuditSession(store, reviewer=reviewer_identity())
    if _url_arg("session"):
        session.open_campaign(_url_arg("session"))
    wanted_traj, wanted_spec = _url_arg("trajectory"), _url_arg("spectrum")
    if wanted_traj and session.open_trajectory(wanted_traj):
        pass
    elif wanted_spec and session.open_spectrum(wanted_spec):
        pass
    elif not session.open_first_item():
        session.open_first()
    template = pn.template.FastListTemplate(
        title="SpecReview",
        sidebar=[audit_sidebar(session), pn.pane.Markdown("#### Metadata"), session.metadata],
        main=[audit_main(session)],
        right_sidebar=[audit_right(session)],
        sidebar_width=380,
        right_sidebar_width=340,
        collapsed_right_sidebar=False,
        accent="#1f4e9c",
        design=OfflineFast,
    )
    template.header.append(session.keyboard)
    template.session = session  # for tests and other screens
    return template
