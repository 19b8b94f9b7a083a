"""The spectrum list: search by id / survey / class / file, click to open, next / previous."""
from __future__ import annotations

import pandas as pd
import panel as pn
import param
from panel.viewable import Viewer

COLUMNS = {"object_id": "Object", "survey": "Survey", "pipeline_class": "Class",
           "pipeline_subclass": "Sub", "pipeline_z": "z"}


class SpectrumList(Viewer):
    """State: the records shown (the app fills them from the store on `search`) and the selection."""

    records = param.List(default=[], doc="spectrum records: dicts with spectrum_id and COLUMNS")
    search = param.String(default="", doc="free-text filter; the app queries the store with it")
    selected_id = param.String(default=None, allow_None=True)

    def __init__(self, **params):
        super().__init__(**params)
        self._search = pn.widgets.TextInput(placeholder="Search id, survey, class, file…", css_classes=["sr-search"],
                                            sizing_mode="stretch_width")
        # value_input follows every key stroke; value only changes on Enter / blur
        self._search.param.watch(lambda e: setattr(self, "search", e.new or ""), "value_input")
        self._table = pn.widgets.Tabulator(
            self._frame(), selectable=1, disabled=True, show_index=False, pagination="local", page_size=12,
            sizing_mode="stretch_width", css_classes=["sr-spectrum-table"], hidden_columns=["spectrum_id"],
            titles=COLUMNS, layout="fit_data_stretch",
        )
        self._table.param.watch(self._on_selection, "selection")
        self._prev = pn.widgets.Button(label="◀ Previous", css_classes=["sr-prev-spectrum"], sizing_mode="stretch_width")
        self._next = pn.widgets.Button(label="Next ▶", css_classes=["sr-next-spectrum"], sizing_mode="stretch_width")
        self._prev.on_click(lambda _: self.step(-1))
        self._next.on_click(lambda _: self.step(+1))
        self._count = pn.pane.Str("", css_classes=["sr-count"])
        self._sync_table()

    def _frame(self) -> pd.DataFrame:
        cols = ["spectrum_id", *COLUMNS]
        df = pd.DataFrame([{c: r.get(c) for c in cols} for r in self.records], columns=cols)
        df["object_id"] = df["object_id"].astype("string")  # ids stay strings, never floats
        return df

    @param.depends("records", watch=True)
    def _sync_table(self):
        self._table.value = self._frame()
        self._count.object = f"{len(self.records)} spectra"
        self._select_row_of(self.selected_id)

    @param.depends("selected_id", watch=True)
    def _sync_selection(self):
        self._select_row_of(self.selected_id)

    def _select_row_of(self, spectrum_id):
        ids = [r["spectrum_id"] for r in self.records]
        rows = [ids.index(spectrum_id)] if spectrum_id in ids else []
        if self._table.selection != rows:
            self._table.selection = rows
        if rows:
            page = rows[0] // self._table.page_size + 1
            if self._table.page != page:
                self._table.page = page

    def _on_selection(self, event):
        if event.new:
            idx = event.new[0]
            if 0 <= idx < len(self.records):
                self.selected_id = self.records[idx]["spectrum_id"]

    def step(self, delta: int) -> None:
        ids = [r["spectrum_id"] for r in self.records]
        if not ids:
            return
        pos = ids.index(self.selected_id) if self.selected_id in ids else -1
        self.selected_id = ids[(pos + delta) % len(ids)] if pos >= 0 else ids[0]

    def __panel__(self):
        return pn.Column(self._search, self._table, pn.Row(self._prev, self._next), self._count,
                         sizing_mode="stretch_width")
