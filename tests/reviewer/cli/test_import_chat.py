"""`specreview import chat FILE.jsonl`: OpenAI-style conversation logs on a real LAMOST spectrum of
the shared corpus. The rows are written here, in the shape an OpenAI-compatible agent logs (chat
messages with native `tool_calls` of Spec-o3's zoom tool, reference.md §1.1), with real renders of
the spectrum as data URLs and as files."""
import base64
import json

import pytest

from reviewer.cli import main
from reviewer.services.ingest import ingest_paths
from reviewer.store import Store


def counts(db) -> tuple[int, int, int]:
    with Store(db) as store:
        return tuple(int(store.db.scalar(f"SELECT count(*) FROM {t}")) for t in ("trajectories", "steps", "images"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_spectra, manifest):
    from agents.spectra import read_spectrum
    from agents.tools.render import render_png

    root = tmp_path_factory.mktemp("chat")
    row = next(r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"].startswith("K"))
    path = shared_spectra / row["file"].partition("#")[0]
    spec = read_spectrum(path)
    (root / "imgs").mkdir()
    overview, zoom = render_png(spec, None, None, label="full"), render_png(spec, 6500, 6600, label="Halpha")
    (root / "imgs" / "zoom.png").write_bytes(zoom)
    db = root / "base.duckdb"
    with Store(db) as store:
        ingest_paths(store, [path], progress=False)
        sid = store.spectra.list_spectra(search=path.name)[0]["spectrum_id"]
    return {"root": root, "path": path, "sid": sid, "db": db, "overview": overview, "zoom": zoom}


def url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def conversation(corpus, spectrum, zoom_in_tool: bool = False, arguments_as_text: bool = True):
    args = {"wavelength_range": [6500, 6600], "label": "H\u03b1"}
    tool_content = "Generated spectral visualization focused on wavelength range (6500, 6600) \u00c5 for H\u03b1."
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url(corpus["overview"])}},
                                     {"type": "text", "text": "Analyze the provided spectrum: is it an A star?"}]},
        {"role": "assistant", "content": "<think>Check H\u03b1 first.</think>",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "spectral_visualization_tool",
                                      "arguments": json.dumps(args) if arguments_as_text else args}}]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": [{"type": "text", "text": tool_content},
                     {"type": "image_url", "image_url": {"url": url(corpus["zoom"])}}] if zoom_in_tool
         else tool_content},
    ]
    if not zoom_in_tool:
        messages.append({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "imgs/zoom.png"}}]})
    messages.append({"role": "assistant", "content": "<think>Weak, narrow H\u03b1: a K star.</think>"
                                                     "<answer>\\boxed{NO} narrow Balmer lines</answer>"})
    return {"messages": messages, "spectrum": spectrum, "task": "a", "model": "my-agent-7b", "run": "r1"}


def test_import_chat_maps_messages_onto_steps_with_zoom_windows(tmp_path, corpus, capsys):
    db = tmp_path / "dst.duckdb"
    db.write_bytes(corpus["db"].read_bytes())
    file = corpus["root"] / "log.jsonl"
    rows = [conversation(corpus, corpus["path"].name), conversation(corpus, corpus["sid"], True, False)]
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["import", "chat", str(file), "--db", str(db)]) == 0
    assert "imported trajectories: 2; already present: 0; refused: 0" in capsys.readouterr().out
    with Store(db) as store:
        stored = store.trajectories.list_trajectories(backend="chat")
        assert len(stored) == 2
        for rec in stored:
            traj = store.trajectories.load_trajectory(rec["id"], with_images=True)
            assert traj.spectrum_id == corpus["sid"] and traj.task == "a" and traj.agent.model == "my-agent-7b"
            assert [s.kind for s in traj.steps] == ["prompt", "think", "tool_call", "tool_result", "think", "answer"]
            call, result = traj.steps[2], traj.steps[3]
            assert call.tool_name == result.tool_name == "spectral_visualization_tool"
            assert call.tool_args["wavelength_range"] == [6500, 6600] and call.label == "H\u03b1"
            assert traj.zoom_at(result.index) == (6500.0, 6600.0)  # the plot shades the agent's window
            assert traj.zoom_at(4) == (6500.0, 6600.0)  # the next reasoning keeps it on screen
            assert traj.images[traj.steps[0].image_sha] == corpus["overview"]
            assert traj.images[result.image_sha] == corpus["zoom"]
            assert traj.steps[0].data["system"] == "You are a helpful assistant."
            assert traj.outcome["prediction"] == "NO" and traj.outcome["format_correct"] is True
            assert traj.outcome["chat"]["run"] == "r1"
    assert main(["import", "chat", str(file), "--db", str(db)]) == 0
    assert "imported trajectories: 0; already present: 2" in capsys.readouterr().out


def test_bad_chat_rows_are_refused_by_line_and_store_nothing(tmp_path, corpus, capsys):
    db = tmp_path / "dst.duckdb"
    db.write_bytes(corpus["db"].read_bytes())
    good = conversation(corpus, corpus["path"].name)
    bot = json.loads(json.dumps(good))
    bot["messages"][2]["role"] = "bot"
    nameless = json.loads(json.dumps(good))
    del nameless["messages"][2]["tool_calls"][0]["function"]["name"]
    long_text = json.loads(json.dumps(good))
    long_text["messages"][1]["content"][1]["text"] = "x" * 1_000_001
    outside = json.loads(json.dumps(good))
    outside["messages"][4]["content"][0]["image_url"]["url"] = "../../etc/passwd"
    lines = [
        json.dumps(good),
        "[1, 2",
        json.dumps({**good, "spectrum": "spec-00000-nowhere_sp01-001.fits.gz"}),
        json.dumps(bot),
        json.dumps(nameless),
        json.dumps(long_text),
        json.dumps({**good, "task": "unicorns"}),
        json.dumps({"spectrum": corpus["sid"], "task": "a"}),
        json.dumps({**good, "extra": json.loads("[" * 70 + "]" * 70)}),
        json.dumps({**good, "messages": [{"role": "system", "content": "only a system prompt"}]}),
        json.dumps(outside),
    ]
    file = corpus["root"] / "bad.jsonl"  # beside imgs/, which the rows' image paths name
    file.write_text("\n".join(lines) + "\n")
    before = counts(db)
    assert main(["import", "chat", str(file), "--db", str(db)]) == 1
    captured = capsys.readouterr()
    assert "imported trajectories: 2; already present: 0; refused: 9" in captured.out
    err = captured.err
    for needle in ("bad.jsonl line 2: not valid JSON",
                   "line 3: spectrum 'spec-00000-nowhere_sp01-001.fits.gz' is not in the database",
                   "line 4: messages[2].role: expected one of", "line 5: missing field 'name' in messages[2]",
                   "line 6: messages[1].content[1].text: text of 1,000,001 bytes", "line 7: task: expected",
                   "line 8: missing field 'messages'", "line 9: nested deeper than 64",
                   "line 10: messages: no 'user' message",
                   "line 11: messages[4].content[0]: image ../../etc/passwd is outside"):
        assert needle in err, needle
    assert "Traceback" not in err
    after = counts(db)
    # the good row, and the one whose zoom image was refused (kept as a problem, the plot re-renders it)
    assert after[0] - before[0] == 2
    with Store(db) as store:
        ids = [r["id"] for r in store.trajectories.list_trajectories(backend="chat")]
        assert after[1] - before[1] == sum(len(store.trajectories.load_trajectory(t).steps) for t in ids)
    assert after[2] - before[2] == 2  # overview and zoom, stored once
