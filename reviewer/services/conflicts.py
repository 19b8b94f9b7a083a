"""Where reviewers disagree: the one place that decides it, and everything that reads it.

`reviewer.services.consensus` holds the rules (DESI merge for VI labels, effective labels for verdicts).
This service applies them to the store: after every verdict or resolution it stores the
trajectory's consensus (`verdict_state`), and the queue's disagreement column and filter, the
Conflicts tab, `verdict_for` and the exports all read that one stored answer. An approval and an
override to the same answer therefore agree everywhere, and a conflict shown in the queue is a
conflict a merger can resolve. Beside it the same sync stores the trajectory's settled label
(`settled_labels`: the truth a human label gives, the agent's answer and whether it is right), which
the stats and the bench export read (`evaluation_frame`).
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import pandas as pd

from reviewer.services.consensus import (
    agent_label,
    answer_correct,
    describe_label,
    effective_label,
    labels_agree,
    merge_vi_labels,
    normalise_label,
    verdict_consensus,
)
from reviewer.services.rows import group_rows
from reviewer.store.review_queries import UnknownSession


def _scope_session(scope: str) -> str | None:
    return scope or None


_SYNC_TRIES = 3


def sync_verdict_states(store, trajectory_id: str | None = None) -> int:
    """Recompute the stored consensus and settled label wherever they are behind their labels or
    their trajectory's answer (one trajectory, or all); returns how many (trajectory, scope) rows were
    updated. A few queries per scope, whatever the number of trajectories (one after a label,
    thousands after an import). A concurrent sync storing the same rows wins; what is then still
    behind is recomputed (a few tries: the other sync stores what it read).
    A whole check is skipped while nothing was written since the last one found everything in step
    (`write_mark`, read before the check: a write during it moves the mark, and the next call checks;
    the full "behind" query costs ~0.1 s at 1M trajectories, on every Stats and Conflicts read); when
    only labels were written since, only the labels written since are compared (a few rows, where all
    of them took 35-100 ms at 1M)."""
    mark = store.verdict_state.write_mark() if trajectory_id is None else None
    in_step = store.db.in_step_at.get("verdict_state") if mark is not None else None
    if in_step is not None and in_step == mark:
        return 0
    # only labels written since (the same trajectories, none saved again): no answer to compare again
    answers_changed = in_step is None or in_step[2:] != mark[2:]
    done = 0
    for _ in range(_SYNC_TRIES):
        behind = store.verdict_state.verdict_states_behind(
            trajectory_id, answers_changed=answers_changed, labels_after=None if answers_changed else in_step[:2])
        stored = True
        for scope, rows in group_rows(behind, "scope").items():
            states = _stored_states_of(store, [r["trajectory_id"] for r in rows], _scope_session(scope))
            stored = store.verdict_state.put_verdict_states(
                [{**states[r["trajectory_id"]], "trajectory_id": r["trajectory_id"], "scope": scope,
                  "synced_seq": r["seq"], "own_hash": r["own_hash"]} for r in rows]) and stored
        done += len(behind)
        if stored:
            if mark is not None:
                store.db.in_step_at["verdict_state"] = mark
            break
    return done


def _stored_status(result: dict[str, Any]) -> str:
    return "resolved" if result["status"] == "conflict" and result["resolution"] else result["status"]


def _final_verdict_of(store, trajectory_id: str, session: str | None) -> dict[str, Any]:
    rows = store.reviews.current_reviews(session, trajectory_id=trajectory_id)
    traj = store.trajectories.trajectory_summary(trajectory_id)
    own = agent_label(traj["task"], traj["answer"], traj["answer_z"], traj["outcome"]) if traj else {}
    resolution = store.verdict_state.latest_resolution(trajectory_id, session_id=_session_id(store, session))
    return final_verdict(rows, own, resolution)


def _stored_states_of(store, trajectory_ids: list[str], session: str | None) -> dict[str, dict[str, Any]]:
    """What is stored of many trajectories, as `_final_verdict_of` decides their consensus, in two
    queries: n_reviews, status (the stored status) and the settled label (`_settled_label`). The
    review rows carry their trajectory's answer; a trajectory without current reviews is unreviewed
    whatever its answer."""
    reviews = group_rows(store.reviews.current_reviews(session, trajectory_ids=trajectory_ids), "trajectory_id")
    resolutions = store.verdict_state.latest_resolutions_of(trajectory_ids, session_id=_session_id(store, session))
    out = {}
    for tid in trajectory_ids:
        rows = reviews.get(tid, [])
        own = agent_label(rows[0]["task"], rows[0]["answer"], rows[0]["answer_z"], rows[0]["outcome"]) if rows else {}
        result = final_verdict(rows, own, resolutions.get(tid))
        out[tid] = {"n_reviews": result["n_reviews"], "status": _stored_status(result),
                    **_settled_label(rows, own, result["final"])}
    return out


def _settled_label(rows: list[dict[str, Any]], own: dict[str, Any], final: dict[str, Any] | None) -> dict[str, Any]:
    """The label a trajectory's answer is scored against, when a human label counts as the truth (an
    agreed, single or resolved verdict, not a rejection; some current verdict): settled, truth, truth_z,
    truth_source, and the agent's answer (predicted, predicted_z), its credibility and whether it is correct."""
    if not rows or final is None or final["action"] == "reject":
        return {"settled": False}
    truth = normalise_label(final["label"])
    predicted, predicted_z = own.get("answer", own.get("type")), own.get("z")
    answer, answer_z = truth.get("answer", truth.get("type")), truth.get("z")
    return {"settled": True, "task": rows[0]["task"], "truth": answer, "truth_z": answer_z, "truth_source": final["source"],
            "predicted": predicted, "predicted_z": predicted_z, "credibility": _credibility(rows[0]),
            "correct": answer_correct(predicted, predicted_z, answer, answer_z)}


def _session_id(store, session: str | None) -> str | None:
    if session is None:
        return None
    found = store.sessions.find_session(session)
    return found["id"] if found else session


def verdict_for(store, trajectory_id: str, session: str | None = None) -> dict[str, Any]:
    """The consensus verdict on a trajectory (`verdict_consensus` as a dict) with `resolution` when a
    merger resolved it after the last review, and `final`: {action, label, source} that counts (the
    resolution, else the agreed verdict; None while in conflict)."""
    return _final_verdict_of(store, trajectory_id, session)


def final_verdict(rows: list[dict[str, Any]], own: dict[str, Any], resolution: dict[str, Any] | None) -> dict[str, Any]:
    consensus = verdict_consensus(rows, own)
    # its fields as a dict (as_dict without the deep copies: the consensus is not kept)
    result = {f.name: getattr(consensus, f.name) for f in fields(consensus)}
    result["resolution"] = resolution if resolution and _newer(resolution, rows) else None
    final = None
    if result["resolution"] is not None:
        res = result["resolution"]
        label = own if res["action"] == "approve" else (res["label"] if res["action"] == "override" else None)
        final = {"action": res["action"], "label": label, "source": "resolution"}
    elif result["status"] in ("single", "agreed"):
        final = {"action": result["action"], "label": result["label"], "source": result["status"]}
    result["final"] = final
    return result


def conflict_queue(store, kind: str | None = None, include_resolved: bool = False,
                   session: str | None = None) -> list[dict[str, Any]]:
    """Items where reviewers disagree, oldest disagreement first (every one: `conflict_page`)."""
    return conflict_page(store, kind=kind, include_resolved=include_resolved, session=session)[0]


def conflict_page(store, *, offset: int = 0, limit: int | None = None, kind: str | None = None,
                  include_resolved: bool = False, session: str | None = None,
                  labelled_by: str | None = None) -> tuple[list[dict[str, Any]], int]:
    """(`limit` items from `offset` of the conflicts, oldest disagreement first; how many there are).
    Each: kind ('trajectory' / 'spectrum'), item_id, spectrum_id, task, object_id, survey, reasons,
    labels (the current labels in conflict), resolution (the latest merger row or None), resolved,
    updated_at. A conflict is its item's stored consensus (`verdict_state`, `vi_state`, synced first);
    only the page's items have their labels read and merged (at 1M trajectories reading and merging
    every conflict's labels was most of the tab's time). `labelled_by`: only the conflicts on which that
    reviewer has a current label of their own, paged and counted as such (blind review:
    reviewer.services.labels.LabelService.conflict_page)."""
    scope = _session_id(store, session) or ""
    order: list[tuple[Any, str, str]] = []  # (updated_at, item id, kind)
    if kind in (None, "trajectory"):
        sync_verdict_states(store)
        ids = store.verdict_state.conflicted_trajectory_ids(scope)
        if include_resolved:
            ids = sorted(set(ids) | set(store.verdict_state.resolved_trajectory_ids(scope)))
        latest = store.reviews.latest_review_times(ids, session) if ids else {}
        order += [(at, tid, "trajectory") for tid, at in latest.items()]
    if kind in (None, "spectrum"):
        sync_vi_states(store)
        order += [(at, sid, "spectrum") for sid, at in store.vi_state.vi_conflicts(scope, include_resolved)]
    if labelled_by is not None:
        mine = {what: store.reviews.labelled_by(labelled_by, what, [i for _, i, w in order if w == what], session)
                for what in ("trajectory", "spectrum")}
        order = [o for o in order if o[1] in mine[o[2]]]
    order.sort(key=lambda o: (o[0], o[1]))
    page = order[offset:None if limit is None else offset + limit]
    spectra = _vi_items(store, [item_id for _, item_id, what in page if what == "spectrum"], session)
    ids = [item_id for _, item_id, what in page if what == "trajectory"]
    reviews = group_rows(store.reviews.current_reviews(session, trajectory_ids=ids), "trajectory_id") if ids else {}
    resolved = store.verdict_state.latest_resolutions_of(ids, session_id=scope or None) if ids else {}
    items = []
    for _, item_id, what in page:
        # an item whose labels were all withdrawn between the state's read and its labels' is left out
        if what == "spectrum":
            if item_id in spectra:
                items.append(spectra[item_id])
            continue
        rows = reviews.get(item_id)
        if not rows:
            continue
        first = rows[0]
        own = agent_label(first["task"], first["answer"], first["answer_z"], first["outcome"])
        items.append(_item("trajectory", item_id, first, verdict_consensus(rows, own).reasons, rows,
                           resolved.get(item_id)))
    return items, len(order)


def sync_vi_states(store) -> int:
    """Recompute the stored VI consensus (`vi_state`) of every (spectrum, scope) behind its VI labels or
    resolutions, reading only those spectra's labels; returns how many were stored. As
    `sync_verdict_states`, a concurrent sync storing the same rows wins and what is still behind is
    recomputed."""
    done = 0
    for _ in range(_SYNC_TRIES):
        behind = store.vi_state.vi_states_behind()
        stored = True
        for scope, rows in group_rows(behind, "scope").items():
            session = _scope_session(scope)
            ids = [r["spectrum_id"] for r in rows]
            labels = group_rows(store.reviews.current_vi_labels(session, spectrum_ids=ids), "spectrum_id")
            resolutions = store.reviews.latest_resolutions("spectrum", session)
            states = []
            for r in rows:
                current = labels.get(r["spectrum_id"], [])
                merge = merge_vi_labels(current, r["pipeline_z"], r["pipeline_class"])
                resolution = resolutions.get(r["spectrum_id"])
                states.append({"spectrum_id": r["spectrum_id"], "scope": scope, "conflict": merge.is_conflict,
                               "resolved": bool(resolution) and bool(current) and _newer(resolution, current),
                               "updated_at": max((c["created_at"] for c in current), default=resolution and
                                                 resolution["created_at"]), "synced_seq": r["seq"]})
            stored = store.vi_state.put_vi_states([s for s in states if s["updated_at"] is not None]) and stored
        done += len(behind)
        if stored:
            break
    return done


def _vi_items(store, spectrum_ids: list[str], session: str | None) -> dict[str, dict[str, Any]]:
    """The Conflicts tab's items of some spectra whose VI labels conflict: their labels, the merge's reasons
    and the latest resolution."""
    if not spectrum_ids:
        return {}
    resolutions = store.reviews.latest_resolutions("spectrum", session)
    items = {}
    for sid, rows in group_rows(store.reviews.current_vi_labels(session, spectrum_ids=spectrum_ids),
                                "spectrum_id").items():
        merge = merge_vi_labels(rows, rows[0]["pipeline_z"], rows[0]["pipeline_class"])
        items[sid] = _item("spectrum", sid, rows[0], merge.reasons, rows, resolutions.get(sid))
    return items


def disputed_choices(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The answers a trajectory conflict is between (`conflict_queue` items), as a merger's starting
    points, oldest first: {action, label, reviewers, text}. Each reviewer's verdict counts as what it
    says the answer is (an override to the agent's own answer is an approval of it), so that a
    resolution chosen from these is one the label rules accept. Empty for a VI conflict or a hidden one."""
    if item.get("kind") != "trajectory" or not item.get("labels"):
        return []
    first = item["labels"][0]
    own = agent_label(first.get("task"), first.get("answer"), first.get("answer_z"), first.get("outcome"))
    choices: list[dict[str, Any]] = []
    for row in item["labels"]:
        label = effective_label(row, own)
        if row["action"] == "reject" or label is None:
            action, label = "reject", None
        elif own and labels_agree(label, own):
            action, label = "approve", normalise_label(own)
        else:
            action = "override"
        same = next((c for c in choices if c["action"] == action and
                     (label is None or labels_agree(c["label"], label))), None)
        if same is None:
            same = {"action": action, "label": label, "reviewers": []}
            choices.append(same)
        same["reviewers"].append(str(row.get("reviewer")))
    for c in choices:
        said = {"approve": f"approve ({describe_label(c['label'])}, the agent's answer)",
                "override": f"override to {describe_label(c['label'])}", "reject": "reject"}[c["action"]]
        c["text"] = f"{said}: {', '.join(c['reviewers'])}"
    return choices


def vi_consensus(store, spectrum_id: str, session: str | None = None) -> dict[str, Any]:
    """The DESI merge of a spectrum's current VI labels, overridden by a newer merger resolution."""
    rows = store.reviews.current_vi_labels(session, spectrum_id=spectrum_id)
    spec = store.spectra.get_spectrum(spectrum_id) or {}
    out = merge_vi_labels(rows, spec.get("pipeline_z"), spec.get("pipeline_class")).as_dict()
    res = store.reviews.latest_resolutions("spectrum", session).get(spectrum_id)
    out["resolution"] = res if res and _newer(res, rows) else None
    return out


def evaluation_frame(store, session: str | None = None, task: str | None = None) -> pd.DataFrame:
    """One row per trajectory with a settled human label (agreed, single, or resolved; rejected
    trajectories and open conflicts left out), by trajectory id: trajectory_id, spectrum_id, task,
    agent_name, backend, model, credibility, predicted, predicted_z, truth, truth_z, truth_source and
    correct (`answer_correct`). Read from the stored settled labels (`_settled_label`), synced first."""
    return store.verdict_state.settled_labels(_synced_scope(store, session), task)


def own_evaluation_frame(store, reviewer: str, session: str | None = None) -> pd.DataFrame:
    """`evaluation_frame`'s columns (task, predicted, predicted_z, credibility, truth, truth_z, correct; by
    trajectory id) from one reviewer's own current verdicts alone, each taken as the trajectory's only
    label: what the agents' accuracy is by that reviewer's labels, unmoved by anyone else's (blind review,
    reviewer.services.labels.LabelService.visible_stats). One read of that reviewer's verdicts."""
    columns = ["trajectory_id", "task", "predicted", "predicted_z", "credibility", "truth", "truth_z", "correct"]
    rows = []
    for row in store.reviews.current_reviews(session, reviewer=reviewer):
        own = agent_label(row["task"], row["answer"], row["answer_z"], row["outcome"])
        settled = _settled_label([row], own, final_verdict([row], own, None)["final"])
        if settled["settled"]:
            rows.append({"trajectory_id": row["trajectory_id"], **{k: settled.get(k) for k in columns[1:]}})
    return pd.DataFrame(rows, columns=columns).set_index("trajectory_id")


def settled_counts(store, session: str | None = None) -> pd.DataFrame:
    """`evaluation_frame`'s rows counted (reviewer.store.verdict_state.settled_counts): task, truth, predicted,
    credibility, correct, n."""
    return store.verdict_state.settled_counts(_synced_scope(store, session))


def _synced_scope(store, session: str | None) -> str:
    """The stored settled labels' scope of a session ('' for every label), after they are synced."""
    scope = ""
    if session is not None:
        found = store.sessions.find_session(session)
        if found is None:
            raise UnknownSession(f"no audit session named {session!r}")
        scope = found["id"]
    sync_verdict_states(store)
    return scope


def verdicts_frame(store, session: str | None = None, task: str | None = None,
                   reviews: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """Each reviewer's current verdict: trajectory_id, reviewer, action, label (text), task, created_at.
    `reviews`: `store.reviews.current_reviews(session, task)` when the caller has already read them."""
    reviews = store.reviews.current_reviews(session, task) if reviews is None else reviews
    rows = [{"trajectory_id": r["trajectory_id"], "reviewer": r["reviewer"], "action": r["action"],
             "label": describe_label(r["label"]) if r.get("label") else None, "task": r["task"],
             "created_at": r["created_at"]} for r in reviews]
    return pd.DataFrame(rows, columns=["trajectory_id", "reviewer", "action", "label", "task", "created_at"])


# -- helpers ---------------------------------------------------------------------------------
def _newer(resolution: dict[str, Any], labels: list[dict[str, Any]]) -> bool:
    return all((resolution["created_at"], resolution["seq"]) > (r["created_at"], r["seq"]) for r in labels)


def _item(kind: str, item_id: str, first: dict[str, Any], reasons: list[str], rows: list[dict[str, Any]],
          resolution: dict[str, Any] | None) -> dict[str, Any]:
    return {"kind": kind, "item_id": item_id, "spectrum_id": first.get("spectrum_id"), "task": first.get("task"),
            "object_id": first.get("object_id"), "survey": first.get("survey"),
            "reasons": reasons, "labels": rows, "resolution": resolution,
            "resolved": bool(resolution) and _newer(resolution, rows),
            "updated_at": max(r["created_at"] for r in rows)}


def _credibility(row: dict[str, Any]) -> str | None:
    if row.get("credibility"):
        return str(row["credibility"]).upper()
    brief = (row.get("outcome") or {}).get("brief") or {}
    value = brief.get("confidence") or (row.get("outcome") or {}).get("credibility")
    return str(value).upper() if value else None
