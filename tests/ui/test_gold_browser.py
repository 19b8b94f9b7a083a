"""Issue 47, item 1, in a real browser: a gold item carries no marker in the page (the text of every shadow
root) or in its Bokeh models, and the queue rows the page receives are the same for gold and other items."""
from __future__ import annotations

import json
import random

import pytest
from browser import MODELS_JS, PAGE_TEXT_JS, open_as
from served_app import ServedApp

from reviewer.services.campaigns import create_campaign
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store

pytestmark = pytest.mark.ui

GOLD_FILE = "organiser-known-answers.csv"


@pytest.fixture(scope="module")
def gold_app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gold")
    db = tmp / "gold.duckdb"
    store = Store(db)
    seed_demo_if_empty(store)
    names = {s["spectrum_id"]: s["file_name"] for s in store.spectra.list_spectra(limit=100)}
    rows = [r for r in store.trajectories.list_trajectories(task="a") if r["answer"] in ("YES", "NO")]
    gold = tmp / GOLD_FILE
    gold.write_text("file,task,answer\n" + "".join(f"{names[r['spectrum_id']]},a,{r['answer']}\n" for r in rows))
    made = create_campaign(store, "calibration", task="a", reviewers=["ann"], gold_file=str(gold), gold_rate=0.3,
                           limit=6, rng=random.Random(0))
    gold_ids = {g["trajectory_id"] for g in made["gold"]}
    store.close()  # the server process must own the file
    app = ServedApp(db, tmp / "panel.log")
    app.gold_id = made["gold"][0]["trajectory_id"]
    app.other_id = next(t for t in made["items"] if t not in gold_ids)
    yield app
    app.stop()


def queue_rows(documents: list[str]) -> dict[str, dict]:
    """The queue rows in the page's Bokeh models, by trajectory id (any dict, or BokehJS map, with an id and an
    object)."""
    found: dict[str, dict] = {}

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "map" and isinstance(value.get("entries"), list):  # BokehJS's dict
                value = {k: v for k, v in value["entries"] if isinstance(k, str)}
            if isinstance(value.get("trajectory_id"), str) and "object" in value:
                found[value["trajectory_id"]] = value
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for doc in documents:
        walk(json.loads(doc))
    return found


def test_a_gold_item_carries_no_marker_in_the_page_or_its_bokeh_models(gold_app, page):
    seen = {}
    for kind, tid in (("gold", gold_app.gold_id), ("other", gold_app.other_id)):
        open_as(page, gold_app, "ann", f"&session=calibration&trajectory={tid}")
        seen[kind] = (page.evaluate(PAGE_TEXT_JS), page.evaluate(MODELS_JS))
    for text, models in seen.values():
        everything = (text + "\n".join(models)).lower()
        assert GOLD_FILE.lower() not in everything and "gold_items" not in everything
        assert "known answer" not in everything
    # "gold" may be a colour name in a stylesheet: a gold item's page has it exactly as often as another's
    assert [(t + "\n".join(m)).lower().count("gold") for t, m in seen.values()] == \
        [(seen["other"][0] + "\n".join(seen["other"][1])).lower().count("gold")] * 2
    rows = queue_rows(seen["gold"][1])
    assert gold_app.gold_id in rows and gold_app.other_id in rows, sorted(rows)
    assert len({frozenset(r) for r in rows.values()}) == 1  # every row the same fields, gold or not
    assert page.console_errors == []
