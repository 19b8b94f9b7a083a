"""The review queue's filters: what the reviewer chose (the Filters card's widgets are made from
these parameters) and the store arguments that choice means. Held once, by the review state
(`ReviewState.filters`): the queue, `n` / `b` and the read-ahead all read the same object."""
from __future__ import annotations

from typing import Any

import param

from reviewer.store.queue import MAX_SELECTED_IDS

ANY = "any"
ORDERS = {"queue order": "default", "likely errors first (priority)": "priority",
          "most contradicted first": "contradicted"}
DEFAULT_ORDER = "queue order"


def _either(choice: str) -> bool | None:
    return None if choice == ANY else choice == "yes"


class QueueFilters(param.Parameterized):
    task = param.Selector(default=ANY, objects=[ANY])
    backend = param.Selector(default=ANY, objects=[ANY])
    agent_name = param.Selector(default=ANY, objects=[ANY, "vet", "verify"])
    queue_state = param.Selector(default="all", objects=["all", "todo", "done"], label="State")
    credibility = param.Selector(default=ANY, objects=[ANY, "HIGH", "MEDIUM", "LOW"])
    disagreement = param.Selector(default=ANY, objects=[ANY, "yes", "no"])
    reviewed_by = param.String(default="")
    contradicted = param.Selector(default=ANY, objects=[ANY, "yes", "no"], label="Contradicted claims")
    several_spectra = param.Selector(default=ANY, objects=[ANY, "yes", "no"], label="Objects with several spectra")
    sort = param.Selector(default=DEFAULT_ORDER, objects=list(ORDERS))
    # set by a selection in a Stats plot (reviewer.components.stats_selection), not by a widget: the queue shows
    # it as a removable chip ("N items selected in Stats")
    selected_ids = param.List(default=None, allow_None=True, item_type=str,
                              doc=f"only these trajectories (at most {MAX_SELECTED_IDS:,}); None: any")
    selected_of = param.Integer(default=0, doc="how many items the selection held before the cap")

    def select(self, ids) -> None:
        """Restrict the queue to `ids` (their order kept, repeats dropped), the first MAX_SELECTED_IDS of them;
        an empty selection lifts the restriction (a click beside the points clears a plot's selection)."""
        unique = list(dict.fromkeys(str(i) for i in ids))
        if not unique:
            self.clear_selection()
            return
        self.param.update(selected_of=len(unique), selected_ids=unique[:MAX_SELECTED_IDS])

    def clear_selection(self) -> None:
        self.param.update(selected_of=0, selected_ids=None)

    def choices_from(self, tasks: list[str], backends: list[str]) -> None:
        """The task and backend lists: those the store holds."""
        self.param.task.objects = [ANY, *tasks]
        self.param.backend.objects = [ANY, *backends]

    def store_args(self) -> dict[str, Any]:
        """The choice as the queue queries' arguments (reviewer.services.listing.QueueListing)."""
        pick = lambda v: None if v == ANY else v  # noqa: E731
        return {"task": pick(self.task), "agent_name": pick(self.agent_name), "backend": pick(self.backend),
                "credibility": pick(self.credibility), "state": self.queue_state,
                "disagreement": _either(self.disagreement), "reviewed_by": self.reviewed_by.strip() or None,
                "contradicted": _either(self.contradicted), "same_object": _either(self.several_spectra),
                "order": ORDERS[self.sort], "selected_ids": self.selected_ids}


SELECTION = ("selected_ids", "selected_of")  # not a widget of the Filters card: the queue's chip
FILTERS = tuple(p for p in QueueFilters.param if p != "name" and p not in SELECTION)  # the Filters card's widgets
