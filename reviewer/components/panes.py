"""Panes that send only what changed."""
from __future__ import annotations

import panel as pn


class TextHTML(pn.pane.HTML):
    """An HTML pane whose new object goes to the browser as its text alone. Panel's HTML pane
    re-derives every property of its model on each new object (the design's stylesheets included,
    new Bokeh stylesheet models each time): ~3 ms of server time per pane, and an item switch
    changes several. Other parameters (visibility, size) still go through Panel as usual."""

    def _update(self, ref, model) -> None:
        model.update(**self._process_param_change({"object": self.object}))
