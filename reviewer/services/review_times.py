"""Time on item, per reviewer (and task) (issue 47, item 3): throughput, the usual time and its spread, the
verdicts given far faster than a reviewer's usual (marked for a second look), and a campaign's time to
completion.

The seconds are the active time each verdict was stored with (reviewer.activity: the page visible,
focused and in use on the item); verdicts without one (the CLI, imports) are not counted.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

# A verdict given in under this share of the reviewer's usual (median) time on the task is marked for a
# second look, once the usual is known from MIN_FOR_USUAL verdicts: a quarter of the usual is a glance
# where a look was due, not a faster reader (a faster reader's usual is faster).
RUSHED_FRACTION = 0.25
MIN_FOR_USUAL = 5


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    seconds = np.array([float(r["active_s"]) for r in rows])
    median, total = float(np.median(seconds)), float(seconds.sum())
    return {"timed": len(rows), "median_seconds": round(median, 1),
            "p90_seconds": round(float(np.percentile(seconds, 90)), 1),
            "items_per_hour": round(3600.0 * len(rows) / total, 1) if total > 0 else None}


def reviewer_times(store, session_id: str | None = None, by_task: bool = True) -> list[dict[str, Any]]:
    """Per reviewer (and task, with `by_task`): verdicts timed, items per hour of active time, median and p90
    seconds, and the trajectories whose verdict was rushed (under RUSHED_FRACTION of the reviewer's usual
    time on that task)."""
    rows = store.labels.verdict_times(session_id)
    usual: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in rows:
        usual[(row["reviewer"], row["task"])].append(row)
    rushed = set()
    for group in usual.values():
        if len(group) >= MIN_FOR_USUAL:
            median = float(np.median([float(r["active_s"]) for r in group]))
            rushed.update((r["reviewer"], r["trajectory_id"]) for r in group if float(r["active_s"]) < RUSHED_FRACTION * median)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[(row["reviewer"], row["task"]) if by_task else (row["reviewer"],)].append(row)
    out = []
    for key, group in sorted(groups.items()):
        out.append({"reviewer": key[0], **({"task": key[1]} if by_task else {}), **_summary(group),
                    "rushed": [r["trajectory_id"] for r in group if (r["reviewer"], r["trajectory_id"]) in rushed]})
    return out


def seconds_to_complete(verdicts_left: int, times: list[dict[str, Any]], reviewers: int) -> float | None:
    """A campaign's estimated active time to completion: the verdicts still needed at the usual time per verdict
    (the median of the reviewers' usual times, each counted once per verdict they timed: close to the pooled
    median, not equal to it), shared by `reviewers` working at once (None: nothing timed yet)."""
    if not times or reviewers < 1:
        return None
    values = np.repeat([t["median_seconds"] for t in times], [t["timed"] for t in times])
    return round(float(verdicts_left * np.median(values) / reviewers), 1)
