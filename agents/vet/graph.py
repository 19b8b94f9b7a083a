"""The Spec-o3 vetting loop as a LangGraph graph: model -> tool -> model ... until an answer or
MAX_TOOL_CALLS zooms. One compiled graph serves every policy; the per-run things (the model, the
tool, the protocol, the trajectory being recorded) travel in `config["configurable"]["vet_run"]`.
"""
from __future__ import annotations

import operator
from functools import lru_cache
from typing import Annotated, TypedDict

from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

MAX_TOOL_CALLS = 8  # Spec-o3: max_assistant_turns 8, one tool call per turn


class VetState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]
    tool_calls: Annotated[int, operator.add]
    done: bool


def _run(config):
    return config["configurable"]["vet_run"]


def model_node(state: VetState, config) -> dict:
    return _run(config).model_step(state["messages"], state.get("tool_calls", 0))


def tool_node(state: VetState, config) -> dict:
    return _run(config).tool_step()


def route(state: VetState) -> str:
    return END if state.get("done") else "tools"


@lru_cache(maxsize=1)
def vet_graph():
    g = StateGraph(VetState)
    g.add_node("model", model_node)
    g.add_node("tools", tool_node)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", route, {"tools": "tools", END: END})
    g.add_edge("tools", "model")
    return g.compile()
