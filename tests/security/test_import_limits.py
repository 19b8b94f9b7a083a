"""`specreview import` of hostile rows (issue 18, finding 9): JSON nested past the import's depth limit
is refused on its own line with a one-line reason naming the file and line, the good rows import, and
nothing prints a traceback. A whole .json file nested that deep is refused whole, naming the file."""
from __future__ import annotations

import json

import pytest

from reviewer.cli import main
from reviewer.cli.import_rows import MAX_JSON_DEPTH
from reviewer.store import Store

GOOD = {"conversations": [{"from": "human", "value": "Is this a white dwarf?"},
                          {"from": "gpt", "value": "<answer>YES</answer>"}], "images": []}


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def trajectories(db) -> int:
    with Store(db) as store:
        return store.trajectories.count_trajectories()


@pytest.mark.parametrize("depth", [100_000, 1_000, MAX_JSON_DEPTH + 1])
def test_a_deeply_nested_jsonl_line_is_refused_alone(tmp_path, capsys, depth):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join([json.dumps(GOOD), '{"conversations": ' + nested(depth) + "}",
                               json.dumps({**GOOD, "id": "second"})]) + "\n")
    db = tmp_path / "d.duckdb"
    assert main(["import", "sft", str(rows), "--db", str(db)]) == 1  # a row was refused
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "RecursionError" not in err
    assert "imported trajectories: 2; already present: 0; refused: 1" in out
    refused = [line for line in err.splitlines() if "refused" in line]
    assert len(refused) == 1 and "rows.jsonl line 2" in refused[0] and "nested" in refused[0], err
    assert len(refused[0]) < 300  # the reason, not the row
    assert trajectories(db) == 2


def test_nesting_up_to_the_limit_is_not_refused_for_depth(tmp_path, capsys):
    row = {**GOOD, "meta": json.loads(nested(MAX_JSON_DEPTH - 1))}  # the row object is the first level
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row) + "\n")
    assert main(["import", "sft", str(rows), "--db", str(tmp_path / "d.duckdb")]) == 0
    assert "nested" not in capsys.readouterr().err


def test_a_deeply_nested_json_file_is_refused_whole(tmp_path, capsys):
    rows = tmp_path / "rows.json"
    rows.write_text("[" + json.dumps(GOOD) + ", " + nested(100_000) + "]")
    db = tmp_path / "d.duckdb"
    assert main(["import", "sft", str(rows), "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "rows.json" in err and "nested" in err and len(err.splitlines()) == 1, err
    assert trajectories(db) == 0
