"""LLM campaigns through the real langchain-openai client against the scripted server: Retry-After
obeyed (the gap is measured at the server), latency and token usage recorded per step and summed
per trajectory, and requests from parallel threads really in flight at once."""
import numpy as np
import pytest
from astropy import units as u
from astropy.nddata import InverseVariance
from scripted_openai_server import IMAGE_TOKENS, Reply
from specutils import Spectrum

from agents.batch import run_batch
from agents.llm import LLMConfig
from agents.tools.zoom import TOOL_NAME
from agents.usage import step_usages, trajectory_usage
from agents.vet.run import vet_spectrum

FINAL = "<think>Balmer lines are deep.</think><answer>\\boxed{YES} Strong Balmer absorption.</answer>"
ZOOM = Reply.tool_call(TOOL_NAME, {"wavelength_range": [6500, 6620], "label": "H-alpha"}, content="<think>zoom</think>")


@pytest.fixture(scope="module")
def spectrum():
    wave = np.linspace(3700, 9000, 2000)
    flux = 1 - 0.3 * np.exp(-0.5 * ((wave - 6564.6) / 8) ** 2)
    return Spectrum(spectral_axis=wave * u.AA, flux=flux * u.dimensionless_unscaled,
                    uncertainty=InverseVariance(np.full(wave.size, 100.0)), mask=np.zeros(wave.size, bool),
                    meta={"source_path": "synthetic.fits", "object_id": "synthetic", "target": None})


def config(server, **kw):
    base = {"base_url": server.base_url, "model": "campaign-test", "api_key": "k", "timeout": 10.0,
            "max_retries": 3, "backoff": 0.01, "total_timeout": 60.0}
    base.update(kw)
    return LLMConfig(**base)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_obeyed_and_recorded(openai_server, spectrum, status):
    openai_server.push(Reply.rate_limited(1.2, status=status), ZOOM, Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome["status"] == "answered" and traj.outcome["prediction"] == "YES"
    # the retry reached the server no sooner than the server said, counted from its refusal
    assert openai_server.arrived[1] - openai_server.replied[0] >= 1.2
    first, second = step_usages(traj)
    assert first["attempts"] == 2 and first["throttled"] == 1 and first["waited_s"] > 1.0
    assert second["attempts"] == 1 and second["throttled"] == 0
    assert traj.outcome["usage"]["throttled"] == 1 and traj.outcome["usage"]["calls"] == 2


def test_usage_per_step_is_the_servers_and_sums_per_trajectory(openai_server, spectrum):
    openai_server.push(ZOOM, Reply.text(FINAL))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    usages = step_usages(traj)
    assert len(usages) == len(openai_server.requests) == 2
    for usage, body in zip(usages, openai_server.requests, strict=True):
        images = sum(1 for m in body["messages"] if isinstance(m["content"], list)
                     for p in m["content"] if p.get("type") == "image_url")
        assert usage["images"] == images and usage["image_tokens"] == images * IMAGE_TOKENS
        assert usage["prompt_tokens"] > usage["image_tokens"] and usage["completion_tokens"] > 0
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert usage["latency_s"] > 0 and usage["calls"] == 1 and usage["failed_calls"] == 0
    assert [u["images"] for u in usages] == [1, 2]  # the overview, then the overview and the zoom
    total = trajectory_usage(traj)
    assert traj.outcome["usage"] == total
    assert total["prompt_tokens"] == sum(u["prompt_tokens"] for u in usages) and total["images"] == 3


def test_a_failed_call_is_counted_in_the_outcome(openai_server, spectrum):
    openai_server.push(Reply.error(400, "bad request"))
    traj = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert traj.outcome["status"] == "error"
    assert traj.outcome["usage"]["calls"] == 1 and traj.outcome["usage"]["failed_calls"] == 1
    assert step_usages(traj) == [traj.outcome["failed_call"]]


def test_the_rules_policy_records_no_usage(spectrum):
    traj = vet_spectrum(spectrum, "a")
    assert "usage" not in traj.outcome and step_usages(traj) == []


def _conversation(server, width):
    """Zoom once, then answer; first turns are held until `width` requests are in flight at once."""
    def reply(body):
        if not any(m["role"] == "assistant" for m in body["messages"]):
            server.wait_for_in_flight(width)
            return ZOOM
        return Reply.text(FINAL)
    return reply


def test_threads_keep_requests_in_flight_at_once_within_the_limit(openai_server, spectrum):
    width = 4
    openai_server.responder = _conversation(openai_server, width)
    cfg = config(openai_server, concurrency=width)
    jobs = list(range(3 * width))
    out = dict(run_batch(lambda _: vet_spectrum(spectrum, "a", backend="openai", llm_config=cfg), jobs,
                         threads=width, progress=False))
    assert len(out) == len(jobs) and all(t.outcome["status"] == "answered" for t in out.values())
    assert openai_server.max_in_flight == width  # overlapped, and never more than the limit
    assert len(openai_server.requests) == 2 * len(jobs)


def test_renders_in_the_render_pool_are_the_inline_ones(openai_server, spectrum):
    from agents import render_pool

    openai_server.responder = _conversation(openai_server, 1)
    inline = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    with render_pool.running(1) as pool:
        pooled = vet_spectrum(spectrum, "a", backend="openai", llm_config=config(openai_server))
    assert pool.renders == len(pooled.images) == 2  # the overview and the zoom, drawn by the pool
    assert inline.images and pooled.images == inline.images
    assert [s.image_sha for s in pooled.steps] == [s.image_sha for s in inline.steps]
