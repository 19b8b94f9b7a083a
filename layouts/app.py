"""The app `panel serve reviewer` shows: the LAMOST-style viewer with the review workflow around it."""
from __future__ import annotations

import logging
import os
from typing import ClassVar

import panel as pn
from panel.io.resources import CDN_DIST

from layouts.audit import keyboard_for, left_area, main_area, right_area
from reviewer.components.address import ItemAddress
from reviewer.components.layout_batch import LayoutBatch
from reviewer.components.safe_text import escape
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.conflicts import sync_verdict_states
from reviewer.demo import seed_demo_if_empty
from reviewer.labels import LabelRefused, check_name
from reviewer.review_state import ReviewState
from reviewer.store import Store, StoreUnavailable

log = logging.getLogger("specreview.app")


class OfflineFast(pn.theme.Fast):
    """The Fast design without its web font: an observatory network may not reach Google's CDN."""

    _resources: ClassVar = {
        **pn.theme.Fast._resources,
        "font": {},
        # relative resources resolve by class name: point at Fast's own file, which Panel serves locally
        "js_modules": {**pn.theme.Fast._resources["js_modules"],
                       "fast-design": f"{CDN_DIST}bundled/fast/js/fast_design.js"},
    }

    def params(self, viewable, doc=None):
        # Panel asks the design for a component's modifiers on every property change (~0.5 ms each:
        # stylesheet paths resolved again), some twenty times per item switch. They depend only on
        # the component's class and the document, so each class's are worked out once.
        cache = self.__dict__.setdefault("_modifiers_by_class", {})
        key = (type(viewable), id(doc))
        if key not in cache:
            cache[key] = super().params(viewable, doc)
        modifiers, child_modifiers = cache[key]
        modifiers = dict(modifiers)
        if "stylesheets" in modifiers:
            modifiers["stylesheets"] = list(modifiers["stylesheets"])
        return modifiers, dict(child_modifiers)


def _url_arg(name: str) -> str:
    args = pn.state.session_args or {}
    values = args.get(name) or [b""]
    return values[0].decode("utf-8", "replace").strip()


def _identity() -> tuple[str, bool, str]:
    """(reviewer, bound to a login, problem): the login (basic auth / OAuth) wins and cannot be
    changed in the page; otherwise ?reviewer=NAME; otherwise the page asks."""
    user = (pn.state.user or "").strip()
    if user and user != "guest":
        return user, True, ""
    try:
        return (check_name(_url_arg("reviewer")) if _url_arg("reviewer") else ""), False, ""
    except LabelRefused as err:
        return "", False, f"?reviewer= was not used: {err}"


def error_page(message: str) -> pn.template.FastListTemplate:
    return pn.template.FastListTemplate(
        title="SpecReview", design=OfflineFast,
        main=[pn.pane.Alert(escape(message), alert_type="danger", css_classes=["sr-fatal"])])


def create_app(db: str | os.PathLike | None = None) -> pn.template.FastListTemplate:
    """The review page, or, when the database cannot be used, a page that says why (the server keeps
    serving, and its log says the same)."""
    try:
        return _review_page(db)
    except StoreUnavailable as err:
        log.error("cannot use the review database: %s", err)
        return error_page(f"The review database cannot be used: {err}")


def _review_page(db) -> pn.template.FastListTemplate:
    store = Store(db)
    store.probe()
    seed_demo_if_empty(store)
    sync_verdict_states(store)  # labels written outside the app (imports, older versions)
    reviewer, login, problem = _identity()
    state = ReviewState(store, reviewer=reviewer, login=login, error=problem)
    if _url_arg("session"):
        state.open_campaign(_url_arg("session"))
    wanted_traj, wanted_spec = _url_arg("trajectory"), _url_arg("spectrum")
    opened = (wanted_traj and state.open_item(trajectory_id=wanted_traj)) or \
        (wanted_spec and state.open_item(spectrum_id=wanted_spec))
    if not opened:
        state.open_first()
    plot = SpectrumPlot(state=state)
    views: dict = {"plot": plot}  # every component on the page, by role (tests and benchmarks reach them here)
    template = pn.template.FastListTemplate(
        title="SpecReview", sidebar=[left_area(state, views)], main=[main_area(state, plot, views)],
        right_sidebar=[right_area(state, plot, views)], sidebar_width=330, right_sidebar_width=360,
        collapsed_right_sidebar=False, accent="#1f4e9c", design=OfflineFast, header_background="#1f4e9c")
    template.header.append(keyboard_for(state))
    views["layout_batch"] = LayoutBatch()
    template.header.append(views["layout_batch"])
    # a reload resumes at the item I was on: the address follows the item
    location = pn.state.location
    template.header.append(ItemAddress(state, base_query=location.query_params if location else {}))
    template.state, template.views = state, views
    return template
