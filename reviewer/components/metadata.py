"""Left panel: what the spectrum is. Ids stay strings; every value is escaped and selectable."""
from __future__ import annotations

import html
import json

import panel as pn
import param
from panel.viewable import Viewer

from agents.spectra.core import HEADER_TEXT_MAX_CHARS
from reviewer.components.panes import TextHTML
from reviewer.components.styles import STYLESHEETS
from reviewer.review_state import ReviewState
from reviewer.services.sky import mjd_to_date, survey_links

FIELDS = [
    ("object_id", "Object id"),
    ("target", "Target"),
    ("survey", "Survey"),
    ("ra", "RA (deg)"),
    ("dec", "Dec (deg)"),
    ("obs_mjd", "Observed"),
    ("pipeline_class", "Pipeline class"),
    ("pipeline_subclass", "Pipeline subclass"),
    ("pipeline_z", "Pipeline z"),
    ("snr", "Median S/N"),
    ("n_pix", "Pixels"),
    ("wave_min", "λ min (Å)"),
    ("wave_max", "λ max (Å)"),
    ("wavelength_medium", "Wavelengths"),
    ("format", "Format"),
    ("file_name", "File"),  # the name only: the server's folders are nobody's business
]


def links_html(record: dict) -> str:
    """The survey's public pages for this spectrum, each opening in a new tab that gets no handle on
    this page and no referrer (the app itself requests none of them). The URLs are built from validated
    numbers only (reviewer.services.sky) and escaped all the same."""
    links = survey_links(record) if record else []
    if not links:
        return ""
    anchors = "".join(f"<li><a href='{html.escape(url, quote=True)}' target='_blank' rel='noopener noreferrer'>"
                      f"{html.escape(label)}</a></li>" for label, url in links)
    return f"<div class='sr-links'><b>Open elsewhere</b><ul>{anchors}</ul></div>"


def format_value(key: str, value) -> str:
    if value is None or value == "":
        return "–"
    if key in ("ra", "dec") and isinstance(value, (int, float)):
        return f"{value:.6f}"
    if key == "obs_mjd" and isinstance(value, (int, float)):
        return f"{mjd_to_date(value)} (MJD {value:.2f})"
    if key == "pipeline_z" and isinstance(value, (int, float)):
        return f"{value:.6f}"
    if key in ("snr", "wave_min", "wave_max") and isinstance(value, (int, float)):
        return f"{value:.1f}"
    return str(value)


class MetadataPanel(Viewer):
    """Metadata table (click a value to select it whole), copy-as-JSON and the raw header."""

    state = param.ClassSelector(class_=ReviewState, doc="the ReviewState whose item is shown")

    def __init__(self, **params):
        super().__init__(**params)
        self._shown = object()  # the spectrum id on display (a sentinel before the first)
        self.state.param.watch(self._refresh, "item")
        # fixed height: a longer file name must not re-lay-out the sidebar on every spectrum
        self._table = TextHTML(sizing_mode="stretch_width", height=430, css_classes=["sr-metadata"], stylesheets=STYLESHEETS,
                               styles={"overflow-y": "auto"})
        self._links = TextHTML(sizing_mode="stretch_width", css_classes=["sr-metadata-links"], stylesheets=STYLESHEETS)
        self._header = TextHTML(sizing_mode="stretch_width", max_height=320, stylesheets=STYLESHEETS,
                                styles={"overflow": "auto"})
        self._copy = pn.widgets.Button(label="Copy metadata (JSON)", color="light",
                                       sizing_mode="stretch_width",
                                       description="Copy the spectrum's metadata above to the clipboard, as JSON.")
        self._copy_text = pn.widgets.TextInput(visible=False)
        self._copy.js_on_click(args={"src": self._copy_text},
                               code="navigator.clipboard && navigator.clipboard.writeText(src.value)")
        self._card = pn.Card(self._header, title="FITS header", collapsed=True, sizing_mode="stretch_width")
        # the header (often hundreds of cards) is only rendered while the card is open
        self._card.param.watch(lambda e: self._render_header(), "collapsed")
        self._refresh()

    def _render_header(self):
        if self._card.collapsed:
            return
        header = self.record.get("header") or {}
        if isinstance(header, str):
            try:
                header = json.loads(header)
            except ValueError:
                header = {"HEADER": header}
        lines = "\n".join(f"{k!s:<8} = {v}" for k, v in header.items())
        if len(lines) > 2 * HEADER_TEXT_MAX_CHARS:  # stored before readers bounded it (agents.spectra.core)
            lines = lines[:HEADER_TEXT_MAX_CHARS] + f"\n… ({len(lines) - HEADER_TEXT_MAX_CHARS:,} more characters not shown)"
        self._header.object = f"<pre class='sr-header'>{html.escape(lines) or '(no header)'}</pre>"

    @property
    def record(self) -> dict:
        return self.state.item.record if self.state.item is not None else {}

    def _refresh(self, *_):
        rec = self.record
        # the next task on the same spectrum: nothing to redo (a first look's masked record is another one)
        shown = (rec.get("spectrum_id"), "pipeline_class" in rec, "header" in rec)
        if shown == self._shown:
            return
        self._shown = shown
        rows = []
        for key, label in FIELDS:
            value = format_value(key, rec.get(key))
            rows.append(f"<tr><th>{html.escape(label)}</th><td class='sr-copy' data-key='{key}'>"
                        f"{html.escape(value)}</td></tr>")
        self._table.object = ("<table class='sr-meta-table'>" + "".join(rows) + "</table>") if rec else \
            "<p><em>No spectrum selected.</em></p>"
        self._links.object = links_html(rec)
        self._render_header()
        public = {k: rec.get(k) for k, _ in FIELDS}
        self._copy_text.value = json.dumps(public, default=str)

    def __panel__(self):
        return pn.Column(self._table, self._links, self._copy, self._copy_text, self._card, sizing_mode="stretch_width")
