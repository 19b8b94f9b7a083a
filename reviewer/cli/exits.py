"""The exit codes of every `specreview` command: the contract a script relies on (README, "Exit codes").

0  everything asked for was done (inputs already present count as done);
1  some inputs failed (named, each with its reason, on the command's output), or the database could not
   be opened; what could be done was done;
2  usage: the command line is wrong (argparse's own code too), nothing was done;
75 the app serving this database was busy (EX_TEMPFAIL): nothing ran, run the command again;
130 interrupted (Ctrl-C, or the client of a forwarded command went away): what was committed stays.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_SOME_FAILED = 1
EXIT_USAGE = 2
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130

# (code, meaning) in the order the README lists them: tests/reviewer/cli/test_exit_codes.py keeps them equal
EXIT_CODES = (
    (EXIT_OK, "everything asked for was done (inputs already present count as done)"),
    (EXIT_SOME_FAILED, "some inputs failed (each named with its reason), or the database could not be opened"),
    (EXIT_USAGE, "usage: the command line is wrong; nothing was done"),
    (EXIT_BUSY, "the app serving the database was busy; nothing ran: run the command again"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C, or a forwarded command's client went away); what was committed stays"),
)
