"""`specreview vet --backend openai --concurrency N` through the real client against the scripted
server: requests overlap up to N, every step's latency and tokens are stored, the run summary adds
them up, a 429 with Retry-After is counted, and a second run resumes with nothing left to do."""
import shutil

import pytest
from scripted_openai_server import Reply

from agents.tools.zoom import TOOL_NAME
from agents.usage import step_usages
from reviewer.cli import main
from reviewer.store import Store

FINAL = "<think>weak lines</think><answer>\\boxed{NO} not an A star.</answer>"
N = 6


@pytest.fixture
def spectra(tmp_path, shared_spectra, manifest):
    folder = tmp_path / "spectra"
    folder.mkdir()
    rows = [r for r in manifest if r["survey"].startswith("LAMOST-LRS") and "#" not in r["file"]][:N]
    for r in rows:
        shutil.copy(shared_spectra / r["file"], folder / r["file"].split("/")[-1])
    return folder


@pytest.fixture
def llm_env(openai_server, monkeypatch):
    monkeypatch.setenv("SPECREVIEW_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SPECREVIEW_LLM_MODEL", "scripted-vlm")
    monkeypatch.setenv("SPECREVIEW_LLM_API_KEY", "sk-test")
    return openai_server


def zoom_then_answer(server, width):
    """Zoom, then answer; first turns are held until `width` requests are in flight at once."""
    def reply(body):
        if any(m["role"] == "assistant" for m in body["messages"]):
            return Reply.text(FINAL)
        server.wait_for_in_flight(width)
        return Reply.tool_call(TOOL_NAME, {"wavelength_range": [4800, 4950], "label": "H-beta"})
    return reply


def test_concurrent_campaign_stores_usage_prints_summary_and_resumes(tmp_path, spectra, llm_env, capsys):
    server = llm_env
    server.responder = zoom_then_answer(server, 3)
    server.push(Reply.rate_limited(0.3))  # the first request is refused once
    db = tmp_path / "llm.duckdb"
    args = ["vet", "--db", str(db), "--task", "a", "--backend", "openai", "--concurrency", "3", "--no-progress"]
    assert main([*args, str(spectra)]) == 0
    out = capsys.readouterr().out
    assert server.max_in_flight == 3
    with Store(db) as store:
        rows = store.trajectories.list_trajectories(backend="openai", model="scripted-vlm")
        trajs = [store.trajectories.load_trajectory(r["id"]) for r in rows]
    # a spectrum whose noise cannot decide the task is refused before any model call (agents.tools.judgeable)
    answered = [t for t in trajs if t.outcome["status"] == "answered"]
    assert len(trajs) == N and len(answered) >= N - 1
    assert all(t.outcome["status"] == "unjudgeable" for t in trajs if t not in answered)
    calls = 2 * len(answered)
    assert len(server.requests) == calls + 1  # + the refused one
    assert f"run: {N} trajectories done, 0 failed" in out
    assert f"model calls: {calls} ({calls / N:.2f} per item), 0 failed, 1 retries (1 throttled)" in out
    usages = [u for t in trajs for u in step_usages(t)]
    assert len(usages) == calls and all(u["latency_s"] > 0 and u["prompt_tokens"] > 0 for u in usages)
    prompt = sum(u["prompt_tokens"] for u in usages)
    assert f"tokens: prompt {prompt:,}," in out
    assert sum(t.outcome["usage"]["images"] for t in answered) == sum(u["images"] for u in usages) == 3 * len(answered)

    assert main([*args, str(spectra)]) == 0  # resume: everything is done already
    out = capsys.readouterr().out
    assert f"skipped (already vetted): {N}" in out and len(server.requests) == calls + 1


def test_rules_backend_output_is_unchanged_by_the_llm_options(tmp_path, spectra, capsys):
    db = tmp_path / "rules.duckdb"
    assert main(["vet", "--db", str(db), "--task", "a", "--concurrency", "8", "--no-progress", str(spectra)]) == 0
    out = capsys.readouterr().out
    assert f"run: {N} trajectories done, 0 failed" in out and "model calls" not in out
    with Store(db) as store:
        for row in store.trajectories.list_trajectories():
            traj = store.trajectories.load_trajectory(row["id"])
            assert "usage" not in traj.outcome and step_usages(traj) == []
