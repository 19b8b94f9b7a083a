"""Run the vet graph on one spectrum and record every step as a Trajectory.

    traj = vet_spectrum(spectrum, "a")                        # rules policy, renders deferred
    traj = vet_spectrum(spectrum, "wd", backend="openai")     # any OpenAI-compatible endpoint

The spectrum's pipeline answers are blanked first: the agent decides from the flux only.
"""
from __future__ import annotations

import time
from typing import Any

import kb
from agents.llm import LLMConfig, ModelCallFailed, call_chat, load_config, shared_chat
from agents.ratelimit import RateLimiter
from agents.render_pool import PooledZoomTool
from agents.tools.judgeable import assess, refuse
from agents.tools.measure import Arrays
from agents.tools.zoom import TOOL_NAME, SpectralVisualizationTool, ZoomResult
from agents.trajectory import AgentInfo, Trajectory
from agents.usage import sum_usage
from agents.vet.answer import parse_answer
from agents.vet.graph import MAX_TOOL_CALLS, vet_graph
from agents.vet.prompt import task_prompt
from agents.vet.protocols import Call, Protocol, make_protocol, text_of
from agents.vet.rules_model import RulesVetModel
from agents.vet.rules_version import RULES_VERSION

BACKENDS = ("rules", "openai")


class VetRun:
    """Per-run state the graph nodes act on: model, tool, protocol and the trajectory."""

    def __init__(self, traj: Trajectory, model, protocol: Protocol, tool: SpectralVisualizationTool,
                 *, eager: bool, llm_config: LLMConfig | None = None, limiter: RateLimiter | None = None,
                 max_tool_calls: int = MAX_TOOL_CALLS):
        self.traj = traj
        self.model = protocol.bind(model)
        self.protocol = protocol
        self.tool = tool
        self.eager = eager
        self.llm_config = llm_config
        self.limiter = limiter
        self.usage: list[dict[str, Any]] = []  # one dict per model call (agents.usage), LLM runs only
        self.max_tool_calls = max_tool_calls
        self.pending: list[Call] = []

    # -- graph nodes -------------------------------------------------------------------------
    def model_step(self, messages, calls_so_far: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        usage = None
        try:
            if self.llm_config is None:
                msg, attempts = self.model.invoke(messages), 1
            else:
                msg, usage = call_chat(self.model, messages, self.llm_config, self.limiter)
                attempts = usage["attempts"]
        except ModelCallFailed as exc:
            if exc.usage:  # no step records a call that never got an answer: the outcome does
                self.usage.append(exc.usage)
                return self._stop("error", error=str(exc), attempts=exc.attempts, failed_call=exc.usage)
            return self._stop("error", error=str(exc), attempts=exc.attempts)
        except Exception as exc:
            return self._stop("error", error=f"{type(exc).__name__}: {exc}", attempts=1)
        text = text_of(msg)
        data: dict[str, Any] = {"elapsed_s": round(time.perf_counter() - t0, 6), "attempts": attempts}
        if usage is not None:
            data["usage"] = usage
            self.usage.append(usage)
        for key in ("measurements", "decision", "finish_reason", "token_usage"):
            if key in msg.response_metadata:
                data[key] = msg.response_metadata[key]
        self.traj.add("think", text=text, data=data)
        calls = self.protocol.calls(msg)
        if not calls:
            return self._answer(text, "answered", messages=[msg])
        if calls_so_far >= self.max_tool_calls:
            return self._answer(text, "tool_limit", messages=[msg])
        for call in calls:
            args = call.args if call.error is None else {"raw": call.raw}
            self.traj.add("tool_call", tool_name=call.name or None, tool_args=args,
                          label=call.args.get("label") if isinstance(call.args.get("label"), str) else None,
                          is_error=call.error is not None, data={"call_id": call.id})
        self.pending = calls
        return {"messages": [msg]}

    def tool_step(self) -> dict[str, Any]:
        calls, self.pending = self.pending, []
        used = sum(1 for s in self.traj.steps if s.kind == "tool_result")
        results = []
        for call in calls:
            if used >= self.max_tool_calls:
                res = ZoomResult(f"Error: tool call limit of {self.max_tool_calls} reached.", True, call.args)
            elif call.error is not None:
                res = ZoomResult(call.error, True, {"raw": call.raw})
            elif call.name != TOOL_NAME:
                res = ZoomResult(f"Error: unknown tool {call.name!r}; the only tool is {TOOL_NAME}.", True, call.args)
            else:
                res = self.tool(call.args.get("wavelength_range"), _label(call.args.get("label")), render=self.eager)
            used += 1
            results.append(res)
            sha = self.traj.add_image(res.png) if res.png is not None else None
            data: dict[str, Any] = {"call_id": call.id}
            if res.plotted_range is not None:
                data["plotted_range"] = list(res.plotted_range)
            if res.extra.get("deferred"):
                data["deferred"] = True
            self.traj.add("tool_result", text=res.text, tool_name=TOOL_NAME, tool_args=res.args,
                          label=_label(call.args.get("label")), image_sha=sha, is_error=res.is_error, data=data)
        return {"messages": self.protocol.result_messages(calls, results), "tool_calls": len(calls)}

    # -- endings -----------------------------------------------------------------------------
    def _answer(self, text: str, status: str, messages) -> dict[str, Any]:
        parsed = parse_answer(text)
        if status != "answered":
            parsed.format_correct = False
        self.traj.add("answer", text=parsed.raw_answer, answer=parsed.as_dict())
        self._outcome(status, prediction=parsed.prediction, format_correct=parsed.format_correct)
        margin = self._decision_margin()
        if margin is not None:  # a policy that records its decision rule (rules): how close it was
            self.traj.outcome["margin"] = margin
        return {"messages": messages, "done": True}

    def _decision_margin(self) -> dict[str, Any] | None:
        """The margin the deciding model step recorded (agents.vet.evidence.decision_margin), when its
        decision is the answer given; absent for models that record none (LLMs)."""
        for step in reversed(self.traj.steps):
            if step.kind == "think":
                decision = step.data.get("decision") if isinstance(step.data, dict) else None
                margin = decision.get("margin") if isinstance(decision, dict) else None
                if isinstance(margin, dict) and decision.get("answer") == self.traj.outcome.get("prediction"):
                    return dict(margin)
                return None
        return None

    def _stop(self, status: str, **info) -> dict[str, Any]:
        self._outcome(status, prediction=None, format_correct=False, **info)
        return {"done": True}

    def _outcome(self, status: str, **info) -> None:
        calls = sum(1 for s in self.traj.steps if s.kind == "tool_result")
        self.traj.outcome = {"status": status, "tool_calls": calls, **info}
        if info.get("prediction") is not None:
            self.traj.outcome["answer"] = info["prediction"]  # the store's filterable answer column
        if self.llm_config is not None:  # the rules policy calls no model: its outcome stays as it was
            self.traj.outcome["usage"] = sum_usage(self.usage)


def _label(value) -> str | None:
    return value if isinstance(value, str) and value else None


def vet_spectrum(spectrum, task_id: str, backend: str = "rules", *, eager_renders: bool = False,
                 llm_config: LLMConfig | None = None, chat_model=None, spectrum_id: str | None = None,
                 redshift: float | None = None, title: str = "Spectrum",
                 limiter: RateLimiter | None = None) -> Trajectory:
    """Vet one spectrum for one task; returns the recorded trajectory (never raises for a
    model failure: the outcome says what happened). A spectrum with fewer than
    agents.spectra.core.MIN_FINITE_PIXELS finite pixels raises SpectrumReadError instead; one too
    poor to judge for this task (agents.tools.judgeable) is refused without asking any model: status
    "unjudgeable", the reason, no prediction.

    With the openai backend and no `chat_model`, calls go through the process-wide client and
    limiter for the configuration (agents.llm.shared_chat), so trajectories vetted in parallel
    threads share one connection pool, one concurrency bound and one Retry-After pause; each
    model step records its latency and token usage in `data["usage"]`, summed in outcome["usage"]."""
    task = kb.task(task_id)
    try:
        from agents.spectra import blank_pipeline_labels
        from agents.spectra.core import require_judgeable

        require_judgeable(spectrum, "vetting")  # too few pixels: refuse rather than answer
        spectrum = blank_pipeline_labels(spectrum)
    except ImportError:  # pragma: no cover - readers not installed
        pass
    meta = spectrum.meta or {}
    arrays = Arrays.from_spectrum(spectrum)
    judgement = assess(arrays, task, measured_noise=not meta.get("ivar_estimated"))
    # draws in agents.render_pool's processes while one runs (an LLM campaign), else right here
    tool = PooledZoomTool.from_spectrum(spectrum, redshift=redshift, title=title)
    if backend == "rules":
        ruled = task
        leaf = judgement.decided_by
        if leaf is not None and leaf not in task["decision"].get("require", []):  # a NO-witness decided it
            ruled = {**task, "decision": {**task["decision"], "require": [*task["decision"]["require"], leaf]}}
        model = chat_model or RulesVetModel(task=ruled, arrays=arrays)
        protocol, cfg, eager = make_protocol("native"), None, eager_renders
        agent = AgentInfo(name="vet", backend="rules", model=RULES_VERSION)
    elif backend == "openai":
        cfg = llm_config or load_config()
        if chat_model is None:
            shared = shared_chat(cfg)
            model, limiter = shared.chat, limiter or shared.limiter
        else:
            model = chat_model
        protocol = make_protocol(cfg.tool_protocol, cfg.images_in_user_message)
        eager = True  # the model must see the images
        agent = AgentInfo(name="vet", backend="openai", model=cfg.model)
    else:
        raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    traj = Trajectory(spectrum_id=spectrum_id, source_path=meta.get("source_path"),
                      target=meta.get("target"), task=task_id, agent=agent)
    prompt = task_prompt(task_id)
    overview = tool(None, render=eager)
    sha = traj.add_image(overview.png) if overview.png is not None else None
    prompt_data: dict[str, Any] = {"system": protocol.system_text(), "tool_protocol": protocol.name,
                                   "tool_state": {"redshift": redshift, "title": title}}
    if cfg is not None:
        prompt_data["llm"] = cfg.public()
    if overview.png is None:
        prompt_data["deferred"] = True
    traj.add("prompt", text=prompt, tool_name=TOOL_NAME, tool_args={}, image_sha=sha, data=prompt_data)
    if not judgement.judgeable:  # refused, not answered: no model sees it
        return refuse(traj, judgement, tool_calls=0, prediction=None)
    run = VetRun(traj, model, protocol, tool, eager=eager, llm_config=cfg, limiter=limiter)
    state = {"messages": protocol.first_messages(prompt, overview.png), "tool_calls": 0, "done": False}
    vet_graph().invoke(state, config={"configurable": {"vet_run": run},
                                      "recursion_limit": 4 * MAX_TOOL_CALLS + 10})
    if not traj.outcome:  # defensive: the graph always ends through _answer or _stop
        traj.outcome = {"status": "error", "error": "graph ended without an outcome"}
    if judgement.decided_no:  # judged despite a missing window or the noise: the windows present say NO
        traj.outcome["judgeable"] = judgement.as_data()
    return traj
