"""Same-object groups in the store: a cross-match's groups stored whole, merged, replaced."""
from __future__ import annotations

import ast
from pathlib import Path

import reviewer.store

STORE = Path(reviewer.store.__file__).parent


def groups_of(store) -> dict[str, tuple[str, int]]:
    return {sid: (group, n) for sid, group, n in store.db.execute(
        "SELECT spectrum_id, group_id, n_members FROM object_groups").fetchall()}


def test_a_cross_matchs_groups_replace_the_last_ones_whole(store):
    big = [f"s{i:06d}" for i in range(20_000)]  # 20k visits of one catalogue position (a survey's repeats)
    store.objects.replace_groups([big, ["a1", "a2"]], 1.5, 20_002)
    stored = groups_of(store)
    assert len(stored) == 20_002
    assert stored["s019999"] == ("s000000", 20_000) and stored["a2"] == ("a1", 2)
    assert store.objects.last_match()["n_spectra"] == 20_002
    store.objects.replace_groups([["a1", "b1", "b2"]], 2.0, 3)
    assert groups_of(store) == {"a1": ("a1", 3), "b1": ("a1", 3), "b2": ("a1", 3)}
    assert store.objects.last_match()["radius_arcsec"] == 2.0


def test_groups_merge_into_one_named_by_its_smallest_id(store):
    store.objects.replace_groups([["c1", "c2"], ["d1", "d2", "d3"]], 1.5, 5)
    store.objects.merge_group(sorted(store.objects.group_members(["c2", "d3", "e1"])))
    assert groups_of(store) == {sid: ("c1", 6) for sid in ("c1", "c2", "d1", "d2", "d3", "e1")}


def test_no_store_write_runs_one_statement_per_row():
    """`executemany` runs its statement once per row: 200k same-object rows took ~100 s of the first page
    after a large import (docs/benchmarks.md, issue 22). Many rows go in one statement (Database.insert_rows)."""
    calls = [f"{path.name}:{node.lineno}" for path in sorted(STORE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Attribute) and node.attr == "executemany"]
    assert calls == []
