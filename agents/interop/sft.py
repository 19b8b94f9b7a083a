"""Spec-o3 cold-start SFT rows (LLaMA-Factory sharegpt) <-> trajectories.

A row: `conversations` [{from: system|human|gpt, value}], `images` [paths: overview first, then
zooms in call order; `<image>` tokens consume them in order], `sample_index`, `source_name`,
`ground_truth`, `total_iterations`, `total_tool_calls`. Tool calls are Hermes `<tool_call>` blocks
in `gpt` turns; tool returns are `human` turns of `<tool_response>` blocks. SpecReview's exports add
`claims` (the claim checker's results on the row's text, reviewer/services/exports.py); like any other field
it is kept on import and written back unchanged.

Import keeps each turn's raw value in its step (`data["raw"]`) and the row's other fields in
`outcome["spec_o3_sft"]`, so export reproduces the row exactly. Trajectories made here (no raw
values) export in the same shape, with Hermes tool calls written from the recorded calls.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import kb
from agents.interop.rowcheck import RowError, check_text_sizes, kind_of, need, need_type
from agents.tools.zoom import TOOL_NAME
from agents.trajectory import AgentInfo, Trajectory
from agents.vet.answer import parse_answer
from agents.vet.prompt import hermes_system_text

TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
RESPONSE_RE = re.compile(r"<tool_response>(.*?)</tool_response>", re.S)
ROW_FIELDS = ("sample_index", "source_name", "ground_truth", "total_iterations", "total_tool_calls")


def _task_from_prompt(text: str) -> str:
    for tid, t in kb.tasks().items():
        if f"determine if it is a {t['target']}" in text:
            return tid
    return "unknown"


ROLES = ("system", "human", "gpt")


def check_sft_row(row: Any) -> None:
    """Raise RowError (field and expectation) unless `row` has the shape sft_row_to_trajectory
    needs: `conversations` a list of {from: system|human|gpt, value: string} with a human prompt,
    `images` a list of path strings with at least as many paths as `<image>` tokens in human turns,
    and no text field longer than agents.trajectory.MAX_STEP_TEXT_BYTES (1 MB)."""
    if not isinstance(row, dict):
        raise RowError(f"expected a JSON object, got {kind_of(row)}")
    turns = need_type(need(row, "conversations"), list, "conversations", "an array of turns")
    for i, turn in enumerate(turns):
        where = f"conversations[{i}]"
        need_type(turn, dict, where, "an object {from, value}")
        if "from" not in turn:
            raise RowError(f"{where}.from: missing (expected one of {', '.join(map(repr, ROLES))})")
        if turn["from"] not in ROLES:
            raise RowError(f"{where}.from: expected one of {', '.join(map(repr, ROLES))}, got {turn['from']!r}")
        if "value" not in turn:
            raise RowError(f"{where}.value: missing (expected the turn's text)")
        need_type(turn["value"], str, f"{where}.value", "a string")
    if not any(t["from"] == "human" for t in turns):
        raise RowError("conversations: no 'human' turn (the first one is the prompt)")
    images = row.get("images")
    if images is None:
        images = []
    need_type(images, list, "images", "an array of paths")
    for i, path in enumerate(images):
        if not isinstance(path, str):
            raise RowError(f"images[{i}]: expected a path (string), got {kind_of(path)}")
    tokens = sum(t["value"].count("<image>") for t in turns if t["from"] == "human")
    if tokens > len(images):
        raise RowError(f"conversations have {tokens} <image> tokens but 'images' lists {len(images)} paths")
    check_text_sizes(row)


def sft_row_to_trajectory(row: dict[str, Any], images: Mapping[str, bytes] | None = None,
                          task: str | None = None) -> Trajectory:
    """`images` maps the row's image paths to PNG bytes when available (else only paths are kept).
    A malformed row raises RowError naming the field (check_sft_row)."""
    check_sft_row(row)
    images = images or {}
    paths = list(row.get("images") or [])
    next_image = iter(range(len(paths)))
    turns = row["conversations"]
    system = next((t["value"] for t in turns if t["from"] == "system"), None)
    first_human = next(t["value"] for t in turns if t["from"] == "human")
    traj = Trajectory(task=task or _task_from_prompt(first_human), source_path=row.get("source_name"),
                      agent=AgentInfo(name="vet", backend="spec-o3-sft", model=None))

    def take_image(value: str, count: int) -> tuple[list[str], list[str | None]]:
        used = [paths[next(next_image)] for _ in range(count)]
        shas = [traj.add_image(images[p]) if p in images else None for p in used]
        return used, shas

    seen_prompt = False
    for pos, turn in enumerate(turns):
        value, who = turn["value"], turn["from"]
        if who == "system":
            continue
        n_img = value.count("<image>")
        if who == "human" and not seen_prompt:
            seen_prompt = True
            used, shas = take_image(value, n_img)
            traj.add("prompt", text=value.replace("<image>", "", 1).lstrip("\n"), tool_name=TOOL_NAME, tool_args={},
                     image_sha=shas[0] if shas else None,
                     data={"raw": value, "turn": pos, "system": system, "image_paths": used, "tool_protocol": "hermes"})
        elif who == "gpt":
            traj.add("think", text=value, data={"raw": value, "turn": pos})
            for raw in TOOL_CALL_RE.findall(value):
                try:
                    obj = json.loads(raw)
                    traj.add("tool_call", tool_name=obj.get("name"), tool_args=obj.get("arguments") or {},
                             label=(obj.get("arguments") or {}).get("label"), data={"turn": pos})
                except ValueError:
                    traj.add("tool_call", tool_args={"raw": raw}, is_error=True, data={"turn": pos})
        else:  # a human turn after the prompt: tool responses
            used, shas = take_image(value, n_img)
            blocks = RESPONSE_RE.findall(value) or [value]
            for i, block in enumerate(blocks):
                text = block.replace("<image>", "").strip()
                has_img = "<image>" in block
                sha = shas.pop(0) if has_img and shas else None
                path = used.pop(0) if has_img and used else None
                traj.add("tool_result", text=text, tool_name=TOOL_NAME, image_sha=sha,
                         is_error=text.startswith("Error"),
                         data={"raw": value if i == 0 else None, "turn": pos, "image_path": path, "block": i})
    last_gpt = next((t["value"] for t in reversed(turns) if t["from"] == "gpt"), "")
    parsed = parse_answer(last_gpt)
    traj.add("answer", text=parsed.raw_answer, answer=parsed.as_dict())
    meta = {k: row[k] for k in row if k not in ("conversations",)}
    traj.outcome = {"status": "answered", "prediction": parsed.prediction, "answer": parsed.prediction,
                    "format_correct": parsed.format_correct,
                    "tool_calls": sum(s.kind == "tool_call" for s in traj.steps),
                    "ground_truth": row.get("ground_truth"), "spec_o3_sft": meta}
    return traj


def _hermes_call(step) -> str:
    call = json.dumps({"name": step.tool_name, "arguments": step.tool_args}, ensure_ascii=False)
    return "<tool_call>\n" + call + "\n</tool_call>"


def trajectory_to_sft_row(traj: Trajectory, image_path: Callable[[Trajectory, int], str] | None = None,
                          ground_truth: str | None = None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(row, {image path: PNG bytes}) for a trajectory; images without bytes keep only their path."""
    imported = traj.outcome.get("spec_o3_sft")
    image_path = image_path or (lambda t, i: f"images/{t.id}_{i}.png")
    steps = traj.steps
    if imported is not None and all("raw" in s.data for s in steps if s.kind in ("prompt", "think")):
        turns = []
        prompt = next(s for s in steps if s.kind == "prompt")
        if prompt.data.get("system") is not None:
            turns.append({"from": "system", "value": prompt.data["system"]})
        for s in steps:
            if s.kind == "prompt":
                turns.append({"from": "human", "value": s.data["raw"]})
            elif s.kind == "think":
                turns.append({"from": "gpt", "value": s.data["raw"]})
            elif s.kind == "tool_result" and s.data.get("raw") is not None:
                turns.append({"from": "human", "value": s.data["raw"]})
        files = {}
        for s in steps:
            path = (s.data.get("image_paths") or [None])[0] if s.kind == "prompt" else s.data.get("image_path")
            if path and s.image_sha in traj.images:
                files[path] = traj.images[s.image_sha]
        return {"conversations": turns, **imported}, files
    turns = [{"from": "system", "value": hermes_system_text()}]
    paths, files, pending_results = [], {}, []

    def image_token(step) -> str:
        path = image_path(traj, len(paths))
        paths.append(path)
        if step.image_sha and step.image_sha in traj.images:
            files[path] = traj.images[step.image_sha]
        return "<image>"

    def flush_results():
        if pending_results:
            turns.append({"from": "human", "value": "\n".join(pending_results)})
            pending_results.clear()

    gpt_value, writes_calls = None, False
    for s in steps:
        if s.kind == "prompt":
            turns.append({"from": "human", "value": image_token(s) + s.text})
        elif s.kind == "think":
            flush_results()
            gpt_value = {"from": "gpt", "value": s.text}
            writes_calls = "<tool_call>" not in s.text  # native calls: write them Hermes-style
            turns.append(gpt_value)
        elif s.kind == "tool_call" and gpt_value is not None and writes_calls:
            gpt_value["value"] += "\n" + _hermes_call(s)
        elif s.kind == "tool_result":
            img = "" if s.is_error else image_token(s) + "\n"
            pending_results.append(f"<tool_response>\n{img}{s.text}\n</tool_response>")
    flush_results()
    row = {"conversations": turns, "images": paths, "sample_index": traj.outcome.get("sample_index", 0),
           "source_name": traj.source_path, "ground_truth": ground_truth or traj.outcome.get("ground_truth"),
           "total_iterations": sum(s.kind == "think" for s in steps),
           "total_tool_calls": sum(s.kind == "tool_call" for s in steps)}
    return row, files
