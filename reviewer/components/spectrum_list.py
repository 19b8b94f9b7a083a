"""The spectrum list: search by id / survey / class / file, click to open, next / previous."""
from __future__ import annotations

import pandas as pd
import panel as pn
import param

from reviewer.components.row_navigator import RowNavigator

COLUMNS = {"object_id": "Object", "survey": "Survey", "pipeline_class": "Class",
           "pipeline_subclass": "Sub", "pipeline_z": "z"}


class SpectrumList(RowNavigator):
    """State: the records shown (the app fills them from the store on `search`) and the selection."""

    id_key = "spectrum_id"
    wrap = True

    records = param.List(default=[], doc="spectrum records: dicts with spectrum_id and COLUMNS")
    search = param.String(default="", doc="free-text filter; the app queries the store with it")

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

    def _records(self) -> list[dict]:
        return self.records

    def __panel__(self):
        return pn.Column(self._search, self._table, pn.Row(self._prev, self._next), self._count,
                         sizing_mode="stretch_width")
