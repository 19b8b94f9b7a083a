"""When each of the server's chosen calls began and ended, and on which thread: a timeline of what a
reviewer's key press sets off (issue 22, item 1). Put this folder first on PYTHONPATH of the process
(the benches hand their environment to the server they start):

    PYTHONPATH=bench/call_times SPECREVIEW_CALL_TIMES=times.log .venv/bin/python bench/trace_stats.py --db COPY ...

Each call in CALLS, as it returns, appends a line to SPECREVIEW_CALL_TIMES: its start and end (Unix
seconds), its duration in ms, the thread and the call's name. The modules are wrapped as they are
imported (a meta-path finder), so the code served is the code measured, plus ~2 us per call.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import threading
import time

CALLS = {
    "reviewer.review_state": ["ReviewState.save"],
    "reviewer.components.queue": ["QueueView.refresh", "QueueView.read", "QueueView.show_read"],
    "reviewer.components.feedback": ["AckView._show", "OthersView._show"],
    "reviewer.components.review_form": ["ReviewForm._sync_saved"],
    "reviewer.components.stats_panel": ["StatsPanel.refresh", "StatsPanel._shown", "StatsPanel._compute"],
    "reviewer.services.stats_snapshots": ["_refresh", "_refresh_part", "compute"],
    # what the server's start sets going beside the first pages (issue 48, item 3)
    "reviewer.services.stats": ["review_stats"],
    "reviewer.services.stats_selection": ["gold_points", "judge_points"],
    "reviewer.services.triage": ["refresh", "triage_inputs", "triage_report"],
    "reviewer.services.claim_checks": ["check_on_open"],
    "layouts.app": ["create_app"],
    "bokeh.server.contexts": ["ApplicationContext.create_session_if_needed"],
    "layouts.audit": ["LazyTab.open", "LazyTab.prepare"],
    "bokeh.server.views.ws": ["WSHandler._receive"],
    "bokeh.document.models": ["DocumentModelManager.recompute"],  # the walk of every model in a page
    "reviewer.components.keyboard": ["Keyboard.press"],
    "panel.io.document": ["_garbage_collect"],  # Panel's gc.collect() after a page's document is destroyed
}
_out = None
_out_lock = threading.Lock()


def _write(start: float, name: str) -> None:
    global _out
    end = time.time()
    with _out_lock:
        if _out is None:
            _out = open(os.environ.get("SPECREVIEW_CALL_TIMES", "call-times.log"), "a", buffering=1)  # noqa: SIM115
        _out.write(f"{start:.3f} {end:.3f} {1000 * (end - start):8.1f} {threading.current_thread().name} {name}\n")


def _timed(fn, name: str):
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def timed_async(*args, **kwargs):
            start = time.time()
            try:
                return await fn(*args, **kwargs)
            finally:
                _write(start, name)
        return timed_async

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start = time.time()
        try:
            return fn(*args, **kwargs)
        finally:
            _write(start, name)
    return timed


class _WrapOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in CALLS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            for call in CALLS[name]:
                owner_name, _, attr = call.rpartition(".")
                owner = getattr(module, owner_name, None) if owner_name else module
                if getattr(owner, attr, None) is None:  # renamed or gone: the others are still timed
                    print(f"call_times: {name}.{call} not found, not timed", file=sys.stderr)
                    continue
                setattr(owner, attr, _timed(getattr(owner, attr), call))

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _WrapOnImport())
