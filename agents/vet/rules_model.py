"""The `rules` policy as a LangChain chat model: an offline, deterministic inspector.

It reads the conversation (how many zooms it has asked for so far) and the spectrum it was given,
zooms into the task's diagnostic windows one per turn, measures what each window is for, quotes the
measured numbers in its reasoning, and finally answers with the decision rule of kb/tasks/<id>.yaml.
Being a chat model, it runs through the same graph and trajectory recorder as an LLM.
"""
from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

from agents.tools.measure import Arrays
from agents.tools.zoom import TOOL_NAME
from agents.vet.evidence import Measurement, decide, decision_margin, derive, measure_window


class RulesVetModel(BaseChatModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: dict
    arrays: Arrays

    @property
    def _llm_type(self) -> str:
        return "specreview-rules"

    def bind_tools(self, tools, **kwargs):  # the only tool it uses is the zoom tool
        return self

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        windows = self.task["windows"]
        asked = sum(len(m.tool_calls) for m in messages if isinstance(m, AIMessage))
        if asked == 0:
            text = self._overview_text()
            measured: list[Measurement] = []
        else:
            win = windows[min(asked, len(windows)) - 1]
            measured = measure_window(self.task, win["id"], self.arrays)
            text = self._window_text(win, measured)
        if asked < len(windows):
            nxt = windows[asked]
            call = {"name": TOOL_NAME, "id": f"call_{asked + 1}",
                    "args": {"wavelength_range": list(nxt["range"]), "label": nxt["label"]}}
            msg = AIMessage(content=f"<think>{text} Next I zoom into {nxt['label']}.</think>",
                            tool_calls=[call])
        else:
            msg, measured = self._final(text, measured)
        msg.response_metadata["measurements"] = [m.as_data() for m in measured]
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _overview_text(self) -> str:
        labels = ", ".join(w["label"] for w in self.task["windows"])
        return (f"The question is whether this is a {self.task['target']}. I will check the "
                f"diagnostic regions one by one and measure them: {labels}.")

    @staticmethod
    def _window_text(win: dict, measured: list[Measurement]) -> str:
        parts = "; ".join(m.describe() for m in measured) or "nothing to measure here"
        return f"In the {win['label']} zoom I measure: {parts}."

    def _final(self, last_text: str, last_measured: list[Measurement]):
        values: dict[str, Measurement] = {}
        for win in self.task["windows"]:
            for m in measure_window(self.task, win["id"], self.arrays):
                values[m.id] = m
        derived = derive(self.task, values)
        decision = decide(self.task, values)
        lines = [last_text]
        if derived:
            lines.append("Derived: " + "; ".join(m.describe() for m in derived) + ".")
        if decision.passed:
            lines.append("Met: " + "; ".join(decision.passed) + ".")
        if decision.failed:
            lines.append("Not met: " + "; ".join(decision.failed) + ".")
        if decision.vetoes:
            lines.append("Against: " + "; ".join(decision.vetoes) + ".")
        if decision.answer == "YES":
            why = f"every criterion for a {self.task['target']} is met and no contaminant signature is seen"
        elif decision.vetoes and not decision.failed:
            why = "a contaminant signature is present: " + decision.vetoes[0]
        else:
            why = "not all criteria are met: " + decision.failed[0]
        content = (f"<think>{' '.join(lines)}</think>\n"
                   f"<answer>\\boxed{{{decision.answer}}} {why[0].upper() + why[1:]}.</answer>")
        msg = AIMessage(content=content)
        # margin: how close the deciding measurement sat to its threshold (triage reads it)
        msg.response_metadata["decision"] = {"answer": decision.answer, "failed": decision.failed,
                                             "vetoes": decision.vetoes, "margin": decision_margin(self.task, values)}
        return msg, last_measured + derived
