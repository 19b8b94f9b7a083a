"""The paged lists' table: a click message opens a row only when it names one of the rows shown."""
from __future__ import annotations

from reviewer.components.row_table import RowTable


def test_a_click_message_calls_back_with_its_row_and_anything_else_is_ignored():
    table = RowTable(columns=[{"key": "object", "title": "Object", "width": None}],
                     rows=[{"object": "a"}, {"object": "<b>b</b>"}])
    clicked = []
    table.on_click(clicked.append)
    for message in ({"row": 1}, {"row": True}, {"row": 2}, {"row": -1}, {"row": "1"}, {"row": None}, {}, "row", None):
        table._handle_msg(message)  # what the browser sends for a click (or a forged message)
    assert clicked == [1]
