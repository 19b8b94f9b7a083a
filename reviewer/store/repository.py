"""`Store`: the opened database file and its repositories, the only SQL in the house.

Each repository owns one concern's SQL and holds the one `Database` (connection, transactions);
one that needs another's rows or writers is handed it when it is made (a trajectory is saved with
its images, a label's reviewer is registered first, the queue reads claim counts), so none reaches
back through the Store. Callers name the repository: `store.labels.add_review(...)`.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from reviewer.store.claims import ClaimRepository
from reviewer.store.connection import close_all
from reviewer.store.database import Database
from reviewer.store.labels import LabelRepository
from reviewer.store.objects import ObjectRepository
from reviewer.store.queue import QueueRepository
from reviewer.store.review_queries import ReviewRepository
from reviewer.store.sessions import SessionRepository
from reviewer.store.spectra import SpectrumRepository
from reviewer.store.step_judgments import StepJudgmentRepository
from reviewer.store.trajectories import ImageRepository, TrajectoryRepository
from reviewer.store.triage import TriageRepository
from reviewer.store.verdict_state import VerdictStateRepository
from reviewer.store.vi_state import VIStateRepository


class Store:
    """Everything SpecReview keeps, in one DuckDB file. Thread-safe; one per process per file is enough
    (two `Store(path)` in one process share the connection)."""

    def __init__(self, path: str | os.PathLike | None = None):
        """Open (or join this process's open connection to) a database file.

        `path=None` uses $SPECREVIEW_DB or the per-user default; ":memory:" gives a private
        in-memory database (not shared, gone on close).
        """
        self.db = Database(path)
        self.spectra = SpectrumRepository(self.db)
        self.images = ImageRepository(self.db)
        self.trajectories = TrajectoryRepository(self.db, self.images)
        self.labels = LabelRepository(self.db)
        self.sessions = SessionRepository(self.db, self.labels)
        self.claims = ClaimRepository(self.db, self.labels)
        self.queue = QueueRepository(self.db, self.claims)
        self.reviews = ReviewRepository(self.db, self.labels, self.sessions)
        self.step_judgments = StepJudgmentRepository(self.db, self.labels, self.reviews._scope)  # campaign scope as every label's
        self.verdict_state = VerdictStateRepository(self.db)
        self.vi_state = VIStateRepository(self.db)
        self.triage = TriageRepository(self.db)
        self.objects = ObjectRepository(self.db)

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        """The database file (None: in memory)."""
        return self.db.path

    @property
    def schema_version(self) -> int:
        return self.db.schema_version

    def probe(self) -> None:
        """Read the whole file once per process, so that damage shows when it is opened (see `Database.probe`)."""
        self.db.probe()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All writes of this thread inside the block, through any repository, commit together or not at all."""
        with self.db.transaction() as cur:
            yield cur

    def close(self) -> None:
        """Close the process's connection to this file: every Store on the same file closes with it."""
        self.db.close()

    @property
    def is_open(self) -> bool:
        """Whether statements can still run (false once this file's connection was closed)."""
        return self.db.is_open

    @staticmethod
    def close_all() -> None:
        close_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path) if self.path else ':memory:'!r})"


__all__ = ["Store"]
