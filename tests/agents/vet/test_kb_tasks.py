import re

import pytest

import kb
from agents.tools.measure import MEASURES
from agents.vet.evidence import DERIVED, OPS
from agents.vet.graph import MAX_TOOL_CALLS

TASK_IDS = ["cv", "cs", "ss", "mg", "wd", "o", "b", "a"]


def _leaves(crit):
    if "all" in crit or "any" in crit:
        for c in crit.get("all", crit.get("any")):
            yield from _leaves(c)
    else:
        yield crit


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_entry_is_complete_and_self_consistent(task_id):
    t = kb.task(task_id)
    for key in ("name", "target", "question", "criteria", "contaminants", "windows", "decision", "labels", "prompt"):
        assert t.get(key), f"{task_id}: missing {key}"
    assert t["prompt"].startswith(f"Analyze the provided spectrum to determine if it is a {t['target']}.")
    assert f"Key Visual Indicators of {t['target']}:" in t["prompt"]
    assert "(Primary)" in t["prompt"]
    assert 1 <= len(t["windows"]) <= MAX_TOOL_CALLS  # one zoom per window within Spec-o3's budget
    ids = set()
    for win in t["windows"]:
        lo, hi = win["range"]
        assert lo < hi and win["label"]
        for m in win.get("measures", []):
            assert m["kind"] in MEASURES, m
            ids.add(m["id"])
    for d in t.get("derived", []):
        how = [k for k in DERIVED if k in d]
        assert len(how) == 1 and set(d[how[0]]) <= ids, d
        ids.add(d["id"])
    for group in ("require", "veto"):
        for crit in t["decision"].get(group, []):
            for leaf in _leaves(crit):
                assert leaf["measure"] in ids and leaf["op"] in OPS and isinstance(leaf["value"], (int, float)), leaf
    for side in ("positive", "negative"):
        for pattern in t["labels"][side].values():
            re.compile(pattern)
