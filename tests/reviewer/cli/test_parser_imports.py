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


def test_the_command_exits_with_its_code_and_leaves_its_objects_out_of_the_last_collections():
    """`specreview` (reviewer.cli.script) returns main's exit code, and freezes the collector first: the
    interpreter's collections at exit then skip what a campaign's process held (~0.65 s, issue 22)."""
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
             "sys.argv = ['specreview', 'vet', '--task', 'no-such-task', 'x.fits']\n"
             "from reviewer.cli import script\nscript()\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "frozen at exit: True"
