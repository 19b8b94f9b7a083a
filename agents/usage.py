"""Latency and token usage of model calls: one dict per call, summed per trajectory and per run.

A call's usage (stored in the step's `data["usage"]`):

    {"calls": 1, "failed_calls": 0, "attempts": 1, "throttled": 0, "latency_s": 0.51, "waited_s": 0.0,
     "prompt_tokens": 1840, "completion_tokens": 62, "total_tokens": 1902, "images": 2}

(`image_tokens` too when the server reports them). `images` counts the images sent in the request;
a conversation resends earlier images, so it is what the server had to read, not what was new.
Token counts are the server's own (`usage` in its reply); a server that reports none leaves them 0.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

COUNTS = ("calls", "failed_calls", "attempts", "throttled", "prompt_tokens", "completion_tokens",
          "total_tokens", "images", "image_tokens")
SECONDS = ("latency_s", "waited_s")


@dataclass
class CallStats:
    """What retrying one call cost (filled by agents.llm.invoke_with_retries)."""

    attempts: int = 0
    throttled: int = 0  # answers 429 / 503
    waited_s: float = 0.0  # backoff, Retry-After pauses and waits for a free slot
    latency_s: float = 0.0  # round trip of the last attempt


def count_images(messages) -> int:
    n = 0
    for m in messages:
        content = getattr(m, "content", None)
        if isinstance(content, list):
            n += sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")
    return n


def _server_usage(message) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    raw = (getattr(message, "response_metadata", None) or {}).get("token_usage") or {}
    out = {"prompt_tokens": int(meta.get("input_tokens") or raw.get("prompt_tokens") or 0),
           "completion_tokens": int(meta.get("output_tokens") or raw.get("completion_tokens") or 0)}
    out["total_tokens"] = int(meta.get("total_tokens") or raw.get("total_tokens")
                              or out["prompt_tokens"] + out["completion_tokens"])
    details = raw.get("prompt_tokens_details") or {}
    if isinstance(details, dict) and details.get("image_tokens") is not None:
        out["image_tokens"] = int(details["image_tokens"])
    return out


def call_usage(message, stats: CallStats, images: int) -> dict[str, Any]:
    """Usage of an answered call."""
    return {"calls": 1, "failed_calls": 0, "attempts": stats.attempts, "throttled": stats.throttled,
            "latency_s": round(stats.latency_s, 4), "waited_s": round(stats.waited_s, 4),
            **_server_usage(message), "images": images}


def failed_usage(stats: CallStats, images: int) -> dict[str, Any]:
    """Usage of a call that never got an answer (no tokens known)."""
    return {"calls": 1, "failed_calls": 1, "attempts": stats.attempts, "throttled": stats.throttled,
            "latency_s": round(stats.latency_s, 4), "waited_s": round(stats.waited_s, 4),
            "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "images": images}


def sum_usage(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {k: 0 for k in COUNTS if k != "image_tokens"}
    total.update({k: 0.0 for k in SECONDS})
    for u in usages:
        for k in COUNTS:
            if k in u:
                total[k] = total.get(k, 0) + int(u[k])
        for k in SECONDS:
            total[k] += float(u.get(k) or 0.0)
    for k in SECONDS:
        total[k] = round(total[k], 4)
    return total


def step_usages(traj) -> list[dict[str, Any]]:
    """The per-call usage dicts of a trajectory, in order: those on its steps, then a final call
    that failed before any step could record it (`outcome["failed_call"]`)."""
    out = [s.data["usage"] for s in traj.steps if isinstance(s.data.get("usage"), dict)]
    failed = (traj.outcome or {}).get("failed_call")
    return [*out, failed] if isinstance(failed, dict) else out


def trajectory_usage(traj) -> dict[str, Any]:
    return sum_usage(step_usages(traj))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (worker and render processes)."""
    try:
        import resource
    except ImportError:  # not POSIX: this process only
        return time.process_time()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class RunSummary:
    """Totals for a batch run: items done and failed, calls, tokens, latencies, wall and CPU time
    (the CPU says whether a run waited on the model server or on this machine)."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self.started = clock()
        self._cpu0 = cpu_seconds()
        self.done = 0
        self.failed = 0
        self.calls: list[dict[str, Any]] = []

    def add(self, usages: Iterable[dict[str, Any]] = (), ok: bool = True) -> None:
        self.calls.extend(usages)
        if ok:
            self.done += 1
        else:
            self.failed += 1

    def totals(self) -> dict[str, Any]:
        out = sum_usage(self.calls)
        wall = self._clock() - self.started
        lat = sorted(c["latency_s"] for c in self.calls if not c.get("failed_calls"))
        out.update(items=self.done, failed_items=self.failed, wall_s=round(wall, 3),
                   cpu_s=round(cpu_seconds() - self._cpu0, 3),
                   items_per_s=round(self.done / wall, 3) if wall > 0 else None,
                   latency_p50_s=round(statistics.median(lat), 4) if lat else None,
                   latency_p95_s=round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 4) if lat else None)
        return out

    def postfix(self) -> str:
        t = sum_usage(self.calls)
        return f"calls={t['calls']} tok={_short(t['total_tokens'])} fail={self.failed}"

    def lines(self, what: str = "items") -> list[str]:
        t = self.totals()
        rate = f"{t['items_per_s']:.2f}/s" if t["items_per_s"] is not None else "-"
        out = [(f"run: {t['items']} {what} done, {t['failed_items']} failed, wall {t['wall_s']:.1f} s ({rate}), "
               f"CPU {t['cpu_s']:.1f} s")]
        if t["calls"]:
            per = t["calls"] / max(t["items"] + t["failed_items"], 1)
            out.append(f"model calls: {t['calls']} ({per:.2f} per item), {t['failed_calls']} failed, "
                       f"{t['attempts'] - t['calls']} retries ({t['throttled']} throttled), waited "
                       f"{t['waited_s']:.1f} s; latency p50 {t['latency_p50_s'] or 0:.3f} s, "
                       f"p95 {t['latency_p95_s'] or 0:.3f} s")
            images = f", images sent {t['images']:,}"
            if "image_tokens" in t:
                images += f" ({t['image_tokens']:,} tokens)"
            out.append(f"tokens: prompt {t['prompt_tokens']:,}, completion {t['completion_tokens']:,}, "
                       f"total {t['total_tokens']:,}{images}")
        return out


def _short(n: int) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)
