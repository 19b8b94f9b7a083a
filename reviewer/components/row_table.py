"""One page of rows as a plain HTML table: text cells, one selected row, a click (or Enter) opens a row.
A click names the row by its key (not its place on the page), so a click on a row of a page that has
just been replaced still opens the row the reviewer saw.

The review lists (queue, spectra, curation board: a dozen rows a page, paged on the server; the
conflicts) need none of Tabulator's machinery, and Tabulator re-measured the whole page on every new
page of rows and on every selection (~60 ms of a queue page turn in Chromium, a few ms of every item
switch).
Cells are set as text, never as HTML: names and ids come from outside the code.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import param
from panel.custom import JSComponent

ROW_TABLE_CSS = """
:host { overflow-y: auto; }
table.sr-rows { width: 100%; table-layout: fixed; border-collapse: collapse; font-size: 13px; }
.sr-rows th { text-align: left; font-weight: 600; background: #f3f4f6; border-bottom: 1px solid #d0d4da;
              padding: 4px 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sr-rows td { padding: 3px 4px; border-bottom: 1px solid #eceef1; vertical-align: top;
              white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sr-rows td:first-child { white-space: normal; overflow-wrap: anywhere; }  /* the object's name wraps */
.sr-rows tr.sr-row { cursor: pointer; }
.sr-rows tr.sr-row:hover { background: #eef2f8; }
.sr-rows tr.sr-row:focus { outline: 2px solid #1f4e9c; outline-offset: -2px; }
.sr-rows tr.sr-selected, .sr-rows tr.sr-selected:hover { background: #d6e2f5; font-weight: 600; }
"""


class RowTable(JSComponent):
    """`columns`: [{"key", "title", "width" (px or None), "description" (optional: the header's
    tooltip, else the title)}]; `rows`: one dict of strings per row, with
    `key_column` (not shown) naming it; `selected`: the index of the highlighted row (set by the
    server only). A click or Enter on a row calls the `on_click` callbacks with the row's key."""

    columns = param.List(default=[], item_type=dict)
    rows = param.List(default=[], item_type=dict)
    key_column = param.String(default="id")
    selected = param.Integer(default=None, allow_None=True)

    _esm = """
    export function render({ model }) {
      const table = document.createElement("table");
      table.className = "sr-rows";
      const colgroup = document.createElement("colgroup");
      const head = document.createElement("thead");
      const body = document.createElement("tbody");
      table.append(colgroup, head, body);
      const mark = () => {
        [...body.children].forEach((tr, i) => tr.classList.toggle("sr-selected", i === model.selected));
      };
      const buildHead = () => {
        colgroup.replaceChildren(...model.columns.map(c => {
          const col = document.createElement("col");
          if (c.width) col.style.width = `${c.width}px`;
          return col;
        }));
        const tr = document.createElement("tr");
        tr.replaceChildren(...model.columns.map(c => {
          const th = document.createElement("th");
          th.textContent = c.title;
          th.title = c.description || c.title;
          return th;
        }));
        head.replaceChildren(tr);
      };
      const buildRows = () => {
        body.replaceChildren(...model.rows.map((row, i) => {
          const tr = document.createElement("tr");
          tr.className = "sr-row";
          tr.tabIndex = 0;
          for (const c of model.columns) {
            const td = document.createElement("td");
            td.dataset.field = c.key;
            td.textContent = row[c.key] ?? "";
            td.title = td.textContent;
            tr.append(td);
          }
          const open = () => model.send_msg({ key: row[model.key_column] });
          tr.addEventListener("click", open);
          tr.addEventListener("keydown", ev => { if (ev.key === "Enter") open(); });
          return tr;
        }));
        mark();
      };
      model.on("columns", () => { buildHead(); buildRows(); });
      model.on("rows", buildRows);
      model.on("selected", mark);
      buildHead();
      buildRows();
      return table;
    }
    """
    _stylesheets: ClassVar = [ROW_TABLE_CSS]

    def __init__(self, **params):
        super().__init__(**params)
        self._click_callbacks: list[Callable[[str], None]] = []

    def on_click(self, callback: Callable[[str], None]) -> None:
        self._click_callbacks.append(callback)

    def _handle_msg(self, msg) -> None:
        key = msg.get("key") if isinstance(msg, dict) else None
        if isinstance(key, str) and key:
            for callback in self._click_callbacks:
                callback(key)
