"""The app `panel serve reviewer` shows: the LAMOST-style viewer with the review workflow around it."""
from __future__ import annotations

import logging
import os
from typing import ClassVar
from urllib.parse import unquote

import panel as pn
from panel.io.resources import CDN_DIST

from layouts.audit import PLOT_HEIGHT_PX, keyboard_for, left_area, main_area, right_area
from layouts.identity import session_identity
from reviewer.components.address import REVIEWER_COOKIE, ItemAddress
from reviewer.components.layout_batch import LayoutBatch
from reviewer.components.next_tick import every
from reviewer.components.panes import BusyLight
from reviewer.components.safe_text import plain_alert
from reviewer.components.spectrum_plot import SpectrumPlot
from reviewer.csp import csp_missing
from reviewer.review_state import ReviewState
from reviewer.services import background
from reviewer.services.upkeep import prepare_once
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


# The Fast template sizes its sidebars for a 76 px header; its header is 64 px (44 + padding), so the
# page scrolled by 8 px. The sidebars end at the window's bottom edge and scroll themselves; the main
# column does too, so the page never scrolls (issue 19: one screen at 1440x900).
FIT_CSS = """
#sidebar, #right-sidebar { height: calc(100vh - 84px); }
"""


def _cookie(name: str) -> str:
    value = (pn.state.cookies or {}).get(name) or ""
    return unquote(str(value))[:200].strip()


def _url_arg(name: str) -> str:
    args = pn.state.session_args or {}
    values = args.get(name) or [b""]
    return values[0][:200].decode("utf-8", "replace").strip()  # ids and names are short; the rest is noise


def error_page(message: str) -> pn.template.FastListTemplate:
    return pn.template.FastListTemplate(
        title="SpecReview", design=OfflineFast, busy_indicator=BusyLight(),
        main=[pn.pane.HTML(plain_alert(message), css_classes=["sr-fatal"], sizing_mode="stretch_width")])


def create_app(db: str | os.PathLike | None = None) -> pn.template.FastListTemplate:
    """The review page, or, when the database cannot be used, a page that says why (the server keeps
    serving, and its log says the same). Background work no reviewer waits for (the Stats figures the
    server's start computes) waits while the page is built and until its browser has shown it."""
    hold = background.page_building()
    try:
        try:
            page = _review_page(db)
        except StoreUnavailable as err:
            log.error("cannot use the review database: %s", err)
            page = error_page(f"The review database cannot be used: {err}")
    except BaseException:
        hold.release()
        raise
    release_when_shown(hold)
    return page


def release_when_shown(hold: background.PageHold) -> None:
    """Release `hold` when the browser has shown the served page (Panel's onload: Bokeh's document_ready
    event), or when its session ends first; outside a served session (tests, notebooks), now."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        hold.release()
        return
    pn.state.onload(hold.release)
    doc.on_session_destroyed(lambda _context: hold.release())


def _review_page(db) -> pn.template.FastListTemplate:
    if csp_missing():
        return error_page("This server could not add its Content-Security-Policy, so it serves no review page. "
                          "Start it with `specreview serve` (its log says more).")
    who = session_identity(_url_arg("reviewer"), remembered=_cookie(REVIEWER_COOKIE))
    if who.refused:  # before anything is read: a session with no verified user sees nothing
        return error_page(who.problem)
    store = Store(db)  # a handle on the process's one connection to the file (reviewer/store/connection.py)
    store.probe()  # once per process: a damaged or locked file is said in the page
    prepare_once(store)  # the demo, the cross-match, the consensus: done at the server's start, not per page
    state = ReviewState(store, login_holds=who.login_holds, reviewer=who.reviewer, login=who.login, error=who.problem)
    problems = [who.problem] if who.problem else []
    state.name_problems.update(problems)  # stale once a name is typed
    if _url_arg("session") and not state.open_campaign(_url_arg("session")):
        problems.append(state.error + " Showing the whole queue.")
    wanted_traj, wanted_spec = _url_arg("trajectory"), _url_arg("spectrum")
    opened = (wanted_traj and state.open_item(trajectory_id=wanted_traj)) or \
        (wanted_spec and state.open_item(spectrum_id=wanted_spec))
    if not opened:
        if wanted_traj or wanted_spec:
            problems.append(state.error + " Showing the first item of the queue instead.")
        state.open_first()
    if problems:  # the address asked for something else: say so, do not just show another item
        state.error = " ".join(problems)
    plot = SpectrumPlot(state=state, height=PLOT_HEIGHT_PX)
    plot.figure.toolbar_location = "right"  # beside the data, not above it: 30 px more data height
    views: dict = {"plot": plot}  # every component on the page, by role (tests and benchmarks reach them here)
    template = pn.template.FastListTemplate(
        title="SpecReview", sidebar=[left_area(state, views)], main=[main_area(state, plot, views)],
        right_sidebar=[right_area(state, plot, views)], sidebar_width=330, right_sidebar_width=360,
        collapsed_right_sidebar=False, accent="#1f4e9c", design=OfflineFast, header_background="#1f4e9c",
        raw_css=[FIT_CSS], busy_indicator=BusyLight())
    template.header.append(keyboard_for(state, plot, views["render"], views["step_judgment"]))
    views["layout_batch"] = LayoutBatch()
    template.header.append(views["layout_batch"])
    # a reload resumes at the item I was on: the address follows the item
    location = pn.state.location
    template.header.append(ItemAddress(state, base_query=location.query_params if location else {}))
    follow_writes_made_elsewhere(state)
    template.state, template.views = state, views
    return template


STORE_POLL_MS = 3000


def follow_writes_made_elsewhere(state: ReviewState) -> None:
    """In a served page, look for spectra, trajectories and verdicts stored by other sessions or the
    CLI every few seconds (`ReviewState.poll_store`: one small query, ~1 ms; the lists re-read only
    when it moved), so that the queue, the Spectra list and Other reviewers follow them."""
    doc = pn.state.curdoc
    if doc is not None and doc.session_context is not None:
        every(STORE_POLL_MS, state.poll_store)
