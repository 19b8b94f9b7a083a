"""Unjudgeable spectra in the reviewer (issue 20, item 2): the store keeps the refusal (no answer, its
status and reason), the queue's "Ans." column says "n/j" rather than NO, triage puts such items first
for a human, and no redshift field shows NaN. Real files: the all-masked SDSS spectrum and the DESI sky
fibre of tests/agents/test_unjudgeable.py, added to the demo store with the agents' trajectories on them."""
from __future__ import annotations

import math
import shutil

import pytest
from bokeh.document import Document

from agents.spectra import read_spectrum
from agents.trajectory import UNJUDGEABLE
from agents.verify import verify_spectrum
from agents.vet import vet_spectrum
from reviewer.components.queue import QueueView
from reviewer.review_state import ReviewState
from reviewer.services import triage
from reviewer.services.consensus import agent_label
from reviewer.services.demo import seed_demo_if_empty
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store

ALL_MASKED_SDSS = "sdss_gelato/spec-0269-51581-0003.fits"
DESI_SKY = ("desi_specutils/coadd-sv3-dark-26065.fits", "616088619186127404")


@pytest.fixture(scope="module")
def db_with_refusals(tmp_path_factory, shared_spectra):
    """The demo store plus the two unusable spectra, each vetted for task `a` and verified."""
    paths = [shared_spectra / ALL_MASKED_SDSS, shared_spectra / DESI_SKY[0]]
    if not all(p.is_file() for p in paths):
        pytest.skip("the unusable spectra are missing from the shared corpus")
    path = tmp_path_factory.mktemp("unjudgeable") / "review.duckdb"
    with Store(path) as store:
        seed_demo_if_empty(store)
        ingest_paths(store, [str(p) for p in paths], progress=False)
        for rec in store.spectra.list_spectra(limit=1000):
            if rec["file_name"] == paths[0].name or rec["target"] == DESI_SKY[1]:
                spec = read_spectrum(rec["source_path"], rec["target"])
                for traj in (vet_spectrum(spec, "a", spectrum_id=rec["spectrum_id"]),
                             verify_spectrum(spec, spectrum_id=rec["spectrum_id"])):
                    store.trajectories.save_trajectory(traj)
    return path


@pytest.fixture
def store(db_with_refusals, tmp_path):
    path = tmp_path / "review.duckdb"
    shutil.copyfile(db_with_refusals, path)
    with Store(path) as s:
        yield s


def _refused_ids(store) -> set[str]:
    return {t["id"] for t in store.trajectories.list_trajectories() if t["outcome"].get("status") == UNJUDGEABLE}


def test_the_store_keeps_the_refusal_without_an_answer(store):
    refused = [t for t in store.trajectories.list_trajectories() if t["id"] in _refused_ids(store)]
    ours = [t for t in refused if "demo" not in t["source_path"]]  # the demo's M0 star: tasks a and wd
    assert len(ours) == 4 and {t["task"] for t in ours} == {"a", "verify"}
    for row in refused:
        assert row["answer"] is None and row["answer_z"] is None and row["credibility"] is None
        assert agent_label(row["task"], row["answer"], row["answer_z"], row["outcome"]) == {}
    assert all("0 usable pixels" in row["outcome"]["reason"] for row in ours)


def test_the_queue_says_unjudgeable_not_no(store):
    queue = QueueView(state=ReviewState(store, reviewer="ann"))
    queue.page_size = 200
    queue.refresh()
    cells = {c["trajectory_id"]: c for c in queue._cells()}
    refused = _refused_ids(store)
    assert refused <= set(cells)
    assert {cells[t]["answer"] for t in refused} == {"n/j"}
    assert {cells[t]["answer"] for t in set(cells) - refused} >= {"YES", "NO", "STAR"}
    assert not any("nan" in v.lower() for c in cells.values() for v in c.values())


def test_triage_puts_unjudgeable_items_first(store):
    triage.refresh(store)
    refused = _refused_ids(store)
    ranked = store.queue.queue_items(order="priority", limit=len(refused) + 1)
    assert {r["trajectory_id"] for r in ranked[:len(refused)]} == refused
    assert all(r["priority"] == 1.0 for r in ranked[:len(refused)]) and ranked[-1]["priority"] < 1.0
    signals = triage.compute_signals(store)
    assert set(signals.index[signals["unjudgeable"]]) == refused
    # and a verdict on one recomputes its priority the same way
    one = sorted(refused)[0]
    triage.refresh(store, [one], refit=False)
    assert store.triage.priorities([one])[one]["priority"] == 1.0


def test_abstention_never_accepts_an_unjudgeable_item(store):
    """Abstention estimates which answers could be accepted unseen: a refusal is no answer, so it is in
    neither its labelled nor its unreviewed frame (nor in the training rows of the weights)."""
    refused = _refused_ids(store)
    for weights in ("fitted for the read", "stored (the priorities stored with the signals)"):
        if weights.startswith("stored"):
            triage.refresh(store)
        inputs = triage.triage_inputs(store)
        assert (inputs.model.id is not None) == weights.startswith("stored")
        labelled, unreviewed = triage.answers(store, inputs.model)  # answer by answer
        assert refused and not refused & set(inputs.labelled.index) and not refused & set(labelled.index)
        assert not refused & set(unreviewed.index)
        signals = triage.compute_signals(store)
        unseen = signals[(signals["n_reviewers"] == 0) & ~signals.index.isin(labelled.index)]
        # the report counts the unreviewed answers, the refusals not among them
        assert inputs.unreviewed["n"].sum() == len(unreviewed) == len(unseen) - len(refused & set(unseen.index)) > 0
    history = [{"trajectory_id": t, "action": "override", "n_before": 0} for t in sorted(refused)]
    assert triage.training_rows(history, triage.compute_signals(store)).empty


def test_agent_labels_never_carry_a_nan_redshift():
    for z in (math.nan, math.inf, -math.inf):
        assert agent_label("verify", "GALAXY", z, {}) == {"type": "GALAXY"}
        assert agent_label("verify", None, None, {"brief": {"type": "QSO", "redshift": z}}) == {"type": "QSO"}
    assert agent_label("verify", "QSO", 2.5, {}) == {"type": "QSO", "z": 2.5}


def test_a_cleared_redshift_field_is_empty_not_nan():
    """Panel sends a FloatInput's None to the browser as NaN once it has held a number (panel
    widgets/input.py FloatInput._process_param_change), and Bokeh writes NaN as the text "NaN":
    the redshift inputs send None, which Bokeh shows as an empty box."""
    from reviewer.components.z_input import ZInput

    field = ZInput(label="Corrected z", format="0.00000")
    model = field.get_root(Document())
    field.value = 0.25
    assert model.value == 0.25
    field.value = None
    assert model.value is None


def test_the_vi_form_z_is_empty_not_nan_on_a_sky_fibre(store, wait_for_background_renders):
    from reviewer.components.vi_form import VIForm

    state = ReviewState(store, reviewer="ann")
    form = VIForm(state=state)
    model = form._z.get_root(Document())
    form.z = 0.37  # typed on the previous item
    sky = next(t["id"] for t in store.trajectories.list_trajectories(task="verify")
               if t["outcome"].get("status") == UNJUDGEABLE)
    state.open_item(trajectory_id=sky)
    wait_for_background_renders()
    assert form.z is None and model.value is None


def test_the_corrected_z_is_empty_not_nan_on_a_sky_fibre(store, wait_for_background_renders):
    from reviewer.components.review_form import ReviewForm

    state = ReviewState(store, reviewer="ann")
    form = ReviewForm(state=state)
    model = form._z.get_root(Document())
    galaxy = next(t["id"] for t in store.trajectories.list_trajectories(task="verify") if t["answer_z"])
    state.open_item(trajectory_id=galaxy)
    state.draft.label = {"type": "QSO", "z": 1.5}  # a corrected z in the field (the form starts with none, issue 46)
    assert model.value == pytest.approx(1.5)
    sky = next(t["id"] for t in store.trajectories.list_trajectories(task="verify")
               if t["outcome"].get("status") == UNJUDGEABLE)
    state.open_item(trajectory_id=sky)
    wait_for_background_renders()
    assert form._z.value is None
    assert model.value is None  # not NaN: the browser would write "NaN" in the field


def test_exports_and_stats_take_refusals(store, tmp_path):
    """A refusal has no Spec-o3 SFT form (its rows end in a boxed YES/NO): an accepted one is skipped,
    saying why. In the stats an approval of a refusal settles no label, and an override to a label
    counts as a miss of the agent's (it gave none)."""
    from datetime import UTC, datetime, timedelta

    from reviewer.services.exports import export_sft
    from reviewer.services.stats import review_stats

    refused = sorted(t["id"] for t in store.trajectories.list_trajectories(task="a")
                     if t["outcome"].get("status") == UNJUDGEABLE)
    at = iter(datetime.now(UTC) + timedelta(seconds=i + 1) for i in range(10))
    store.labels.add_curation_event(refused[0], "rev", "revise", created_at=next(at))
    for who in ("aud1", "aud2"):
        store.labels.add_curation_event(refused[0], who, "audit", "approve", created_at=next(at))
    for who in ("rev", "aud1", "aud2"):
        store.labels.add_curation_event(refused[0], who, "vote", "accept", created_at=next(at))
    result = export_sft(store, tmp_path / "sft")
    assert result.written == 0 and result.skipped == [
        (refused[0], "the agent refused the spectrum as unjudgeable: no answer to train on")]

    store.labels.add_review(refused[0], "ann", "approve")
    store.labels.add_review(refused[1], "ann", "override", label={"answer": "NO"})
    scores = review_stats(store)["scores"].set_index("task")
    assert scores.at["a", "n"] == 1 and scores.at["a", "accuracy"] == 0.0


def test_the_command_line_stores_and_counts_refusals(shared_spectra, tmp_path, capsys):
    from reviewer.cli import main

    path = shared_spectra / ALL_MASKED_SDSS
    if not path.is_file():
        pytest.skip(f"{ALL_MASKED_SDSS} missing from the shared corpus")
    db = tmp_path / "cli.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--no-progress", "--no-claims", str(path)]) == 0
    assert "(unjudgeable: 1)" in capsys.readouterr().out
    assert main(["verify", "--db", str(db), "--no-progress", "--no-claims", str(path)]) == 0
    assert "unjudgeable: 1" in capsys.readouterr().out
    with Store(db) as store:
        rows = store.trajectories.list_trajectories()
        assert {(r["task"], r["answer"], r["outcome"]["status"]) for r in rows} == {("a", None, UNJUDGEABLE),
                                                                                    ("verify", None, UNJUDGEABLE)}
