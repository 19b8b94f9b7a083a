"""Work that can follow a change instead of holding it back."""
from __future__ import annotations

import functools
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


def every(period_ms: int, fn: Callable[[], object], count: int | None = None) -> None:
    """`fn` every `period_ms` in the served page (`count` times, or for the page's life), under the page's
    document lock. Panel runs a periodic callback on its thread pool when the server has one
    (`--num-threads`, the team server's flags), where a change to a Bokeh model (a figure's data) is
    made outside the lock: Bokeh refuses it ("_pending_writes should be non-None ...") and the change
    is lost. `pn.state.execute` runs `fn` at once on the page's thread, else at the document's next tick."""
    pn.state.add_periodic_callback(lambda: pn.state.execute(fn), period=period_ms, count=count)


def held(method: Callable) -> Callable:
    """`method` (one that changes Bokeh models itself: a figure's data) with its changes held and sent in
    one message. Made on Panel's thread pool (a browser event or a periodic callback under
    `--num-threads`), a change outside a hold goes to the document without its lock, and Bokeh refuses it;
    held, Panel sends them at the document's next tick, under the lock (as SpectrumPlot's updates)."""
    @functools.wraps(method)
    def holding(*args, **kwargs):
        with pn.io.hold():
            return method(*args, **kwargs)

    return holding


def on_labels(state, kinds, fn: Callable[[], object]) -> None:
    """`fn` at each acknowledged label of `kinds` (a set of Ack kinds) in `state`."""
    state.writer.param.watch(lambda e: e.new is not None and e.new.kind in kinds and fn(), "ack")


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
