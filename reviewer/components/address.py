"""The page's address follows the item on screen (?trajectory= / ?spectrum=), so that a reload
resumes at the item the reviewer was on.

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


def item_query(base: dict, trajectory_id: str | None, spectrum_id: str | None) -> str:
    """`base` query parameters with the item's own (a trajectory when there is one, else the spectrum)."""
    query = {k: v for k, v in base.items() if k not in ITEM_KEYS}
    query.update({"trajectory": trajectory_id} if trajectory_id else {"spectrum": spectrum_id})
    return urlencode(query)


class ItemAddress(JSComponent):
    """Shows the review state's item in the address bar (hidden element)."""

    query = param.String(default="", doc="the query string shown (without '?')")

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

      const marker = document.createElement("span");
      marker.style.display = "none";
      return marker;
    }
    """

    def __init__(self, state, base_query: dict | None = None, **params):
        super().__init__(**params)
        self._state = state  # not a param: the browser gets only the query string
        self._base = dict(base_query or {})
        state.param.watch(self._follow, "item")
        self._follow()

    def _follow(self, *_):
        item = self._state.item
        if item is not None:
            self.query = item_query(self._base, item.trajectory_id, item.spectrum_id)
