"""Exports on a real DuckDB file: prospect VI CSV, Parquet tables, Spec-o3 SFT (round trip through
agents.interop) and SpecVI-Bench rows, with trajectories made by the real rules vet policy."""
import csv
import json
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from reviewer.services.claims import CHECKER_VERSION, EXPORT_FIELDS, check_and_store, export_claims
from reviewer.services.curation import save_revision
from reviewer.services.exports import (
    VI_COLUMNS,
    export_bench,
    export_parquet,
    export_sft,
    export_vi_csv,
    vi_comment,
)
from reviewer.services.ingest import ingest_paths
from reviewer.store.claims import CLAIM_ROW_FIELDS

BIG_ID = "39633345008634465"  # > 2**53: a float would change it


def add_spec(store, sid, **extra):
    return store.spectra.add_spectrum({"spectrum_id": sid, "source_path": f"x/{sid}.fits", "file_sha256": sid * 4, **extra})


def test_vi_csv_columns_ids_and_comment_rules(store, tmp_path):
    add_spec(store, "s1", object_id=BIG_ID, pipeline_class="QSO", pipeline_z=2.919712, survey="DESI",
             header={"TILEID": "80613", "NIGHT": "20210324", "DELTACHI2": "150344.27", "SPECPROD": "fuji"})
    add_spec(store, "s2", object_id="12", pipeline_class="STAR", pipeline_z=0.0)
    add_spec(store, "s3", object_id="13")
    store.labels.add_vi_label("s1", "ann", quality=4, issues="SR", z=2.92, spectype="QSO",
                              comment="Broad, BAL — naïve ångström " + "x" * 120)
    store.labels.add_vi_label("s2", "bob", quality=None, comment="check later")
    store.labels.add_vi_label("s3", "bob", quality=None)  # nothing set: prospect writes no row
    out = tmp_path / "vi.csv"
    assert export_vi_csv(store, out) == 2
    with open(out, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = [dict(zip(header, r, strict=True)) for r in reader]
    assert tuple(header) == VI_COLUMNS
    first = rows[0]
    assert first["TARGETID"] == "12" and first["VI_quality"] == "-1" and first["VI_comment"] == "check later"
    row = rows[1]
    assert row["TARGETID"] == BIG_ID  # text, never through float
    assert row["TILEID"] == "80613" and row["NIGHT"] == "20210324" and row["Spec_version"] == "fuji"
    assert row["Redrock_z"] == "2.9197" and row["Redrock_deltachi2"] == "150344.3"
    assert (row["VI_scanner"], row["VI_quality"], row["VI_issue"], row["VI_z"], row["VI_spectype"]) == (
        "ann", "4", "RS", "2.92", "QSO")
    assert row["VI_comment"].startswith("Broad; BAL ? naive angstrom x")
    assert len(row["VI_comment"]) == 100 and "," not in row["VI_comment"]
    assert out.read_bytes().isascii()
    assert vi_comment("a,b\nc") == "a;b c" and vi_comment(None) == ""


def test_parquet_export_has_every_table_with_reviewers_and_times(store, make_trajectory, tmp_path):
    tid = store.trajectories.save_trajectory(make_trajectory())
    store.labels.add_review(tid, "ann", "approve", comment="ok")
    store.labels.add_rating(tid, "llm:m", 3, "1", rater_kind="llm")
    counts = export_parquet(store, tmp_path / "pq")
    assert set(counts) == set(store.reviews.table_names())
    assert all((tmp_path / "pq" / f"{t}.parquet").exists() for t in counts)
    reviews = pd.read_parquet(tmp_path / "pq" / "reviews.parquet")
    assert reviews["reviewer"].tolist() == ["ann"] and str(reviews["created_at"].dtype).startswith("datetime64")
    steps = pd.read_parquet(tmp_path / "pq" / "steps.parquet")
    assert len(steps) == counts["steps"] == 7
    assert pd.read_parquet(tmp_path / "pq" / "ratings.parquet")["rater"].tolist() == ["llm:m"]


def test_the_parquet_export_leaves_the_connections_settings_as_they_were(store, make_trajectory, tmp_path):
    """The copy runs on one thread with a small buffer pool (bounded memory at 1M trajectories); the
    shared connection gets its threads and memory limit back, for the server's other queries."""
    store.trajectories.save_trajectory(make_trajectory())
    settings = "SELECT current_setting('threads'), current_setting('memory_limit')"
    before = store.db.execute(settings).fetchone()
    seen = []
    copy = store.db.execute_with_retries
    store.db.execute_with_retries = lambda sql, params=None: (
        seen.append(store.db.execute(settings).fetchone()) if sql.startswith("COPY") else None, copy(sql, params))[1]
    export_parquet(store, tmp_path / "pq")
    assert seen and all(threads == 1 and "MiB" in limit for threads, limit in seen)
    assert store.db.execute(settings).fetchone() == before


# -- Spec-o3 rows from real trajectories -----------------------------------------------------
@pytest.fixture
def vetted(store, shared_spectra, manifest):
    """Two real LAMOST spectra ingested, each vetted for task `a` by the rules policy (renders
    deferred: the export must re-render them from the spectrum)."""
    from agents.spectra import read_spectrum
    from agents.vet.run import vet_spectrum

    picks = [next(r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"].startswith(p))
             for p in ("A", "K")]
    out = []
    for row in picks:
        path = shared_spectra / row["file"].partition("#")[0]
        summary = ingest_paths(store, [path], progress=False)
        sid = (summary.added_ids or [store.spectra.list_spectra(search=path.name)[0]["spectrum_id"]])[0]
        spec = read_spectrum(path)
        traj = vet_spectrum(spec, "a", spectrum_id=sid)
        store.trajectories.save_trajectory(traj)
        out.append((traj, spec))
    return out


def accept(store, tid):
    """Revise event, two audits, three votes, all after the revisions already saved."""
    start = datetime.now(UTC)
    at = iter(start + timedelta(seconds=i + 1) for i in range(10))
    store.labels.add_curation_event(tid, "rev", "revise", created_at=next(at))
    store.labels.add_curation_event(tid, "aud1", "audit", "approve", created_at=next(at))
    store.labels.add_curation_event(tid, "aud2", "audit", "approve", created_at=next(at))
    for who in ("rev", "aud1", "aud2"):
        store.labels.add_curation_event(tid, who, "vote", "accept", created_at=next(at))


def test_sft_export_of_an_accepted_revised_trajectory_round_trips(store, vetted, tmp_path):
    from agents.interop import sft_row_to_trajectory, trajectory_to_sft_row

    (traj, spec), (other, _) = vetted
    call = next(s for s in traj.steps if s.kind == "tool_call")
    think = next(s for s in traj.steps if s.kind == "think")
    new_args = {"wavelength_range": [6480, 6640], "label": "H-alpha"}
    save_revision(store, traj, call.index, "rev", tool_args=new_args, spectrum=spec)
    save_revision(store, traj, think.index, "rev", text="The Balmer lines are deep and narrow: an A star.")
    accept(store, traj.id)
    store.labels.add_review(traj.id, "ann", "approve")
    store.labels.add_curation_event(other.id, "rev", "revise")  # not accepted: not exported

    result = export_sft(store, tmp_path / "sft")
    assert result.written == 1 and result.skipped == []
    rows = json.loads((tmp_path / "sft" / "train_sharegpt.json").read_text())
    info = json.loads((tmp_path / "sft" / "data_info.json").read_text())
    assert info["merged_train_sharegpt"]["file_name"] == "train_sharegpt.json"
    assert info["merged_train_sharegpt"]["tags"]["assistant_tag"] == "gpt"
    row = rows[0]
    assert row["ground_truth"] == traj.outcome["prediction"]  # the approved label is the agent's
    assert row["conversations"][0]["from"] == "system" and row["conversations"][1]["value"].startswith("<image>")
    n_images = sum(t["value"].count("<image>") for t in row["conversations"])
    assert n_images == len(row["images"]) == 1 + row["total_tool_calls"]
    files = {p: (tmp_path / "sft" / p).read_bytes() for p in row["images"]}
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in files.values())

    back = sft_row_to_trajectory(row, images=files)
    assert back.task == "a"
    calls = [s for s in back.steps if s.kind == "tool_call"]
    assert [c.tool_args for c in calls] == [new_args if s.index == call.index else s.tool_args
                                            for s in traj.steps if s.kind == "tool_call"]
    thinks = [s.text for s in back.steps if s.kind == "think"]
    assert thinks[0].startswith("The Balmer lines are deep and narrow: an A star.")
    assert back.outcome["prediction"] == traj.outcome["prediction"]
    # the revised zoom's render is the one the reviewer saved
    zoom_pngs = [back.images[s.image_sha] for s in back.steps if s.kind == "tool_result" and s.image_sha]
    saved = next(r for r in store.labels.revisions_for(traj.id) if r["step_idx"] == call.index)
    assert store.images.get_image(saved["image_sha"]) == zoom_pngs[0]
    # exported again from the imported trajectory, the row is unchanged
    again, again_files = trajectory_to_sft_row(back)
    assert again["conversations"] == row["conversations"] and again_files == files
    assert again["claims"] == row["claims"]  # kept on import like any other field
    # the claims of the exported (revised) text, checked on the spectrum: every span is in a gpt turn
    assert row["claims"] and all(set(c) == set(EXPORT_FIELDS) for c in row["claims"])
    gpt_text = "\n".join(t["value"] for t in row["conversations"] if t["from"] == "gpt")
    assert all(c["claim_text"] in gpt_text and c["checker_version"] == CHECKER_VERSION for c in row["claims"])
    assert {c["verdict"] for c in row["claims"]} <= {"supported", "contradicted", "unverifiable"}


def test_exports_carry_the_stored_claim_results(store, vetted, tmp_path):
    """Parquet has the claim_results table; an unrevised trajectory's SFT and bench rows carry its
    stored results, a contradicted one included (so training data can leave it out)."""
    (traj, spec), _ = vetted
    check_and_store(store, traj, spec)
    first = store.claims.claims_for(traj.id)[0]
    store.claims.save_claims(traj.id, "planted", [{**{k: first[k] for k in first if k in CLAIM_ROW_FIELDS},
                                            "verdict": "contradicted", "reason": "planted"}])
    stored = store.claims.claims_for(traj.id)
    assert [r["checker_version"] for r in stored] == ["planted"]
    counts = export_parquet(store, tmp_path / "pq")
    table = pd.read_parquet(tmp_path / "pq" / "claim_results.parquet")
    assert counts["claim_results"] == len(table) == len(stored) + len(store.claims.claims_for(traj.id, CHECKER_VERSION))
    assert set(table["verdict"]) == {"supported", "contradicted"}

    accept(store, traj.id)
    store.labels.add_review(traj.id, "ann", "approve")
    assert export_sft(store, tmp_path / "sft").written == 1
    row = json.loads((tmp_path / "sft" / "train_sharegpt.json").read_text())[0]
    assert row["claims"] == export_claims(stored)
    assert [(c["verdict"], c["reason"], c["checker_version"]) for c in row["claims"]] == [
        ("contradicted", "planted", "planted")]
    assert export_bench(store, tmp_path / "bench").files == ["review_a.parquet"]
    bench = pd.read_parquet(tmp_path / "bench" / "review_a.parquet")
    assert [c["verdict"] for c in bench["claims"][0]] == ["contradicted"]
    assert bench["claims"][0][0]["claim_text"] == first["claim_text"]


def test_bench_export_uses_the_human_label_as_ground_truth(store, vetted, tmp_path):
    from agents.interop import specvi_row_to_spectrum

    (a_traj, a_spec), (k_traj, _) = vetted
    store.labels.add_review(a_traj.id, "ann", "override", {"answer": "NO"} if a_traj.outcome["prediction"] == "YES"
                            else {"answer": "YES"})
    store.labels.add_review(k_traj.id, "ann", "reject")  # unusable: not a benchmark row
    result = export_bench(store, tmp_path / "bench", fmt="json")
    assert result.written == 1 and result.files == ["review_a.json"]
    rows = json.loads((tmp_path / "bench" / "review_a.json").read_text())
    expected = "NO" if a_traj.outcome["prediction"] == "YES" else "YES"
    assert rows[0]["reward_model"]["ground_truth"] == expected
    assert rows[0]["extra_info"]["index"] == a_traj.id
    spec = specvi_row_to_spectrum(rows[0])
    assert spec.spectral_axis.size == a_spec.spectral_axis.size
    assert (tmp_path / "bench" / rows[0]["images"][0]).read_bytes()[:4] == b"\x89PNG"
    # never checked: checked now on the spectrum (the rules policy's own numbers are all measured)
    assert rows[0]["claims"] and all(c["verdict"] != "contradicted" for c in rows[0]["claims"])
    assert export_bench(store, tmp_path / "pq").files == ["review_a.parquet"]
