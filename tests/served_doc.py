"""A stand-in for a served page's Bokeh document, for components that hand work to other threads."""
from __future__ import annotations

import queue


class ServedDoc:
    """What a component needs of a served page's document: a session, and the callbacks its threads hand
    back, run here by the test as the server's event loop would."""

    session_context = object()

    def __init__(self):
        self.callbacks = queue.Queue()

    def add_next_tick_callback(self, callback):
        self.callbacks.put(callback)

    def run(self, n: int) -> None:
        for _ in range(n):
            self.callbacks.get(timeout=120)()
