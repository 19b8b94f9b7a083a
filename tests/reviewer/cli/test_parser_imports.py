"""`specreview --help` and a command's usage error answer without importing what only running a
command needs: the spectrum readers (specutils, ~2 s with ndcube's matplotlib), pandas, LangChain
or Panel. Every command's parser is built to answer either."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("specutils", "matplotlib", "pandas", "langchain_core", "langgraph", "panel", "agents.spectra")


def test_the_parser_of_every_command_is_built_without_the_readers_pandas_langchain_or_panel():
    probe = ("import sys\nfrom reviewer.cli import build_parser\nbuild_parser()\n"
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == ""


def test_help_still_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "reviewer.cli", "--help"], capture_output=True, text=True,
                         check=True, timeout=120)
    from reviewer.cli import SUBCOMMANDS

    assert all(name in out.stdout for name in SUBCOMMANDS)
