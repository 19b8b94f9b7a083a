"""A table whose rows live in the database: one page at a time, every row reachable.

Subclasses say how to count and fetch rows (`count()`, `fetch(offset, limit)`) and what a click opens
(`open_row(row_id)`); this keeps the page, the selection on the row of the item on screen, and the
"rows a-b of N" line. No silent cap: paging reaches the last row, and n/b go through the state.
"""
from __future__ import annotations

import logging
from typing import ClassVar

import panel as pn
import param
from panel.viewable import Viewer

from reviewer.components.next_tick import NewestReads
from reviewer.components.panes import TextHTML
from reviewer.components.row_table import RowTable
from reviewer.components.safe_text import escape
from reviewer.review_state import ReviewState
from reviewer.services import background

log = logging.getLogger(__name__)

ROW_HEIGHT_PX = 42  # a row whose object name wraps onto two lines


class PagedTable(Viewer):
    page = param.Integer(default=0, bounds=(0, None))
    page_size = param.Integer(default=12, bounds=(1, None))
    total = param.Integer(default=0)
    rows = param.List(default=[], doc="the rows of the current page")

    id_key = "id"
    columns: ClassVar[dict[str, str]] = {}  # row key -> column title
    widths: ClassVar[dict[str, int]] = {}  # px; the other columns share what is left
    css = "sr-paged"

    def __init__(self, **params):
        super().__init__(**params)
        self._reads = NewestReads()
        # a fixed height: the last, shorter page does not re-lay-out the column around it
        self._table = RowTable(
            columns=[{"key": k, "title": t, "width": self.widths.get(k)} for k, t in self.columns.items()],
            rows=self._cells(), key_column=self.id_key, sizing_mode="stretch_width",
            height=30 + ROW_HEIGHT_PX * self.page_size, css_classes=[f"{self.css}-table"])
        self._table.on_click(self._on_click)
        self._prev_page = pn.widgets.Button(label="‹", width=36, css_classes=[f"{self.css}-prev-page"],
                                            description="Previous page of the list")
        self._next_page = pn.widgets.Button(label="›", width=36, css_classes=[f"{self.css}-next-page"],
                                            description="Next page of the list")
        self._prev_page.on_click(lambda _: self.go_to_page(self.page - 1))
        self._next_page.on_click(lambda _: self.go_to_page(self.page + 1))
        self._where = TextHTML("", css_classes=[f"{self.css}-where"], margin=(8, 4))

    # ---- to implement ---------------------------------------------------------------------------
    def count(self) -> int:
        raise NotImplementedError

    def fetch(self, offset: int, limit: int) -> list[dict]:
        raise NotImplementedError

    def open_row(self, row_id: str) -> None:
        raise NotImplementedError

    def current_id(self) -> str | None:
        """The id of the item on screen (its row is selected when on this page)."""
        return None

    def row_values(self, row: dict) -> dict:
        return {k: row.get(k) for k in (self.id_key, *self.columns)}

    # ---- paging ---------------------------------------------------------------------------------
    def refresh(self, *_) -> None:
        self._reads.begin()  # a read begun before this one (refresh_later) is not put in after it
        self.show_read(self.read(self.page), self.page)

    def refresh_later(self, *_) -> None:
        """`refresh` for a change the reviewer is not waiting on (a verdict's, one made elsewhere) in a
        served page: the reads run on the "lists" lane and what they found goes in at the document's next
        tick, unless a newer read went in first. The page's thread stays free for the reviewer's next key
        meanwhile (at 1M trajectories the queue's reads hold it 60-300 ms). Outside a served page: now."""
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            self.refresh()
            return
        ticket, page = self._reads.begin(), self.page

        def read():
            try:
                found = self.read(page)
            except Exception as err:  # the next change reads again; nothing on the page is changed meanwhile
                log.warning("the list was not read again: %s", err)
                return
            self._reads.put_in_later(doc, ticket, lambda: self.show_read(found, page))

        background.submit("lists", read)

    def read(self, page: int) -> dict:
        """What `show_read` puts in the page: the total, and the rows of `page` (the last one, if fewer now)."""
        total = self.count()
        page = min(page, max(0, (total - 1) // self.page_size))
        return {"total": total, "page": page, "rows": self.fetch(page * self.page_size, self.page_size)}

    def show_read(self, found: dict, page: int) -> None:
        """`found` (read for `page`): all of it, or its total alone when the reviewer turned the page since
        (the rows on screen were read after it)."""
        if self.page != page:
            self.total = found["total"]
            return
        # one update: the "a-b of N" line follows a new total even when the page's rows are the same
        self.param.update(total=found["total"], page=found["page"], rows=found["rows"])

    def go_to_page(self, page: int) -> None:
        last = max(0, (self.total - 1) // self.page_size)
        page = max(0, min(int(page), last))
        if page != self.page:
            self.page = page
            self.rows = self.fetch(self.page * self.page_size, self.page_size)

    def show_position(self, position: int | None) -> None:
        """Turn to the page holding the row at `position` (0-based) of the whole list."""
        if position is not None:
            self.go_to_page(position // self.page_size)

    def _cells(self) -> list[dict[str, str]]:
        """The page's rows as the table shows them: text per column ('' for none), and the row's id."""
        return [{k: "" if v is None else str(v) for k, v in self.row_values(r).items()
                 if k in self.columns or k == self.id_key} for r in self.rows]

    @param.depends("rows", "total", watch=True)
    def _sync(self):
        self._table.rows = self._cells()
        self.select_current()
        first = self.page * self.page_size
        shown = f"{first + 1}–{first + len(self.rows)} of {self.total}" if self.rows else f"0 of {self.total}"
        self._where.object = f"<span>{escape(shown)}</span>"

    def select_current(self, *_) -> None:
        ids = [r[self.id_key] for r in self.rows]
        wanted = self.current_id()
        selected = ids.index(wanted) if wanted in ids else None
        if self._table.selected != selected:
            self._table.selected = selected

    def _on_click(self, row_id: str) -> None:
        if row_id != self.current_id():  # an id from the page: opening an unknown one says so, and nothing changes
            with pn.io.hold():  # the whole item change in one patch message (see keyboard.py)
                self.open_row(row_id)

    def pager(self) -> pn.Row:
        return pn.Row(self._prev_page, self._where, self._next_page, sizing_mode="stretch_width")


class TrajectoryTable(PagedTable):
    """A paged table of trajectories: a click opens its item, the item on screen has its row selected."""

    state = param.ClassSelector(class_=ReviewState)
    id_key = "trajectory_id"

    def open_row(self, row_id: str) -> None:
        self.state.open_item(trajectory_id=row_id)

    def current_id(self) -> str | None:
        item = self.state.item
        return item.trajectory_id if item is not None else None
