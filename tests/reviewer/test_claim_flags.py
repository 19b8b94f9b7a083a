"""Per-step flags prefilled from the claim checker's contradicted claims (table claim_flags, schema V6):
the reviewer confirms or dismisses each through the label service, append-only and latest-wins, on the
item on screen; the note form shows them and its buttons store them. A real rules trajectory on a real
demo spectrum, with one planted false claim (its H-beta equivalent width tripled)."""
from __future__ import annotations

import re

import duckdb
import pytest

from reviewer.components.annotation_form import AnnotationForm
from reviewer.components.claims_view import ClaimFlags
from reviewer.review_state import ReviewState
from reviewer.services.claims import check_and_store
from reviewer.services.ingest import ingest_paths
from reviewer.services.labels import LabelRefused, LabelService
from reviewer.store import Store
from reviewer.store.schema import MIGRATIONS, migrate

A_STAR = "spec-55862-B6212_sp01-001.fits.gz"  # LAMOST A1IV: H-beta EW ~16 Å


@pytest.fixture(scope="module")
def planted_db(tmp_path_factory, demo_dir):
    """A database with the A star ingested and two rules trajectories on it, checked: one honest, one
    with a planted false claim."""
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    path = tmp_path_factory.mktemp("flags") / "flags.duckdb"
    with Store(path) as store:
        ingest_paths(store, [demo_dir / A_STAR], progress=False)
        rec = store.spectra.list_spectra(search=A_STAR)[0]
        spec = read_spectrum(rec["source_path"])
        honest = vet_spectrum(spec, "a", spectrum_id=rec["spectrum_id"])
        planted = vet_spectrum(spec, "a", spectrum_id=rec["spectrum_id"])
        step = next(s for s in planted.steps if s.kind == "think" and "H-beta equivalent width" in s.text)
        found = re.search(r"H-beta equivalent width = (-?[\d.]+)", step.text)
        step.text = step.text.replace(found.group(0), f"H-beta equivalent width = {3 * float(found.group(1)):.2f}")
        for traj in (honest, planted):
            traj.source_path = rec["source_path"]
            store.trajectories.save_trajectory(traj)
            check_and_store(store, traj, spec)
    return path, honest.id, planted.id, step.index


@pytest.fixture
def flags_db(planted_db, tmp_path):
    import shutil

    path, honest, planted, step = planted_db
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(path, copy)
    store = Store(copy)
    yield store, honest, planted, step
    store.close()


def contradicted(store, tid):
    return [r for r in store.claims.claims_for(tid) if r["verdict"] == "contradicted"]


def test_a_v5_database_migrates_to_v6_with_the_claim_flags_table(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, MIGRATIONS[:5]) == 5
    con.close()
    with Store(path) as store:
        assert store.schema_version == len(MIGRATIONS) >= 6
        assert "claim_flags" in store.reviews.table_names()
        assert store.claims.claim_flags_for("nothing") == []


def test_confirm_and_dismiss_are_stored_append_only_on_the_claim(flags_db):
    store, _, planted, step = flags_db
    (claim,) = contradicted(store, planted)
    assert claim["step_idx"] == step
    service = LabelService(store)
    ack = service.write_claim_flag("ann", planted, step, claim["claim_idx"], claim["checker_version"], "confirm")
    assert ack.kind == "claim_flag" and ack.trajectory_id == planted and "confirm" in ack.what
    assert claim["claim_text"] in ack.what and ack.text().startswith("Saved ")
    # a change of mind is a new row; the latest wins, nothing is deleted
    again = service.write_claim_flag("ann", planted, step, claim["claim_idx"], claim["checker_version"], "dismiss")
    service.write_claim_flag("bo", planted, step, claim["claim_idx"], claim["checker_version"], "confirm")
    history = store.claims.claim_flag_history(trajectory_id=planted)
    assert [(h["reviewer"], h["decision"]) for h in history] == [("ann", "confirm"), ("ann", "dismiss"), ("bo", "confirm")]
    assert history[1]["id"] == again.row_id
    (mine,) = store.claims.claim_flags_for(planted, "ann")
    assert (mine["trajectory_id"], mine["step_idx"], mine["claim_idx"], mine["checker_version"], mine["reviewer"],
            mine["decision"], mine["claim_text"]) == (planted, step, claim["claim_idx"], claim["checker_version"],
                                                      "ann", "dismiss", claim["claim_text"])
    # what the checker measured is kept with the decision: a dismissal can train its tolerances
    assert mine["result"]["measured"] == pytest.approx(claim["measured"])
    assert mine["result"]["tolerance"] == pytest.approx(claim["tolerance"])
    assert mine["result"]["claim"]["value"] == pytest.approx(claim["claimed"])
    assert {r["reviewer"]: r["decision"] for r in store.claims.claim_flags_for(planted)} == {"ann": "dismiss", "bo": "confirm"}


def test_a_flag_is_refused_unless_it_names_a_contradicted_claim_of_that_trajectory(flags_db):
    store, honest, planted, step = flags_db
    (claim,) = contradicted(store, planted)
    supported = next(r for r in store.claims.claims_for(planted) if r["verdict"] == "supported")
    service = LabelService(store)
    args = (step, claim["claim_idx"], claim["checker_version"])
    with pytest.raises(LabelRefused, match="confirm or dismiss"):
        service.write_claim_flag("ann", planted, *args, "maybe")
    with pytest.raises(LabelRefused, match="contradicted"):  # the honest trajectory's claim there holds
        service.write_claim_flag("ann", honest, *args, "confirm")
    with pytest.raises(LabelRefused, match="not among"):
        service.write_claim_flag("ann", planted, step, 999, claim["checker_version"], "confirm")
    with pytest.raises(LabelRefused, match="not among"):
        service.write_claim_flag("ann", planted, step, claim["claim_idx"], "claims-0", "confirm")
    with pytest.raises(LabelRefused, match="contradicted"):
        service.write_claim_flag("ann", planted, supported["step_idx"], supported["claim_idx"],
                                 supported["checker_version"], "dismiss")
    with pytest.raises(LabelRefused, match="reviewer name"):
        service.write_claim_flag("", planted, *args, "confirm")
    assert store.claims.claim_flag_history() == []


def test_the_note_form_prefills_the_steps_contradicted_claims_and_stores_the_choice(flags_db):
    store, honest, planted, step = flags_db
    (claim,) = contradicted(store, planted)
    state = ReviewState(store, reviewer="cy")
    form = AnnotationForm(state=state)
    flags = form.claim_flags
    assert isinstance(flags, ClaimFlags) and flags.state is state
    assert state.open_item(trajectory_id=planted)
    state.go_to_step(0 if step else 1)  # a step without a contradicted claim: no flag
    assert flags.flags == [] and not flags.visible
    state.go_to_step(step)
    assert [f["label"] for f in flags.flags] == [f"unsupported claim: {claim['claim_text']}"]
    assert flags.visible and flags.flags[0]["decision"] is None
    assert "unsupported claim: " + claim["claim_text"] in flags.html_text()
    flags.dismiss(0)
    assert state.writer.ack is not None and state.writer.ack.kind == "claim_flag" and state.error == ""
    (row,) = store.claims.claim_flags_for(planted, "cy")
    # the row belongs to the item and the step on screen, and to the reviewer
    assert (row["trajectory_id"], row["step_idx"], row["reviewer"], row["decision"]) == (
        state.item.trajectory_id, state.step_index, "cy", "dismiss")
    assert row["claim_text"] == claim["claim_text"] and row["claim_idx"] == claim["claim_idx"]
    assert flags.flags[0]["decision"] == "dismiss" and "dismissed" in flags.html_text()
    flags.confirm(0)
    assert flags.flags[0]["decision"] == "confirm"
    assert [h["decision"] for h in store.claims.claim_flag_history(trajectory_id=planted)] == ["dismiss", "confirm"]
    # the honest trajectory on the same spectrum has nothing to flag
    state.open_item(trajectory_id=honest)
    for i in range(len(state.steps)):
        state.go_to_step(i)
        assert flags.flags == []
    # under a campaign the flag carries the campaign's id
    sid = store.sessions.create_session("flags", "verdicts", [planted], ["cy"])
    assert state.open_campaign(sid) and state.open_item(trajectory_id=planted)
    state.go_to_step(step)
    flags.confirm(0)
    assert store.claims.claim_flag_history(trajectory_id=planted)[-1]["session_id"] == sid
