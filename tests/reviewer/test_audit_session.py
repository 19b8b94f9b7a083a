"""The audit workflow without a browser: a real DuckDB file seeded with the demo spectra and the
real `rules` agent's trajectories, driven through the session's methods and its key map."""
from __future__ import annotations

from pathlib import Path

import pytest
from bokeh.document import Document

from agents.trajectory import AgentInfo, Trajectory
from layouts import create_app
from reviewer.app import seed_demo_if_empty
from reviewer.audit import AuditSession
from reviewer.store import Store


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("audit") / "audit.duckdb"
    store = Store(path)
    assert seed_demo_if_empty(store) == 13
    yield store
    store.close()


def session_for(store, name):
    s = AuditSession(store, reviewer=name)
    s.open_first_item()
    return s


def test_opens_on_the_first_queue_item_with_its_trajectory(seeded_db):
    s = session_for(seeded_db, "alice")
    assert s.trajectory is not None and s.player.trajectory.id == s.queue.items[0]["trajectory_id"]
    assert s.plot.spectrum is not None and s.record["spectrum_id"] == s.trajectory.spectrum_id


def test_keys_step_rate_and_approve_write_labels(seeded_db):
    s = session_for(seeded_db, "alice")
    tid = s.trajectory_id
    for _ in range(3):
        s.keyboard.press("j")
    assert s.player.step_index == 3
    s.keyboard.press("ArrowLeft")
    assert s.player.step_index == 2
    s.keyboard.press("4")
    s.keyboard.press("a")
    assert seeded_db.latest_review(tid, "alice")["action"] == "approve"
    assert seeded_db.latest_rating(tid, "alice")["score"] == 4
    assert "#2 this session" in s.ack
    s.keyboard.press("n")
    assert s.trajectory_id != tid


def test_step_images_come_from_the_spectrum_when_deferred(seeded_db):
    s = session_for(seeded_db, "alice")
    results = [st for st in s.trajectory.steps if st.kind == "tool_result" and not st.is_error]
    png = s.image_for(results[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_annotation_and_blind_view(seeded_db):
    alice, bob = session_for(seeded_db, "alice"), session_for(seeded_db, "bob")
    alice.keyboard.press("j")
    alice.annotation.param.update(comment="H-delta EW quoted <b>twice</b>", flags=["claim_not_in_render"])
    alice.annotation.submit()
    notes = seeded_db.annotations_for(alice.trajectory_id, "alice")
    assert notes[-1]["step_idx"] == 1 and notes[-1]["flags"] == ["claim_not_in_render"]
    # bob has no verdict on this item yet: alice's verdict is hidden from him
    bob._load_my_labels()
    assert "appear once you have saved" in bob.others.object


def test_two_reviewers_disagree_and_a_merger_resolves(seeded_db):
    alice, bob = session_for(seeded_db, "alice"), session_for(seeded_db, "bob")
    alice.keyboard.press("n"), bob.keyboard.press("n")
    assert alice.trajectory_id == bob.trajectory_id
    tid = alice.trajectory_id
    alice.form.approve()
    bob.form.reject()
    assert "alice" in bob.others.object  # bob saved his: now he sees alice's
    alice.refresh_conflicts()
    assert tid in [i["item_id"] for i in alice.conflicts.items]
    alice.refresh_queue()
    assert any(r["trajectory_id"] == tid and r["disagreement"] for r in alice.queue.items)
    carol = session_for(seeded_db, "carol")
    carol.refresh_conflicts()
    carol.conflicts.selected = [i["item_id"] for i in carol.conflicts.items].index(tid)
    carol.conflicts.param.update(action="reject", merger_comment="No Balmer lines at all: reject.")
    carol.conflicts.submit()
    carol.refresh_conflicts()
    assert tid not in [i["item_id"] for i in carol.conflicts.items]
    assert verdict_for(seeded_db, tid)["final"]["action"] == "reject"


def test_reviewer_name_is_required_before_writing(seeded_db):
    s = session_for(seeded_db, "")
    before = seeded_db.count_labels("reviews")
    s.keyboard.press("a")
    assert seeded_db.count_labels("reviews") == before and "Enter your name" in s.error


def test_curation_revision_audits_and_votes(seeded_db):
    s = session_for(seeded_db, "dave")
    tid = s.trajectory_id
    call = next(st for st in s.trajectory.steps if st.kind == "tool_call")
    s.player.go(call.index)
    s.curation.step_args = '{"wavelength_range": [4080, 4130], "label": "H-delta"}'
    s.curation.act("revise", None)
    assert seeded_db.revisions_for(tid)[-1]["tool_args"]["wavelength_range"] == [4080, 4130]
    for who in ("erin", "frank"):
        other = session_for(seeded_db, who)
        other.open_trajectory(tid)
        other.curation.act("audit", "approve")
    for who in ("erin", "frank", "grace"):
        other = session_for(seeded_db, who)
        other.open_trajectory(tid)
        other.curation.act("vote", "accept")
    s.refresh_board()
    assert next(r for r in s.curation.rows if r["trajectory_id"] == tid)["state"] == "accepted"


def test_stats_page_builds_from_the_labels(seeded_db):
    s = session_for(seeded_db, "alice")
    s.stats_panel.refresh()
    assert len(s.stats_panel._body.objects) == 3


def test_malicious_agent_text_is_escaped(seeded_db):
    spec = seeded_db.list_spectra(limit=1)[0]
    traj = Trajectory(spectrum_id=spec["spectrum_id"], task="a", agent=AgentInfo(name="vet", backend="openai", model="m"))
    traj.add("think", text="<script>window.__xss=1</script> <img src=x onerror=alert(1)> [click](javascript:alert(1))")
    seeded_db.save_trajectory(traj)
    s = session_for(seeded_db, "alice")
    s.open_trajectory(traj.id)
    html = s.player.view._html.object
    assert "&lt;script&gt;" in html  # shown as text
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html


def test_app_renders(seeded_db, tmp_path):
    template = create_app(seeded_db.path)
    assert template.session.trajectory is not None
    template.main[0].get_root(Document())


def test_pairwise_preference_between_trajectories_of_one_spectrum(seeded_db):
    s = session_for(seeded_db, "alice")
    assert s.preference.other is not None  # the demo has several agents' trajectories per spectrum
    other = s.preference.other
    s.preference.submit("win")
    rows = seeded_db.preferences_for(trajectory_id=s.trajectory_id)
    assert rows[-1]["trajectory_b"] == other and rows[-1]["outcome"] == "win" and rows[-1]["reviewer"] == "alice"


def test_campaign_scopes_the_queue_blinds_and_freezes(seeded_db):
    ids = [r["trajectory_id"] for r in seeded_db.queue_items(task="wd")][:3]
    sid = seeded_db.create_session("wd-pilot", "rating", ids, ["heidi", "ivan"], blind=True)
    s = AuditSession(seeded_db, reviewer="heidi")
    assert s.open_campaign("wd-pilot")
    assert [r["trajectory_id"] for r in s.queue.items] == ids
    assert "heidi: 0 / 3" in s.queue.progress and "ivan: 0 / 3" in s.queue.progress
    s.open_first_item()
    s.keyboard.press("a")  # rating-only campaign: no verdicts
    assert seeded_db.latest_review(ids[0], "heidi") is None and "rating only" in s.error
    s.keyboard.press("3")
    assert seeded_db.latest_rating(ids[0], "heidi")["session_id"] == sid
    seeded_db.close_session(sid)
    s.keyboard.press("4")
    assert "closed" in s.error and seeded_db.latest_rating(ids[0], "heidi")["score"] == 3


def test_a_broken_file_shows_its_error_and_the_app_keeps_serving(seeded_db, tmp_path):
    from agents.spectra import read_spectrum, write_fits
    from reviewer.ingest import ingest_paths

    demo = Path(__file__).resolve().parents[2] / "assets" / "demo" / "spec-55859-F5902_sp07-209.fits.gz"
    copy = tmp_path / "spec-copy.fits.gz"
    spec = read_spectrum(demo)
    write_fits(spec * 1.0001, copy)  # a new file (the store keys files by content)
    assert not ingest_paths(seeded_db, [copy], progress=False).failed
    record = next(r for r in seeded_db.list_spectra(limit=1000) if r["source_path"] == str(copy))
    copy.write_bytes(copy.read_bytes()[:2000])  # truncated after it was registered
    s = session_for(seeded_db, "alice")
    shown = s.record["spectrum_id"]
    assert s.open_spectrum(record["spectrum_id"]) is False
    assert "spec-copy.fits.gz" in s.error and s.record["spectrum_id"] == shown
    assert s.open_spectrum(shown) and s.error == ""


def test_view_and_spectrum_exports(seeded_db, tmp_path):
    from agents.spectra import read_spectrum

    s = session_for(seeded_db, "alice")
    s.plot.zoom_to(6400, 6700)
    png = s._export_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    for name, data in (("view.csv", s._export_csv()), ("view.fits", s._export_fits())):
        path = tmp_path / name
        path.write_bytes(data)
        back = read_spectrum(path)
        assert len(back.spectral_axis) == len(s.plot.spectrum.spectral_axis)


def test_verify_renders_are_reproduced_and_their_windows_shaded(seeded_db):
    s = session_for(seeded_db, "alice")
    s.open_trajectory(seeded_db.queue_items(task="verify")[0]["trajectory_id"])
    renders = [st for st in s.trajectory.steps if st.kind == "tool_result" and st.tool_name == "render"]
    assert renders and all(s.image_for(st)[:4] == b"\x89PNG" for st in renders[:3])
    window = next(st for st in renders if st.tool_args.get("wave_min") is not None)
    s.player.go(window.index)
    lo, hi = s.plot.shaded_ranges[0]
    assert (lo, hi) == (window.tool_args["wave_min"], window.tool_args["wave_max"])
    assert any(st.verdict is not None for st in s.trajectory.steps)  # auditor verdicts to badge
