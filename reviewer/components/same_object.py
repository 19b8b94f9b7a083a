"""Same object: every spectrum the sky cross-match put with the one on screen (other epochs, other
surveys), with survey, date, S/N and the agents' answers; tick one to overlay it on the plot (in its
own colour, normalised to the spectrum on screen), or open it."""
from __future__ import annotations

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.panes import TextHTML
from reviewer.components.safe_text import escape
from reviewer.components.styles import STYLESHEETS
from reviewer.review_state import ReviewState
from reviewer.services.same_object import same_object_rows
from reviewer.services.sky import mjd_to_date

# distinct from the flux (blue), noise (orange), model (purple) and line colours of the plot
OVERLAY_COLOURS = ("#d81b60", "#00897b", "#6d4c41", "#5e35b1", "#c0ca33", "#546e7a")


def _answers(rows: list[dict]) -> str:
    return "; ".join(f"{r['task']}/{r['agent_name']}: {r.get('answer') or '–'}" for r in rows) or "–"


def _snr(value) -> str:
    return "–" if value is None else f"{float(value):.1f}"


class SameObjectPanel(Viewer):
    state = param.ClassSelector(class_=ReviewState, doc="the ReviewState whose item's object is listed")

    def __init__(self, **params):
        super().__init__(**params)
        self.rows: list[dict] = []
        self._more = 0  # spectra of the object not listed (beyond the nearest MAX_LISTED)
        self._colours: dict[str, str] = {}
        self._shown: object = object()  # the spectrum listed (a sentinel before the first)
        self._table = TextHTML(sizing_mode="stretch_width", css_classes=["sr-same-object"], stylesheets=STYLESHEETS)
        self._overlay = pn.widgets.CheckBoxGroup(options={}, value=[], inline=False, visible=False,
                                                 css_classes=["sr-same-object-overlay"])
        self._pick = pn.widgets.Select(options={}, visible=False, sizing_mode="stretch_width",
                                       css_classes=["sr-same-object-pick"])
        self._open = pn.widgets.Button(label="Open", visible=False, color="light", width=70,
                                       css_classes=["sr-same-object-open"],
                                       description="Open the chosen spectrum of this object (its first trajectory).")
        self._open.on_click(lambda _: self._pick.value and self.state.open_item(spectrum_id=self._pick.value))
        self._overlay.param.watch(self._choose, "value")
        self.state.frame.param.watch(self._follow_overlays, "overlays")
        self.state.param.watch(self._load, "item")
        self._load()

    def _load(self, *_):
        item = self.state.item
        current = item.spectrum_id if item is not None else None
        # a first look hides the agents' answers (on this spectrum too), until it is recorded
        masked = item is not None and item.first_look_task is not None
        if (current, masked) == self._shown:  # another task on the same spectrum: nothing to redo
            return
        self._shown = (current, masked)
        self.rows, self._more = same_object_rows(self.state.store, current) if current else ([], 0)
        others = [r for r in self.rows if r["spectrum_id"] != current]
        self._colours = {r["spectrum_id"]: OVERLAY_COLOURS[i % len(OVERLAY_COLOURS)] for i, r in enumerate(others)}
        labels = {f"{i + 1}. {r.get('survey') or '?'} · {mjd_to_date(r.get('obs_mjd')) or r.get('object_id')}":
                  r["spectrum_id"] for i, r in enumerate(others)}
        self._overlay.param.update(options=labels, value=[], visible=bool(others))
        self._pick.param.update(options=labels, value=next(iter(labels.values()), None), visible=bool(others))
        self._open.visible = bool(others)
        self._table.object = self._html(current)

    def _html(self, current: str | None) -> str:
        item = self.state.item
        masked = item is not None and item.first_look_task is not None

        def answers(row) -> str:
            return "(after your first look)" if masked else _answers(row["answers"])

        if not self.rows:
            record = self.state.item.record if self.state.item is not None else {}
            why = ("No other spectrum of this object." if record.get("ra") is not None and record.get("dec") is not None
                   else "This spectrum has no sky position: it cannot be matched with others.")
            return f"<p class='sr-same-object-none'><em>{why}</em></p>"
        body = []
        for r in self.rows:
            here = r["spectrum_id"] == current
            colour = self._colours.get(r["spectrum_id"])
            swatch = (f"<span class='sr-swatch' style='display:inline-block;width:10px;height:10px;"
                      f"background:{colour}'></span>") if colour else "●"
            body.append(f"<tr class='{'sr-same-object-current' if here else 'sr-same-object-row'}' "
                        f"data-spectrum='{escape(r['spectrum_id'])}'><td>{swatch}</td>"
                        f"<td>{escape(r.get('survey') or '?')}</td><td>{escape(mjd_to_date(r.get('obs_mjd')) or '–')}</td>"
                        f"<td>{escape(_snr(r.get('snr')))}</td><td>{escape(answers(r))}</td></tr>")
        more = (f"; {self._more} more, further in date, are not listed" if self._more else "")
        return (f"<p><b>{len(self.rows) + self._more} spectra</b> of this object (● the one on screen{more})</p>"
                "<table class='sr-meta-table'><tr><th></th><th>Survey</th><th>Date</th><th>S/N</th>"
                "<th>Agents' answers</th></tr>" + "".join(body) + "</table>")

    def _choose(self, event):
        wanted = [(sid, self._colours[sid]) for sid in self._colours if sid in (event.new or [])]
        if wanted != list(self.state.frame.overlays):
            self.state.frame.overlays = wanted

    def _follow_overlays(self, event):
        chosen = [sid for sid, _ in event.new]
        if sorted(chosen) != sorted(self._overlay.value):
            self._overlay.value = chosen

    def __panel__(self):
        return pn.Column(self._table, self._overlay, pn.Row(self._pick, self._open, sizing_mode="stretch_width"),
                         sizing_mode="stretch_width", css_classes=["sr-same-object-panel"])
