"""The page's address follows the item on screen (?trajectory= / ?spectrum=) and the reviewer's name
(?reviewer=, when the name was typed or given there rather than taken from a login), so that a reload
resumes at the item the reviewer was on, under the same name. The name is also kept in a cookie
(`REVIEWER_COOKIE`, this site only), so that a page opened without ?reviewer= does not ask again.

The address is replaced, not pushed, once the page is idle: Back leaves the review page instead of
walking back through every item seen, and Panel's Location (history.pushState inside the switch,
then the new href sent back to the server) cost each item switch ~10 ms in the browser plus a
round trip.
"""
from __future__ import annotations

from urllib.parse import urlencode

import param
from panel.custom import JSComponent

ITEM_KEYS = ("trajectory", "spectrum")
REVIEWER_COOKIE = "specreview_reviewer"
COOKIE_DAYS = 30


def item_query(base: dict, trajectory_id: str | None, spectrum_id: str | None, reviewer: str | None = None) -> str:
    """`base` query parameters with the item's own (a trajectory when there is one, else the spectrum)
    and, unless `reviewer` is None (a login names the reviewer), the reviewer's name ("" drops it)."""
    query = {k: v for k, v in base.items() if k not in ITEM_KEYS}
    query.update({"trajectory": trajectory_id} if trajectory_id else {"spectrum": spectrum_id})
    if reviewer is not None:
        query.pop("reviewer", None)
        if reviewer:
            query["reviewer"] = reviewer
    return urlencode(query)


class ItemAddress(JSComponent):
    """Shows the review state's item in the address bar (hidden element)."""

    query = param.String(default="", doc="the query string shown (without '?')")
    remember = param.String(default="", doc="the typed reviewer name, kept in a cookie (never a login's)")

    _esm = """
    export function render({ model }) {
      // replaceState costs the browser ~10 ms: done when the page is next idle (within a second),
      // not inside an item switch
      let pending = null;
      const show = () => {
        pending = null;
        if (model.query) window.history.replaceState(window.history.state, "", "?" + model.query);
      };
      const later = () => {
        if (pending === null) pending = requestIdleCallback(show, { timeout: 1000 });
      };
      later();
      model.on("query", later);

      const keep = () => {
        if (model.remember) {
          document.cookie = `""" + REVIEWER_COOKIE + """=${encodeURIComponent(model.remember)}; path=/; ` +
                            `max-age=""" + str(COOKIE_DAYS * 86400) + """; SameSite=Strict`;
        }
      };
      keep();
      model.on("remember", keep);

      const marker = document.createElement("span");
      marker.style.display = "none";
      return marker;
    }
    """

    def __init__(self, state, base_query: dict | None = None, **params):
        super().__init__(**params)
        self._state = state  # not a param: the browser gets only the query string
        self._base = dict(base_query or {})
        state.param.watch(self._follow, ["item", "reviewer"])
        self._follow()

    def _follow(self, *_):
        state = self._state
        name = None if state.login else state.reviewer  # a login is not written into the address
        item = state.on_item  # before a first look the page shows the spectrum alone: the address names the item
        if item is not None:
            self.query = item_query(self._base, item.trajectory_id, item.spectrum_id, name)
        self.remember = name or ""
