"""What the list panes read: the filtered review queue of one reviewer, and the spectra list.

The queue is always someone's: `mine` marks and the "not reviewed by me" filter need the reviewer,
and an empty name reads it as nobody's (None to the store). Filters are the store's arguments
(ReviewState.queue_args()). In a campaign with reviewers per item (reviewer.services.campaigns), the queue
holds only the items the reviewer may still take, and the item they open is reserved for them (`hold`).
"""
from __future__ import annotations

from typing import Any

from reviewer.services import campaigns


class QueueListing:
    def __init__(self, store):
        self.store = store
        self._progress: dict[tuple, tuple] = {}  # (reviewer, session) -> (the content mark, the progress at it)
        self._plans: dict[str, int | None] = {}  # session id -> its reviewers per item (fixed when it is made)

    def _planned(self, filters: dict[str, Any]) -> dict[str, Any]:
        """The filters with the campaign's reviewers per item (store's `overlap`), when it plans them."""
        session_id = filters.get("session_id")
        if not session_id or "overlap" in filters:
            return filters
        if session_id not in self._plans:
            self._plans[session_id] = campaigns.plan_of(self.store, {"id": session_id})
        per_item = self._plans[session_id]
        return filters if per_item is None else {**filters, "overlap": per_item}

    def choices(self) -> dict[str, list]:
        """The tasks and backends the queue can be filtered by."""
        return self.store.queue.queue_choices()

    def count(self, reviewer: str, **filters: Any) -> int:
        return self.store.queue.queue_count(reviewer or None, **self._planned(filters))

    def page(self, reviewer: str, offset: int, limit: int, **filters: Any) -> list[dict]:
        return self.store.queue.queue_items(reviewer or None, offset=offset, limit=limit, **self._planned(filters))

    def position(self, trajectory_id: str, reviewer: str, **filters: Any) -> int | None:
        return self.store.queue.queue_position(trajectory_id, reviewer or None, **self._planned(filters))

    def neighbour(self, trajectory_id: str | None, delta: int, reviewer: str, **filters: Any):
        """(trajectory id, position) `delta` items away in the filtered queue, or None."""
        return self.store.queue.queue_neighbour(trajectory_id, delta, reviewer or None, **self._planned(filters))

    def hold(self, trajectory_id: str | None, reviewer: str, session_id: str | None) -> bool:
        """Reserve the item a reviewer opened in a campaign with reviewers per item (reviewer.services.campaigns
        .reserve; the one they held before is released); whether it is theirs to label. Outside such a
        campaign, nothing to hold: True."""
        per_item = self._planned({"session_id": session_id}).get("overlap") if session_id else None
        if per_item is None or not trajectory_id or not reviewer:
            return True
        return campaigns.reserve(self.store, {"id": session_id, "per_item": per_item}, trajectory_id, reviewer)

    def content_mark(self) -> tuple[int, int, int]:
        """(spectra, trajectories, newest verdict row): moves whenever anything is stored, by anyone."""
        return self.store.queue.content_mark()

    def verdicts_after(self, row: int) -> int:
        """How many verdict rows were stored after `row`."""
        return self.store.queue.verdicts_after(row)

    def progress(self, reviewer: str, session_id: str | None) -> dict[str, int]:
        """How many items the reviewer has a current verdict on, of how many: read again only once the
        store's content mark has moved (a verdict or a trajectory written anywhere). A filter change
        re-reads the queue's page, not this: at 1M trajectories it was 17-76 ms of each filter change,
        the mark ~3 ms (docs/benchmarks.md, issue 22). The mark is read first: a write during the count
        moves it, and the next call counts again. A campaign's items need no mark: they are written once,
        with the campaign (reviewer.store.sessions)."""
        mark = self.content_mark()
        kept = self._progress.get((reviewer, session_id))
        if kept is None or kept[0] != mark:
            kept = self._progress[reviewer, session_id] = (mark, self.store.queue.queue_progress(reviewer, session_id))
        return dict(kept[1])


class SpectraListing:
    def __init__(self, store):
        self.store = store

    def count(self, search: str = "") -> int:
        return self.store.spectra.count_spectra(search=search or None)

    def page(self, search: str, offset: int, limit: int) -> list[dict]:
        return self.store.spectra.list_spectra(search=search or None, limit=limit, offset=offset)
