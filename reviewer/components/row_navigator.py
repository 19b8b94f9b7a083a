"""Shared by the lists whose rows are records with an id (spectra, queue items): keep the table's
selection and page on the selected id, follow clicks, step to the next / previous row."""
from __future__ import annotations

import param
from panel.viewable import Viewer


class RowNavigator(Viewer):
    selected_id = param.String(default=None, allow_None=True)

    id_key = "id"  # the record key holding the row's id
    wrap = False  # step past the end: wrap around (True) or stop at the last row (False)

    def _records(self) -> list[dict]:
        raise NotImplementedError

    def _ids(self) -> list[str]:
        return [r[self.id_key] for r in self._records()]

    @param.depends("selected_id", watch=True)
    def _sync_selection(self):
        self._select_row_of(self.selected_id)

    def _select_row_of(self, wanted) -> None:
        ids = self._ids()
        rows = [ids.index(wanted)] if wanted in ids else []
        if self._table.selection != rows:
            self._table.selection = rows
        if rows:
            page = rows[0] // self._table.page_size + 1
            if self._table.page != page:
                self._table.page = page

    def _on_selection(self, event) -> None:
        records = self._records()
        if event.new and 0 <= event.new[0] < len(records):
            self.selected_id = records[event.new[0]][self.id_key]

    def step(self, delta: int) -> None:
        ids = self._ids()
        if not ids:
            return
        if self.selected_id not in ids:
            self.selected_id = ids[0]
            return
        pos = ids.index(self.selected_id) + delta
        self.selected_id = ids[pos % len(ids)] if self.wrap else ids[max(0, min(len(ids) - 1, pos))]
