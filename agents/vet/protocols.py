"""The two ways a model calls the zoom tool, and how tool results go back to it.

`native`: OpenAI-style tool calls (OpenAI o3, vLLM with a tool parser, the rules policy); results
go back as `role: tool` messages, optionally with the images repeated in a follow-up user message
(many endpoints accept images only there). `hermes`: Spec-o3 checkpoints served without a parser
write `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in the text; results go back as one
user turn of `<tool_response>` blocks (image, then text), as in Spec-o3's chat template.
"""
from __future__ import annotations

import base64
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agents.tools.zoom import TOOL_NAME, TOOL_SCHEMA, ZoomResult
from agents.vet.prompt import SYSTEM_TEXT, hermes_system_text

TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


@dataclass
class Call:
    """One requested tool call; `error` is set when it could not be parsed."""

    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    raw: str | None = None


def image_part(png: bytes) -> dict[str, Any]:
    return {"type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


def text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)


class Protocol:
    name = "native"

    def __init__(self, images_in_user_message: bool = False):
        self.images_in_user_message = images_in_user_message

    def system_text(self) -> str:
        return SYSTEM_TEXT

    def first_messages(self, prompt_text: str, overview_png: bytes | None) -> list[BaseMessage]:
        parts: list[Any] = [image_part(overview_png)] if overview_png else []
        parts.append({"type": "text", "text": prompt_text})
        return [SystemMessage(self.system_text()), HumanMessage(parts)]

    def bind(self, model):
        return model.bind_tools([TOOL_SCHEMA])

    def calls(self, message: AIMessage) -> list[Call]:
        out = [Call(tc.get("id") or uuid.uuid4().hex, tc["name"], dict(tc.get("args") or {}))
               for tc in message.tool_calls]
        for bad in getattr(message, "invalid_tool_calls", []) or []:
            out.append(Call(bad.get("id") or uuid.uuid4().hex, bad.get("name") or "", {},
                            error=f"Error: invalid tool call arguments: {bad.get('error') or 'unparsable JSON'}",
                            raw=bad.get("args")))
        return out

    def result_messages(self, calls: list[Call], results: list[ZoomResult]) -> list[BaseMessage]:
        msgs: list[BaseMessage] = []
        images = []
        for call, res in zip(calls, results, strict=True):
            if res.png is not None and not self.images_in_user_message:
                content: Any = [image_part(res.png), {"type": "text", "text": res.text}]
            else:
                content = res.text
            if res.png is not None:
                images.append(res.png)
            msgs.append(ToolMessage(content=content, tool_call_id=call.id, name=call.name or TOOL_NAME))
        if self.images_in_user_message and images:
            msgs.append(HumanMessage([*(image_part(p) for p in images),
                                      {"type": "text", "text": "Rendered image(s) of the tool call(s) above."}]))
        return msgs


class HermesProtocol(Protocol):
    name = "hermes"

    def system_text(self) -> str:
        return hermes_system_text()

    def bind(self, model):
        return model

    def calls(self, message: AIMessage) -> list[Call]:
        out = []
        for raw in TOOL_CALL_RE.findall(text_of(message)):
            call_id = uuid.uuid4().hex
            try:
                obj = json.loads(raw)
                if not isinstance(obj, dict) or not isinstance(obj.get("arguments", {}), dict):
                    raise ValueError("expected {\"name\": ..., \"arguments\": {...}}")
                out.append(Call(call_id, str(obj.get("name", "")), dict(obj.get("arguments") or {}), raw=raw))
            except ValueError as exc:
                out.append(Call(call_id, "", {}, error=f"Error: invalid tool call JSON: {exc}", raw=raw))
        return out

    def result_messages(self, calls: list[Call], results: list[ZoomResult]) -> list[BaseMessage]:
        parts: list[Any] = []
        for res in results:
            parts.append({"type": "text", "text": "<tool_response>\n"})
            if res.png is not None:
                parts.append(image_part(res.png))
            parts.append({"type": "text", "text": f"{res.text}\n</tool_response>"})
        return [HumanMessage(parts)]


def make_protocol(name: str, images_in_user_message: bool = False) -> Protocol:
    if name == "native":
        return Protocol(images_in_user_message)
    if name == "hermes":
        return HermesProtocol(images_in_user_message)
    raise ValueError(f"unknown tool protocol {name!r}; use 'native' or 'hermes'")
