"""The spectrum list: search by id / survey / class / file, one page at a time; a click opens the
spectrum through the review state (with its first trajectory, or the viewer alone)."""
from __future__ import annotations

from typing import ClassVar

import panel as pn
import param

from reviewer.components.paged_table import PagedTable
from reviewer.review_state import ReviewState


class SpectrumListView(PagedTable):
    state = param.ClassSelector(class_=ReviewState)
    search = param.String(default="", doc="free-text filter on id, survey, class and file name")

    id_key = "spectrum_id"
    columns: ClassVar = {"object_id": "Object", "survey": "Survey", "pipeline_class": "Class", "pipeline_z": "z"}
    widths: ClassVar = {"object_id": 130, "survey": 64, "pipeline_class": 64, "pipeline_z": 56}
    css = "sr-spectra"

    def __init__(self, **params):
        super().__init__(**params)
        self._search = pn.widgets.TextInput(placeholder="Search id, survey, class, file…", css_classes=["sr-search"],
                                            sizing_mode="stretch_width")
        # value_input follows every key stroke; value only changes on Enter / blur
        self._search.param.watch(lambda e: setattr(self, "search", e.new or ""), "value_input")
        self.param.watch(lambda _: self.refresh(), "search")
        self.state.param.watch(self.select_current, "item")
        # spectra added elsewhere (the CLI): the mark's spectra count. Its other parts move with every
        # verdict anyone stores, which this list does not show; re-reading it then, in each open page,
        # was a cost that grew with reviewers times their verdicts.
        self.state.param.watch(lambda e: e.new[0] != e.old[0] and self.refresh(), "store_mark")
        self.refresh()

    def count(self) -> int:
        return self.state.spectra.count(self.search)

    def fetch(self, offset: int, limit: int) -> list[dict]:
        return self.state.spectra.page(self.search, offset, limit)

    def open_row(self, row_id: str) -> None:
        self.state.open_item(spectrum_id=row_id)

    def current_id(self) -> str | None:
        return self.state.item.spectrum_id if self.state.item is not None else None

    def row_values(self, row: dict) -> dict:
        z = row.get("pipeline_z")
        return {**super().row_values(row), "pipeline_z": None if z is None else f"{z:.4f}"}

    def __panel__(self):
        return pn.Column(self._search, self._table, self.pager(), sizing_mode="stretch_width")
