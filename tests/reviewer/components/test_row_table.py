"""The paged lists' table: a click message opens the row it names by key; anything else does nothing."""
from __future__ import annotations

from reviewer.components.row_table import RowTable


def test_a_click_message_calls_back_with_its_rows_key_and_anything_else_is_ignored():
    table = RowTable(columns=[{"key": "object", "title": "Object", "width": None}], key_column="id",
                     rows=[{"id": "t1", "object": "a"}, {"id": "t2", "object": "<b>b</b>"}])
    clicked = []
    table.on_click(clicked.append)
    for message in ({"key": "t2"}, {"key": ""}, {"key": 2}, {"key": None}, {"row": 1}, {}, "key", None):
        table._handle_msg(message)  # what the browser sends for a click (or a forged message)
    assert clicked == ["t2"]
