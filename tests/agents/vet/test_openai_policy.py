"""The openai policy through the real langchain-openai client against a local scripted server:
both tool protocols, the request as received, and fault injection that always ends in a recorded
outcome."""
import json
import time

import numpy as np
import pytest
from astropy import units as u
from astropy.nddata import InverseVariance
from scripted_openai_server import Reply
from specutils import Spectrum

from agents.llm import LLMConfig
from agents.tools.zoom import TOOL_NAME
from agents.vet.run import vet_spectrum

FINAL = "<think>Balmer lines are deep.</think><answer>\\boxed{YES} Strong Balmer absorption.</answer>"


@pytest.fixture(scope="module")
def spectrum():
    wave = np.linspace(3700, 9000, 2000)
    flux = 1 + 0.3 * np.exp(-0.5 * ((wave - 6564.6) / 8) ** 2) * -1
    return Spectrum(spectral_axis=wave * u.AA, flux=flux * u.dimensionless_unscaled,
                    uncertainty=InverseVariance(np.full(wave.size, 100.0)), mask=np.zeros(wave.size, bool),
                    meta={"source_path": "synthetic.fits", "object_id": "synthetic", "target": None})


def config(server, **kw):
    base = dict(base_url=server.base_url, model="spec-o3-test", api_key="sk-secret-never-stored",
                timeout=2.0, max_retries=2, backoff=0.01, total_timeout=20.0)
    base.update(kw)
    return LLMConfig(**base)


def image_parts(message):
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]


def test_native_tool_calls_round_trip_and_request_shape(openai_server, spectrum):
    openai_server.push(
        Reply.tool_call(TOOL_NAME, {"wavelength_range": [6500, 6620], "label": "H-alpha"},
                        content="<think>zoom</think>"),
        Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    usage = traj.outcome.pop("usage")
    assert traj.outcome == {"status": "answered", "tool_calls": 1, "prediction": "YES", "answer": "YES",
                            "format_correct": True}
    assert usage["calls"] == 2 and usage["attempts"] == 2 and usage["images"] == 1 + 2  # overview, then overview + zoom
    assert traj.agent.backend == "openai" and traj.agent.model == "spec-o3-test"
    first, second = openai_server.requests
    tool = first["tools"][0]
    assert tool["type"] == "function" and tool["function"]["name"] == TOOL_NAME
    assert tool["function"]["parameters"]["required"] == ["wavelength_range"]
    user = first["messages"][1]
    assert user["role"] == "user" and user["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    tool_msg = second["messages"][-1]
    assert tool_msg["role"] == "tool" and len(image_parts(tool_msg)) == 1
    assert "focused on wavelength range (6500, 6620) Å for H-alpha." in json.dumps(tool_msg, ensure_ascii=False)
    kinds = [s.kind for s in traj.steps]
    assert kinds == ["prompt", "think", "tool_call", "tool_result", "think", "answer"]
    assert all(s.image_sha in traj.images for s in traj.steps if s.kind in ("prompt", "tool_result"))
    assert "sk-secret" not in traj.to_json()
    assert openai_server.headers[0]["authorization"] == "Bearer sk-secret-never-stored"


def test_images_can_go_in_a_follow_up_user_message(openai_server, spectrum):
    openai_server.push(Reply.tool_call(TOOL_NAME, {"wavelength_range": [4800, 4950]}), Reply.text(FINAL))
    vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server, images_in_user_message=True))
    last_two = openai_server.requests[1]["messages"][-2:]
    assert last_two[0]["role"] == "tool" and not image_parts(last_two[0])
    assert last_two[1]["role"] == "user" and len(image_parts(last_two[1])) == 1


def test_hermes_text_protocol(openai_server, spectrum):
    call = ('<think>look at H-beta</think>\n<tool_call>\n{"name": "spectral_visualization_tool", '
            '"arguments": {"wavelength_range": [4800, 4950], "label": "Hb"}}\n</tool_call>')
    openai_server.push(Reply.text(call), Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server, tool_protocol="hermes"))
    assert traj.outcome["status"] == "answered" and traj.outcome["prediction"] == "YES"
    first, second = openai_server.requests
    assert "tools" not in first
    system = first["messages"][0]["content"]
    assert system.startswith("You are a helpful assistant.\n\n# Tools")
    assert '"name": "spectral_visualization_tool"' in system
    turn = second["messages"][-1]
    assert turn["role"] == "user"
    texts = [p.get("text", "") for p in turn["content"]]
    assert texts[0].startswith("<tool_response>") and texts[-1].endswith("</tool_response>")
    assert turn["content"][1]["type"] == "image_url"  # image first, then the tool text
    calls = [s.tool_args for s in traj.steps if s.kind == "tool_call"]
    assert calls == [{"wavelength_range": [4800, 4950], "label": "Hb"}]


def test_timeout_is_retried_then_recorded(openai_server, spectrum):
    openai_server.push(Reply.hang(3.0), Reply.hang(3.0))
    t0 = time.monotonic()
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server, timeout=0.5, max_retries=1))
    assert time.monotonic() - t0 < 10
    assert traj.outcome["status"] == "error" and "Timeout" in traj.outcome["error"]
    assert traj.outcome["attempts"] == 2 and traj.outcome["prediction"] is None


def test_http_500_then_success(openai_server, spectrum):
    openai_server.push(Reply.error(500), Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome["status"] == "answered" and traj.outcome["prediction"] == "YES"
    assert next(s for s in traj.steps if s.kind == "think").data["attempts"] == 2


def test_http_400_is_not_retried(openai_server, spectrum):
    openai_server.push(Reply.error(400, "bad request"), Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome["status"] == "error" and traj.outcome["attempts"] == 1
    assert openai_server.remaining == 1


@pytest.mark.parametrize("protocol", ["native", "hermes"])
def test_malformed_tool_call_json_is_fed_back_as_an_error(openai_server, spectrum, protocol):
    bad = (Reply.tool_call(TOOL_NAME, '{"wavelength_range": [6500, 66') if protocol == "native"
           else Reply.text('<think>x</think><tool_call>{"name": "spectral_visualization_tool", '
                           '"arguments": {bad json</tool_call>'))
    openai_server.push(bad, Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server, tool_protocol=protocol))
    result = next(s for s in traj.steps if s.kind == "tool_result")
    assert result.is_error and result.text.startswith("Error: invalid tool call")
    assert traj.outcome["status"] == "answered" and traj.outcome["tool_calls"] == 1
    assert "invalid tool call" in json.dumps(openai_server.requests[1]["messages"][-1])


def test_out_of_range_zoom_returns_spec_o3_error_text(openai_server, spectrum):
    openai_server.push(Reply.tool_call(TOOL_NAME, {"wavelength_range": [1000, 2000]}), Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    result = next(s for s in traj.steps if s.kind == "tool_result")
    assert result.is_error and result.image_sha is None
    assert result.text == ("Error: The specified wavelength range [1000, 2000] is invalid or outside the "
                           "available data range [3700.0, 9000.0].")
    assert traj.outcome["status"] == "answered"


def test_no_answer_within_eight_calls(openai_server, spectrum):
    zoom = {"wavelength_range": [5000, 5100]}
    openai_server.push(*[Reply.tool_call(TOOL_NAME, zoom, content="<think>more</think>") for _ in range(9)])
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome["status"] == "tool_limit" and traj.outcome["tool_calls"] == 8
    assert traj.outcome["format_correct"] is False
    assert len(openai_server.requests) == 9 and openai_server.remaining == 0


def test_answer_without_boxed_is_a_format_error_with_fallback(openai_server, spectrum):
    openai_server.push(Reply.text("<think>hmm</think><answer>No, the lines are too weak.</answer>"))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome.pop("usage")["calls"] == 1
    assert traj.outcome == {"status": "answered", "tool_calls": 0, "prediction": "NO", "answer": "NO",
                            "format_correct": False}
    assert traj.steps[-1].answer["source"] == "answer_word"


def test_streaming_client_against_the_server(openai_server):
    from langchain_openai import ChatOpenAI

    openai_server.push(Reply.tool_call(TOOL_NAME, {"wavelength_range": [1, 2]}, content="<think>a</think>"))
    model = ChatOpenAI(base_url=openai_server.base_url, api_key="x", model="m", max_retries=0, timeout=2,
                       streaming=True)
    model = model.bind_tools([{"type": "function", "function": {"name": TOOL_NAME, "parameters": {"type": "object"}}}])
    msg = model.invoke("hi")
    assert openai_server.requests[0]["stream"] is True
    assert msg.content == "<think>a</think>" and msg.tool_calls[0]["args"] == {"wavelength_range": [1, 2]}
