"""Where a `specreview` command writes, and how it is asked to stop.

A command run in its own process writes to that process's stdout and stderr and stops on Ctrl-C.
The same command run by the serving app for a client (reviewer/server_endpoint.py) writes to that
client and stops when the client goes away, while the app's own output, and every other thread's,
stays where it was. So a command never writes to `sys.stdout` or `sys.stderr` itself: it writes to
the `Console` it is given (`args.console`), and its long loops call `console.check()` between items,
which raises `Cancelled` once the client has gone. Stopping between items is what Ctrl-C gives too:
the commands commit in transactions, and a run that stops resumes with what is left."""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import TextIO


class Cancelled(Exception):
    """The client of a forwarded command went away: the command stops at its next item."""


@dataclass
class Console:
    """A command's two output streams and its cancel flag."""

    out: TextIO
    err: TextIO
    cancelled: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def of_this_process(cls) -> Console:
        """The process's own streams, as they are now (a command run from a shell)."""
        return cls(sys.stdout, sys.stderr)

    def say(self, *parts: object, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        """Print a result line (stdout)."""
        print(*parts, sep=sep, end=end, file=self.out, flush=flush)

    def warn(self, *parts: object, sep: str = " ", end: str = "\n") -> None:
        """Print a problem or a progress note (stderr)."""
        print(*parts, sep=sep, end=end, file=self.err)

    def check(self) -> None:
        """Raise `Cancelled` when the command was asked to stop."""
        if self.cancelled.is_set():
            raise Cancelled("the client went away")

    def shows_progress(self, no_progress: bool = False) -> bool:
        """A progress bar only where a person watches stderr."""
        return not no_progress and bool(self.err.isatty())


def console_of(args) -> Console:
    """The console a parsed command line carries (`run_args` sets it); the process's own otherwise."""
    console = getattr(args, "console", None)
    return console if isinstance(console, Console) else Console.of_this_process()
