"""The shared limiter's arithmetic on a fake clock (no waiting), its bound with real threads, and
how a server's Retry-After is read."""
import threading
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import openai
import pytest

from agents.llm import LLMConfig, ModelCallFailed, invoke_with_retries, retry_after
from agents.ratelimit import RateLimiter
from agents.usage import CallStats


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def limiter(**kw):
    clock = FakeClock()
    return RateLimiter(clock=clock, sleep=clock.sleep, **kw), clock


def test_a_pause_holds_the_next_request_until_it_ends():
    lim, clock = limiter(concurrency=4)
    lim.pause(2.5)
    clock.now += 1.0  # another request arrives a second later: 1.5 s of the pause are left
    with lim.slot() as waited:
        assert waited == pytest.approx(1.5)
        assert clock.now == pytest.approx(102.5)
    with lim.slot() as waited:  # the pause is over: no wait
        assert waited == 0


def test_a_shorter_pause_never_cuts_a_longer_one():
    lim, _ = limiter()
    lim.pause(3.0)
    lim.pause(1.0)
    assert lim.resume_in() == pytest.approx(3.0)
    assert lim.pauses == 2


def test_max_rps_spaces_the_starts_evenly():
    lim, clock = limiter(max_rps=4)
    starts = []
    for _ in range(3):
        with lim.slot():
            starts.append(clock.now)
    assert [s - starts[0] for s in starts] == pytest.approx([0.0, 0.25, 0.5])


def test_concurrency_bounds_requests_in_flight_across_threads():
    lim = RateLimiter(concurrency=2)
    release = threading.Event()
    inside = threading.Semaphore(0)

    def call():
        with lim.slot():
            inside.release()
            release.wait(10)

    threads = [threading.Thread(target=call) for _ in range(5)]
    for t in threads:
        t.start()
    assert inside.acquire(timeout=10) and inside.acquire(timeout=10)  # two got in ...
    assert not inside.acquire(timeout=0.2)  # ... and a third did not while they hold their slots
    release.set()
    for t in threads:
        t.join(10)
    assert lim.max_in_flight == 2 and lim.in_flight == 0


def status_error(status: int, headers: dict[str, str]):
    request = httpx.Request("POST", "http://model/v1/chat/completions")
    response = httpx.Response(status, headers=headers, request=request)
    cls = openai.RateLimitError if status == 429 else openai.InternalServerError
    return cls("refused", response=response, body=None)


@pytest.mark.parametrize("headers, seconds", [
    ({"retry-after": "7"}, 7.0),
    ({"retry-after": "0.5"}, 0.5),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),  # OpenAI's precise header wins
    ({}, None),
    ({"retry-after": "soon"}, None),
])
def test_retry_after_header(headers, seconds):
    assert retry_after(status_error(429, headers)) == seconds


def test_retry_after_as_an_http_date():
    when = datetime.now(UTC) + timedelta(seconds=30)
    error = status_error(503, {"retry-after": format_datetime(when, usegmt=True)})
    assert retry_after(error) == pytest.approx(30, abs=2)


def test_throttled_call_pauses_the_shared_limiter_for_exactly_the_hint():
    lim, clock = limiter(concurrency=2)
    answers = [status_error(429, {"retry-after": "4"}), "ok"]

    def call():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    stats = CallStats()
    cfg = LLMConfig(max_retries=2, backoff=10.0, total_timeout=600)
    result, attempts = invoke_with_retries(call, cfg, sleep=clock.sleep, limiter=lim, stats=stats)
    assert (result, attempts) == ("ok", 2)
    assert stats.throttled == 1 and stats.waited_s == pytest.approx(4.0)  # the hint, not the 10 s backoff
    assert clock.slept == [pytest.approx(4.0)]


def test_a_hint_beyond_the_time_budget_fails_at_once():
    lim, clock = limiter()
    cfg = LLMConfig(max_retries=3, total_timeout=30, timeout=10)

    def call():
        raise status_error(429, {"retry-after": "3600"})

    with pytest.raises(ModelCallFailed, match="time budget"):
        invoke_with_retries(call, cfg, sleep=clock.sleep, limiter=lim)
    assert clock.slept == []
