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


def on_labels(state, kinds, fn: Callable[[], object]) -> None:
    """`fn` at each acknowledged label of `kinds` (a set of Ack kinds) in `state`."""
    state.param.watch(lambda e: e.new is not None and e.new.kind in kinds and fn(), "ack")


def refresh_after_labels(state, kinds, refresh: Callable[[], object]) -> None:
    """`refresh` after each acknowledged label of `kinds` in `state`, once the acknowledgement has gone
    to the page."""
    on_labels(state, kinds, lambda: after_this_change(refresh))


class NewestReads:
    """Reads for one part of a page, begun one after another and run off the page's thread, whose results
    go in at the document's next tick (Bokeh takes a document's changes from other threads only that way)
    unless a newer read was begun since: an older, slower read never overwrites a newer one. A read made on
    the page's own thread begins too, so one begun before it is not put in after it."""

    def __init__(self):
        self._begun = 0

    def begin(self) -> int:
        """A new read's ticket; every read begun before it is now out of date."""
        self._begun += 1
        return self._begun

    def put_in_later(self, doc, ticket: int, put_in: Callable[[], object]) -> None:
        """From any thread: `put_in()` at `doc`'s next tick, its changes in one message, if the read of
        `ticket` is still the newest."""
        def run():
            if ticket == self._begun:
                with pn.io.hold():  # the document whose tick runs this
                    put_in()

        doc.add_next_tick_callback(run)
