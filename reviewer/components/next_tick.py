"""Work that can follow a change instead of holding it back."""
from __future__ import annotations

from collections.abc import Callable

import panel as pn


def after_this_change(fn: Callable[[], object]) -> None:
    """Run `fn` once the change being handled has gone to the browser (the document's next tick):
    what the reviewer waits for (the acknowledgement of a label) is not held back by what can follow
    (the queue's columns, the Conflicts list: ~55 and ~140 ms of server time at 100k trajectories).
    Outside a served session (tests, notebooks): now."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        fn()
        return

    def run():
        with pn.io.hold(doc):  # its changes in one message
            fn()

    doc.add_next_tick_callback(run)


def refresh_after_labels(state, kinds, refresh: Callable[[], object]) -> None:
    """`refresh` after each acknowledged label of `kinds` (a set of Ack kinds) in `state`, once the
    acknowledgement has gone to the page."""
    state.param.watch(lambda e: e.new is not None and e.new.kind in kinds and after_this_change(refresh), "ack")
