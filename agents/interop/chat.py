"""Conversation logs of any OpenAI-compatible agent -> trajectories.

A row (one JSON object per line):
  messages   OpenAI chat messages: {role: system|developer|user|assistant|tool, content}; content a
             string or a list of parts ({type: text, text} / {type: image_url, image_url: {url}});
             assistant messages may carry `tool_calls` [{id, type: function, function: {name,
             arguments (JSON text or object)}}], tool messages `tool_call_id`. Images are PNG data
             URLs or paths relative to the file's folder.
  spectrum   the spectrum the agent saw: a stored spectrum id or its file name (`file#target` for a
             row of a multi-spectrum file; or give `target`)
  task       a kb task id (`a`, `wd`, ...) or `verify` (or `--task` for every row)
  optional   model (the model's name), redshift (the frame of the zoom tool's ranges, Spec-o3's
             tool state: rest frame when truthy), and any other field, kept in outcome["chat"].

Mapping onto the trajectory schema: the first user message is the `prompt` (its first image the
overview); each assistant message a `think` step plus one `tool_call` per call; each tool message a
`tool_result` carrying its call's name and arguments, so a Spec-o3 zoom call
(`spectral_visualization_tool` with `wavelength_range` [min, max] Å, reference.md §1.1) is a zoom
step and the plot shades its window. A later user message with an image completes the last
tool_result that has none (OpenAI tool messages cannot hold images, so agents send the zoom's PNG
in a user turn); otherwise it becomes a tool_result of its own. The last assistant message is the
answer: for a vet task Spec-o3's `<answer>\\boxed{YES|NO}</answer>` (agents/vet/answer.py).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kb
from agents.interop.images import read_image
from agents.interop.rowcheck import RowError, check_text_sizes, kind_of, need, need_type
from agents.tools.zoom import TOOL_NAME
from agents.trajectory import AgentInfo, Trajectory
from agents.vet.answer import parse_answer

ROLES = ("system", "developer", "user", "assistant", "tool")
BACKEND = "chat"


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    """Content as [{type: text, text} | {type: image, url}] (RowError for a shape we cannot read)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    need_type(content, list, where, "a string or an array of parts")
    out = []
    for i, part in enumerate(content):
        at = f"{where}[{i}]"
        need_type(part, dict, at, "an object {type, ...}")
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            out.append({"type": "text", "text": need_type(need(part, "text", at), str, f"{at}.text", "a string")})
        elif kind in ("image_url", "input_image"):
            url = need(part, "image_url", at)
            url = url.get("url") if isinstance(url, dict) else url
            out.append({"type": "image", "url": need_type(url, str, f"{at}.image_url.url", "a string")})
        else:
            raise RowError(f"{at}.type: expected 'text' or 'image_url', got {kind!r}")
    return out


def _text_only(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its image URLs: a data URL may be larger than a step's text limit and has its
    own (agents.interop.images.MAX_IMAGE_BYTES)."""
    out = dict(row)
    msgs = []
    for m in row.get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            m = {**m, "content": [{**p, "image_url": ""} if isinstance(p, dict) and "image_url" in p else p
                                  for p in m["content"]]}  # same places, so a field is named by its index
        msgs.append(m)
    out["messages"] = msgs
    return out


def check_chat_row(row: Any, task: str | None = None) -> None:
    """RowError (field and expectation) unless `row` has the shape chat_row_to_trajectory reads."""
    if not isinstance(row, dict):
        raise RowError(f"expected a JSON object, got {kind_of(row)}")
    msgs = need_type(need(row, "messages"), list, "messages", "an array of messages")
    spectrum = need(row, "spectrum")
    if not isinstance(spectrum, str) or not spectrum.strip():
        raise RowError("spectrum: expected a spectrum id or file name (string)")
    task = task or need(row, "task")
    if task != "verify" and task not in kb.tasks():
        raise RowError(f"task: expected 'verify' or one of {', '.join(sorted(kb.tasks()))}, got {str(task)[:40]!r}")
    for key in ("model", "target"):
        if row.get(key) is not None and not isinstance(row[key], str | int):
            raise RowError(f"{key}: expected a string, got {kind_of(row[key])}")
    z = row.get("redshift")
    if z is not None and (isinstance(z, bool) or not isinstance(z, int | float)):
        raise RowError(f"redshift: expected a number, got {kind_of(z)}")
    for i, m in enumerate(msgs):
        where = f"messages[{i}]"
        need_type(m, dict, where, "an object {role, content}")
        if m.get("role") not in ROLES:
            raise RowError(f"{where}.role: expected one of {', '.join(map(repr, ROLES))}, got {m.get('role')!r}")
        _parts(m.get("content"), f"{where}.content")
        calls = m.get("tool_calls")
        if calls is not None:
            for j, call in enumerate(need_type(calls, list, f"{where}.tool_calls", "an array")):
                fn = need(call, "function", f"{where}.tool_calls[{j}]")
                need_type(need(fn, "name", f"{where}.tool_calls[{j}].function"), str,
                          f"{where}.tool_calls[{j}].function.name", "a string")
    if not any(m["role"] == "user" for m in msgs):
        raise RowError("messages: no 'user' message (the first one is the prompt)")
    check_text_sizes(_text_only(row))


def _arguments(raw: Any) -> tuple[dict[str, Any], bool]:
    """(arguments, ok): OpenAI sends them as JSON text; some servers as an object."""
    if isinstance(raw, dict):
        return raw, True
    try:
        args = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        args = None
    return (args, True) if isinstance(args, dict) else ({"raw": raw if isinstance(raw, str) else None}, False)


class _Builder:
    def __init__(self, traj: Trajectory, base: Path):
        self.traj, self.base, self.notes = traj, base, []
        self.calls: dict[str, tuple[str | None, dict[str, Any], str | None]] = {}
        self.last_call: tuple[str | None, dict[str, Any], str | None] = (None, {}, None)

    def content(self, message: dict[str, Any], where: str) -> tuple[str, list[str | None]]:
        parts = _parts(message.get("content"), f"{where}.content")
        text = "\n".join(p["text"] for p in parts if p["type"] == "text")
        shas = []
        for k, p in enumerate(parts):
            if p["type"] != "image":
                continue
            try:
                shas.append(self.traj.add_image(read_image(p["url"], self.base, f"{where}.content[{k}]")))
            except RowError as exc:  # the step keeps its place; the plot re-renders a zoom from its window
                self.notes.append(f"{exc}; image not stored")
                shas.append(None)
        return text, shas

    def assistant(self, m: dict[str, Any], i: int, text: str) -> None:
        data: dict[str, Any] = {"turn": i}
        if isinstance(m.get("reasoning_content"), str):
            data["reasoning"] = m["reasoning_content"]
        self.traj.add("think", text=text, data=data)
        for call in m.get("tool_calls") or []:
            fn = call["function"]
            args, ok = _arguments(fn.get("arguments"))
            label = args.get("label") if isinstance(args.get("label"), str) else None
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            self.traj.add("tool_call", tool_name=fn["name"], tool_args=args, label=label, is_error=not ok,
                          data={"call_id": call_id, "turn": i})
            self.last_call = (fn["name"], args if ok else {}, label)
            if call_id is not None:
                self.calls[call_id] = self.last_call

    def result(self, m: dict[str, Any], i: int, text: str, shas: list[str | None]) -> None:
        call_id = m.get("tool_call_id") if isinstance(m.get("tool_call_id"), str) else None
        name, args, label = self.calls.get(call_id, self.last_call) if call_id else self.last_call
        if m.get("role") == "tool" and isinstance(m.get("name"), str):
            name = m["name"]
        self.traj.add("tool_result", text=text, tool_name=name, tool_args=args, label=label,
                      image_sha=shas[0] if shas else None, is_error=text.lstrip().startswith("Error"),
                      data={"call_id": call_id, "turn": i, "role": m["role"]})

    def later_user(self, m: dict[str, Any], i: int, text: str, shas: list[str | None]) -> None:
        last = self.traj.steps[-1] if self.traj.steps else None
        if shas and shas[0] and last is not None and last.kind == "tool_result" and last.image_sha is None:
            last.image_sha = shas[0]
            if text:
                last.data["user_text"] = text
            return
        self.result(m, i, text, shas)


def chat_row_to_trajectory(row: dict[str, Any], base: Path, task: str | None = None) -> tuple[Trajectory, list[str]]:
    """(trajectory, notes): `notes` name what was not kept (an image that could not be read, no final
    answer). The spectrum link is the caller's (it needs the store)."""
    check_chat_row(row, task)
    task = task or row["task"]
    agent = AgentInfo(name="verify" if task == "verify" else "vet", backend=BACKEND,
                      model=None if row.get("model") is None else str(row["model"]))
    traj = Trajectory(task=task, agent=agent, target=None if row.get("target") is None else str(row["target"]))
    b = _Builder(traj, base)
    msgs = row["messages"]
    system = "\n".join(b.content(m, f"messages[{i}]")[0] for i, m in enumerate(msgs)
                       if m["role"] in ("system", "developer")) or None
    seen_prompt = False
    for i, m in enumerate(msgs):
        if m["role"] in ("system", "developer"):
            continue
        text, shas = b.content(m, f"messages[{i}]")
        if m["role"] == "user" and not seen_prompt:
            seen_prompt = True
            traj.add("prompt", text=text, tool_name=TOOL_NAME, tool_args={}, image_sha=shas[0] if shas else None,
                     data={"system": system, "turn": i, "tool_protocol": "openai",
                           "tool_state": {"redshift": row.get("redshift")}})
        elif m["role"] == "assistant":
            b.assistant(m, i, text)
        elif m["role"] == "tool":
            b.result(m, i, text, shas)
        elif seen_prompt:
            b.later_user(m, i, text, shas)
    _finish(traj, msgs, b.notes)
    traj.outcome["chat"] = {k: v for k, v in row.items() if k != "messages"}
    return traj, b.notes


def _finish(traj: Trajectory, msgs: list[dict[str, Any]], notes: list[str]) -> None:
    last = msgs[-1]
    final = "\n".join(p["text"] for p in _parts(last.get("content"), "final") if p["type"] == "text")
    calls = sum(s.kind == "tool_call" for s in traj.steps)
    if last["role"] != "assistant" or last.get("tool_calls"):
        notes.append("the conversation ends without a final assistant answer")
        traj.outcome = {"status": "error", "error": "no final answer in the conversation", "tool_calls": calls}
        return
    if traj.task == "verify":
        traj.add("answer", text=final, answer={"text": final})
        traj.outcome = {"status": "answered", "report": final, "tool_calls": calls}
        return
    parsed = parse_answer(final)
    traj.add("answer", text=parsed.raw_answer, answer=parsed.as_dict())
    traj.outcome = {"status": "answered", "prediction": parsed.prediction, "answer": parsed.prediction,
                    "format_correct": parsed.format_correct, "tool_calls": calls}
