"""The Spec-o3 conversation: system text, the task prompt from kb, the Hermes tools block."""
from __future__ import annotations

import json

import kb
from agents.tools.zoom import TOOL_SCHEMA

SYSTEM_TEXT = "You are a helpful assistant."

ANSWER_FORMAT = (
    "Think inside <think></think> before every action. Call spectral_visualization_tool with a "
    "wavelength_range [min, max] in Angstrom (and an optional label) to zoom into a region; one "
    "call per turn. When you are ready, give the final decision as "
    "<answer>\\boxed{YES} or \\boxed{NO} followed by a short justification</answer>."
)

# The tools block of Spec-o3's Qwen2.5-VL chat template (spec_o3.yaml: custom_chat_template),
# used when a checkpoint is served without a tool parser (Hermes text protocol).
HERMES_TOOLS_BLOCK = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    "{tools}\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)


def task_prompt(task_id: str) -> str:
    """The user text of the first turn (without the leading `<image>`)."""
    text = kb.task(task_id)["prompt"].rstrip()
    return f"{text}\n\n{ANSWER_FORMAT}"


def hermes_system_text(tools=(TOOL_SCHEMA,)) -> str:
    body = "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools)
    return SYSTEM_TEXT + HERMES_TOOLS_BLOCK.format(tools=body)
