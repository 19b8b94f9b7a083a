"""Panes that send only what changed."""
from __future__ import annotations

import html
from typing import ClassVar

import panel as pn
from panel.models import HTML
from panel.widgets.indicators import BooleanIndicator


class TextHTML(pn.pane.HTML):
    """An HTML pane whose new object goes to the browser as its text alone. Panel's HTML pane
    re-derives every property of its model on each new object (the design's stylesheets included,
    new Bokeh stylesheet models each time): ~3 ms of server time per pane, and an item switch
    changes several. Other parameters (visibility, size) still go through Panel as usual."""

    def _update(self, ref, model) -> None:
        model.update(**self._process_param_change({"object": self.object}))


class BusyLight(BooleanIndicator):
    """The template's busy indicator: a dot in the header, lit while the server handles a request (Panel sets
    `value` through `state.sync_busy`). It shows and hides through its `styles`: Panel's LoadingSpinner
    changes its `css_classes`, and BokehJS lays out the whole document again on any layout element's
    `css_classes` change (LayoutDOMView.connect_signals), twice per key press (busy, then idle), the hidden
    tabs' plots included (docs/benchmarks.md, `j` and `n`); a `styles` change only restyles the element."""

    _widget_type: ClassVar[type] = HTML

    IDLE: ClassVar[dict] = {"opacity": "0"}
    BUSY: ClassVar[dict] = {"opacity": "1"}
    DOT = ("<div title='The server is working' style='width: 12px; height: 12px; border-radius: 50%; "
           "background: #fff; margin-top: 1px'></div>")

    def __init__(self, **params):
        super().__init__(**{"width": 12, "height": 14, "margin": (0, 12), **params})

    def _process_param_change(self, params: dict) -> dict:
        msg = super()._process_param_change(params)
        if "value" in msg:
            msg["styles"] = dict(self.BUSY if msg.pop("value") else self.IDLE)
        return msg

    def _get_properties(self, doc) -> dict:
        return {**super()._get_properties(doc), "text": html.escape(self.DOT)}  # Panel's HTML model: escaped
