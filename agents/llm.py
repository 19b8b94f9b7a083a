"""Model configuration and the OpenAI-compatible client factory.

Configuration comes from (later wins): defaults, a TOML/YAML/JSON config file
($SPECREVIEW_LLM_CONFIG or an explicit path), the environment (SPECREVIEW_LLM_BASE_URL /
SPECREVIEW_LLM_MODEL / SPECREVIEW_LLM_API_KEY, falling back to OPENAI_BASE_URL / OPENAI_MODEL /
OPENAI_API_KEY), then explicit overrides. The key is a SecretStr: it never appears in repr, logs or
trajectories (`LLMConfig.public()` is what gets recorded).

Calls: `call_chat(model, messages, cfg, limiter)` retries (Retry-After obeyed, else exponential
backoff) and returns the reply with its usage (latency, attempts, waits, tokens, images; see
agents.usage). `shared_chat(cfg)` is the process-wide client and RateLimiter (agents.ratelimit) of a
configuration: every thread of a run shares one connection pool, `cfg.concurrency` slots and any
server-requested pause.
"""
from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from email.utils import parsedate_to_datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from agents import settings
from agents.ratelimit import RateLimiter
from agents.usage import CallStats, call_usage, count_images, failed_usage

ENV_KEYS = {  # the project's variable (agents/settings.py) first, then OpenAI's own
    "base_url": (settings.LLM_BASE_URL.name, "OPENAI_BASE_URL"),
    "model": (settings.LLM_MODEL.name, "OPENAI_MODEL"),
    "api_key": (settings.LLM_API_KEY.name, "OPENAI_API_KEY"),
}


class LLMConfig(BaseModel):
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    tool_protocol: str = "native"  # native | hermes
    images_in_user_message: bool = False
    timeout: float = 120.0  # seconds per call
    max_retries: int = 4  # attempts after the first, on 429 / 5xx / timeouts / connection errors
    total_timeout: float = 600.0  # bound on one model step including retries and backoff
    backoff: float = 1.0  # first backoff in seconds, doubled per retry (with jitter)
    temperature: float | None = 0.0
    max_tokens: int | None = 4096
    concurrency: int = 16  # requests in flight from this process (the run's threads share one limiter)
    max_rps: float | None = None  # requests started per second, None = no bound

    def public(self) -> dict[str, Any]:
        """What may be recorded: everything but the key."""
        return self.model_dump(exclude={"api_key"})


def _read_file(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    if path.suffix == ".toml":
        import tomllib

        data = tomllib.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text) or {}
    return data.get("llm", data)


def load_config(path: str | os.PathLike | None = None, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {}
    path = path or settings.LLM_CONFIG.text()
    if path:
        values.update(_read_file(Path(path)))
    for field, names in ENV_KEYS.items():
        for name in names:
            if os.environ.get(name):
                values[field] = os.environ[name]
                break
    values.update({k: v for k, v in overrides.items() if v is not None})
    return LLMConfig(**values)


def make_chat_model(cfg: LLMConfig):
    """ChatOpenAI against any OpenAI-compatible endpoint. Retries are ours (`invoke_with_retries`),
    so the client's own are off and a dead server fails fast. The request sent is ChatOpenAI's own,
    made with less CPU (see `_lean_chat_class`)."""
    kwargs: dict[str, Any] = {"model": cfg.model, "timeout": cfg.timeout, "max_retries": 0,
                              "api_key": cfg.api_key or SecretStr("not-needed")}
    if cfg.base_url:
        kwargs["base_url"] = cfg.base_url
    if cfg.temperature is not None:
        kwargs["temperature"] = cfg.temperature
    if cfg.max_tokens is not None:
        kwargs["max_completion_tokens"] = cfg.max_tokens
    return _lean_chat_class()(**kwargs)


@lru_cache(maxsize=1)
def _lean_chat_class():
    """ChatOpenAI, less two costs per call that an LLM campaign pays from one busy process (profiled
    with 32 requests in flight: together ~30 % of the client's CPU per model call, growing with the
    conversation, since every call resends the earlier images):

    - langchain-core looks up its data-block types with `typing.get_type_hints` for every content
      block of every message it converts (~0.2-0.5 ms a block); the answer is a constant of the
      installed version, so it is computed once (`_cache_block_types`);
    - the openai SDK walks the messages and tools against its TypedDict unions (`maybe_transform`)
      to rename aliased keys; no chat message or tool type has one (the walk returns them as they
      were), so they go out as the request body's `messages` and `tools` through `extra_body`,
      which the SDK sends as given. The JSON the server gets is the same, keys in the same order.
      Requests with a `response_format` (structured output) are left alone: the SDK reads their
      messages and tools itself.
    """
    from langchain_openai import ChatOpenAI

    _cache_block_types()

    class LeanChatOpenAI(ChatOpenAI):
        def _get_request_payload(self, input_, *, stop=None, **kwargs) -> dict:
            payload = super()._get_request_payload(input_, stop=stop, **kwargs)
            extra = payload.get("extra_body")
            if ("messages" not in payload or "response_format" in payload
                    or not (extra is None or isinstance(extra, dict))):
                return payload
            moved = {key: payload[key] for key in ("messages", "tools") if key in payload and key not in (extra or {})}
            if "messages" not in moved:
                return payload
            if "tools" in moved:
                del payload["tools"]
            payload["messages"] = []  # a required argument of the SDK's create(); extra_body's wins
            payload["extra_body"] = {**(extra or {}), **moved}
            return payload

    return LeanChatOpenAI


def _cache_block_types() -> None:
    """Memoize langchain-core's `_get_data_content_block_types` (a private helper that recomputes a
    constant tuple from type hints on every call); a no-op when a version lacks it or caches it."""
    try:
        from langchain_core.messages import content as lc_content
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return
    fn = getattr(lc_content, "_get_data_content_block_types", None)
    if callable(fn) and not hasattr(fn, "cache_info"):
        lc_content._get_data_content_block_types = lru_cache(maxsize=1)(fn)


def is_retryable(exc: BaseException) -> bool:
    try:
        import openai
    except ImportError:  # pragma: no cover - langchain-openai depends on it
        return False
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, TimeoutError)


def is_throttled(exc: BaseException) -> bool:
    """The server refused for load (429 Too Many Requests, 503 Service Unavailable)."""
    return getattr(exc, "status_code", None) in (429, 503)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` in seconds or as an
    HTTP date), or None when it said nothing usable."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if not value:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            continue
    return None


class ModelCallFailed(RuntimeError):
    def __init__(self, message: str, attempts: int, usage: dict | None = None):
        super().__init__(message)
        self.attempts = attempts
        self.usage = usage  # agents.usage.failed_usage when the caller asked for it


def invoke_with_retries(call: Callable[[], Any], cfg: LLMConfig, sleep: Callable[[float], None] = time.sleep,
                        limiter: RateLimiter | None = None, stats: CallStats | None = None):
    """Run `call` with retries on retryable errors, within cfg.total_timeout.

    A 429 / 503 with Retry-After waits exactly that long (with a limiter, every thread of the run
    waits: the server spoke to the client, not to one request); other retryable errors back off
    exponentially with jitter. Each attempt takes a limiter slot when one is given; `stats` receives
    attempts, throttled answers, seconds waited and the last attempt's latency.
    Returns (result, attempts). Raises ModelCallFailed naming the last error when attempts or the
    time budget run out, or at once for an error that retrying cannot fix (4xx, bad request).
    """
    stats = stats if stats is not None else CallStats()
    start = time.monotonic()
    while True:
        stats.attempts += 1
        try:
            return _attempt(call, limiter, stats), stats.attempts
        except Exception as exc:  # classified below; anything else is final
            elapsed = time.monotonic() - start
            if is_throttled(exc):
                stats.throttled += 1
            if not is_retryable(exc) or stats.attempts > cfg.max_retries:
                raise ModelCallFailed(f"{type(exc).__name__}: {exc}", stats.attempts) from exc
            hinted = retry_after(exc) if is_throttled(exc) else None
            backoff = cfg.backoff * (2 ** (stats.attempts - 1)) * (0.75 + 0.5 * random.random())
            delay = hinted if hinted is not None else backoff
            if elapsed + delay + cfg.timeout > cfg.total_timeout:
                raise ModelCallFailed(f"{type(exc).__name__}: {exc} (total time budget "
                                      f"{cfg.total_timeout:.0f} s exhausted)", stats.attempts) from exc
            if limiter is not None and hinted is not None:
                limiter.pause(delay)  # the next slot() waits it out, and so does every other thread
            else:
                sleep(delay)
                stats.waited_s += delay


def _attempt(call, limiter, stats: CallStats):
    with (limiter.slot() if limiter is not None else nullcontext(0.0)) as waited:
        stats.waited_s += waited
        t0 = time.monotonic()
        try:
            return call()
        finally:
            stats.latency_s = time.monotonic() - t0


def call_chat(model, messages, cfg: LLMConfig, limiter: RateLimiter | None = None):
    """One model call with retries; returns (message, usage) where usage is agents.usage's dict.
    On failure raises ModelCallFailed with `.usage` set (the attempts and waits it cost)."""
    stats = CallStats()
    images = count_images(messages)
    try:
        msg, _ = invoke_with_retries(lambda: model.invoke(messages), cfg, limiter=limiter, stats=stats)
    except ModelCallFailed as exc:
        exc.usage = failed_usage(stats, images)
        raise
    return msg, call_usage(msg, stats, images)


class SharedChat:
    """A chat model and the limiter every thread of this process uses for one configuration."""

    def __init__(self, cfg: LLMConfig):
        self.cfg = cfg
        self.chat = make_chat_model(cfg)  # one HTTP connection pool for all threads
        self.limiter = RateLimiter(cfg.concurrency, cfg.max_rps)


_SHARED: dict[str, SharedChat] = {}
_SHARED_LOCK = threading.Lock()


def shared_chat(cfg: LLMConfig) -> SharedChat:
    """The process-wide SharedChat for this configuration. Jobs that arrive pickled (a process pool,
    a Dask worker) rebuild their config and land on the same one, so the limit holds per process."""
    key = cfg.model_dump_json() + "\0" + (cfg.api_key.get_secret_value() if cfg.api_key else "")
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = SharedChat(cfg)
        return _SHARED[key]
