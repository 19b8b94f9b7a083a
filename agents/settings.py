"""Every `SPECREVIEW_` environment variable, in one table: its name, what it means, its default, who
reads it, and the functions that read it. Code reads these variables through here only (tests/
test_settings.py: no other module names one, and every name used anywhere is in this table), and the
README's table of variables is made from this one (`python -m agents.settings` prints it; the same
test keeps them equal).

It sits in agents/, the lowest layer that reads any of them (the spectrum readers, the LLM config),
so that every layer above may import it; it imports nothing of the project and no library.
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    name: str
    meaning: str
    default: str  # as the README says it
    read_by: str  # where it is read (module or command)

    def raw(self) -> str:
        """The variable's text, stripped ('' when unset)."""
        return os.environ.get(self.name, "").strip()

    def is_set(self) -> bool:
        return bool(self.raw())

    def text(self, default: str | None = None) -> str | None:
        """The variable's text, or `default` when it is unset or empty."""
        return self.raw() or default

    def flag(self, default: bool) -> bool:
        """'1' on, '0' off, anything else (unset) the default."""
        raw = self.raw()
        return default if raw not in ("0", "1") else raw == "1"

    def whole_number(self, default: int, low: int, high: int) -> int:
        """A whole number between `low` and `high`; SystemExit (the server does not start) otherwise."""
        raw = self.raw()
        try:
            value = int(raw) if raw else default
        except ValueError:
            raise SystemExit(f"{self.name}={raw!r} is not a whole number") from None
        if not low <= value <= high:
            raise SystemExit(f"{self.name} must be between {low} and {high} (it is {value})")
        return value

    def set_for_children(self, value: str) -> None:
        """Set the variable in this process's environment (read by the processes and threads it starts)."""
        os.environ[self.name] = value


DB = Setting("SPECREVIEW_DB", "the DuckDB file of reviews (every command's `--db` beats it)",
             "`specreview.duckdb` in the per-user data folder", "reviewer/store/paths.py")
LLM_CONFIG = Setting("SPECREVIEW_LLM_CONFIG", "LLM config file (TOML, YAML or JSON) for `--backend openai` and `judge`",
                     "none", "agents/llm.py")
LLM_BASE_URL = Setting("SPECREVIEW_LLM_BASE_URL", "an OpenAI-compatible endpoint's base URL (beats the config file)",
                       "`$OPENAI_BASE_URL`, else OpenAI's", "agents/llm.py")
LLM_MODEL = Setting("SPECREVIEW_LLM_MODEL", "the chat model's name (beats the config file)",
                    "`$OPENAI_MODEL`, else gpt-4o-mini", "agents/llm.py")
LLM_API_KEY = Setting("SPECREVIEW_LLM_API_KEY", "the endpoint's key (never stored, never on the command line)",
                      "`$OPENAI_API_KEY`", "agents/llm.py")
TEMPLATE_DIR = Setting("SPECREVIEW_TEMPLATE_DIR", "Redrock template folder, when `$RR_TEMPLATE_DIR` is not set",
                       "the derived set bundled in kb/templates", "agents/tools/templates.py")
MAX_FILE_BYTES = Setting("SPECREVIEW_MAX_FILE_BYTES", "largest spectrum file read, in bytes after decompression",
                         "536870912 (512 MB)", "agents/spectra/sniff.py")
MATCH_ARCSEC = Setting("SPECREVIEW_MATCH_ARCSEC", "radius of the same-object cross-match, in arcsec "
                       "(`ingest --match-radius` beats it)", "1.5", "reviewer/services/same_object.py")
STATS_AT_START = Setting("SPECREVIEW_STATS_AT_START", "0: the server does not compute the Stats tab's figures "
                         "as it starts", "1", "reviewer/app_hooks.py")
PAGE_BURST_SECONDS = Setting("SPECREVIEW_PAGE_BURST_SECONDS", "seconds of page building one client may spend at once",
                             "10", "reviewer/page_limits.py")
PAGE_SHARE_PERCENT = Setting("SPECREVIEW_PAGE_SHARE_PERCENT", "share of the server's time one client's page loads "
                             "refill at, in percent", "20", "reviewer/page_limits.py")
PAGES_IN_FLIGHT = Setting("SPECREVIEW_PAGES_IN_FLIGHT", "page loads of one client built at the same time",
                          "4", "reviewer/page_limits.py")
LOG_WRITES = Setting("SPECREVIEW_LOG_WRITES", "1: the server logs each label write's latency (bench/bench_labels.py)",
                     "0", "reviewer/label_writer.py")
SHARED_DATA = Setting("SPECREVIEW_SHARED_DATA", "the shared corpus of real spectra the tests and benchmarks use "
                      "(never the product)", "`shared/data` beside the checkout", "tests/shared_data.py")
REQUIRE_BROWSER = Setting("SPECREVIEW_REQUIRE_BROWSER", "1: a browser test fails, rather than skips, where Chromium "
                          "is missing (CI sets it)", "0", "tests/conftest.py")
CALL_TIMES = Setting("SPECREVIEW_CALL_TIMES", "the file bench/call_times/sitecustomize.py appends call times to",
                     "`call-times.log`", "bench/call_times/sitecustomize.py")

SETTINGS = (DB, LLM_CONFIG, LLM_BASE_URL, LLM_MODEL, LLM_API_KEY, TEMPLATE_DIR, MAX_FILE_BYTES, MATCH_ARCSEC,
            STATS_AT_START, PAGE_BURST_SECONDS, PAGE_SHARE_PERCENT, PAGES_IN_FLIGHT, LOG_WRITES, SHARED_DATA,
            REQUIRE_BROWSER, CALL_TIMES)
BY_NAME = {s.name: s for s in SETTINGS}


def markdown_table() -> str:
    """The README's table of variables (between its `settings table` markers)."""
    lines = ["| variable | meaning | default | read by |", "|---|---|---|---|"]
    lines += [f"| `{s.name}` | {s.meaning} | {s.default} | {s.read_by} |" for s in SETTINGS]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
