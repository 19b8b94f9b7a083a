"""A stand-in for a served page's Bokeh document, for components that hand work to other threads."""
from __future__ import annotations

import queue

from bokeh.document import Document


class ServedDoc(Document):
    """A Bokeh document as a served page's is to a component: it has a session, and the callbacks its
    threads hand back wait in `ticks`, run here by the test as the server's event loop would."""

    session_context = object()

    def __init__(self):
        super().__init__()
        self.ticks = queue.Queue()

    def add_next_tick_callback(self, callback):
        self.ticks.put(callback)

    def run(self, n: int) -> None:
        for _ in range(n):
            self.ticks.get(timeout=120)()
