"""Model configuration and the OpenAI-compatible client factory.

Configuration comes from (later wins): defaults, a TOML/YAML/JSON config file
($SPECREVIEW_LLM_CONFIG or an explicit path), the environment (SPECREVIEW_LLM_BASE_URL /
SPECREVIEW_LLM_MODEL / SPECREVIEW_LLM_API_KEY, falling back to OPENAI_BASE_URL / OPENAI_MODEL /
OPENAI_API_KEY), then explicit overrides. The key is a SecretStr: it never appears in repr, logs or
trajectories (`LLMConfig.public()` is what gets recorded).
"""
from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, SecretStr

ENV_KEYS = {
    "base_url": ("SPECREVIEW_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "model": ("SPECREVIEW_LLM_MODEL", "OPENAI_MODEL"),
    "api_key": ("SPECREVIEW_LLM_API_KEY", "OPENAI_API_KEY"),
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
    path = path or os.environ.get("SPECREVIEW_LLM_CONFIG")
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
    so the client's own are off and a dead server fails fast."""
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = dict(model=cfg.model, timeout=cfg.timeout, max_retries=0,
                                  api_key=cfg.api_key or SecretStr("not-needed"))
    if cfg.base_url:
        kwargs["base_url"] = cfg.base_url
    if cfg.temperature is not None:
        kwargs["temperature"] = cfg.temperature
    if cfg.max_tokens is not None:
        kwargs["max_completion_tokens"] = cfg.max_tokens
    return ChatOpenAI(**kwargs)


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


class ModelCallFailed(RuntimeError):
    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


def invoke_with_retries(call: Callable[[], Any], cfg: LLMConfig, sleep: Callable[[float], None] = time.sleep):
    """Run `call` with exponential backoff on retryable errors, within cfg.total_timeout.

    Returns (result, attempts). Raises ModelCallFailed naming the last error when attempts or the
    time budget run out, or at once for an error that retrying cannot fix (4xx, bad request).
    """
    start = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        try:
            return call(), attempt
        except Exception as exc:  # classified below; anything else is final
            elapsed = time.monotonic() - start
            if not is_retryable(exc) or attempt > cfg.max_retries:
                raise ModelCallFailed(f"{type(exc).__name__}: {exc}", attempt) from exc
            delay = cfg.backoff * (2 ** (attempt - 1)) * (0.75 + 0.5 * random.random())
            if elapsed + delay + cfg.timeout > cfg.total_timeout:
                raise ModelCallFailed(f"{type(exc).__name__}: {exc} (total time budget "
                                      f"{cfg.total_timeout:.0f} s exhausted)", attempt) from exc
            sleep(delay)
