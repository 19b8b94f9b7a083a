"""The components bound to one review state, built by the real layout on a seeded database: they
follow the item on screen, never a value pushed by a parent."""
from __future__ import annotations

import threading

import pytest
from bokeh.document import Document

from layouts import create_app
from reviewer.components import step_render
from reviewer.review_state import ReviewState
from reviewer.services.demo import seed_demo_if_empty
from reviewer.store import Store


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    path = tmp_path_factory.mktemp("cockpit") / "cockpit.duckdb"
    store = Store(path)
    seed_demo_if_empty(store)
    template = create_app(path)
    template.main[0].get_root(Document())
    yield template
    store.close()


def test_the_page_opens_on_the_first_item_with_everything_bound(app):
    state = app.state
    assert state.item is not None and state.item.trajectory is not None
    assert all(getattr(v, 'state', state) is state for v in app.views.values())


def test_the_form_follows_the_spectra_list(app):
    state = app.state
    spectra = state.store.spectra.list_spectra(limit=100)
    state.open_item(spectrum_id=spectra[-1]["spectrum_id"])
    form = app.views['form']
    assert state.item.trajectory.spectrum_id == spectra[-1]["spectrum_id"]
    agent = state.item.agent_label
    assert form._approve.label.startswith("Approve: ") and str(next(iter(agent.values()))) in form._approve.label


def test_the_verify_form_starts_afresh_on_the_new_item(app):
    state, form = app.state, app.views['form']
    verify = state.store.queue.queue_items(task="verify", limit=100)
    galaxy = next(r for r in verify if r["answer"] == "GALAXY")
    star = next(r for r in verify if r["answer"] == "STAR")
    state.open_item(trajectory_id=galaxy["trajectory_id"])
    form._type.value = "QSO"
    assert state.draft.label["type"] == "QSO"
    state.open_item(trajectory_id=star["trajectory_id"])
    # nothing corrected yet: neither the galaxy's QSO nor the star's own answer (the z tab's candidate is asked for)
    assert form._type.value is None and state.draft.label == {} and "z tab" in form._override.label
    assert form._approve.label.startswith("Approve: STAR")


def test_step_view_and_queue_follow_the_state(app):
    state = app.state
    state.open_first()
    view, q = app.views['step'], app.views['queue']
    state.go_to_step(2)
    assert "Step 3/" in view._html.object
    state.step_item(+1)
    assert q._table.selected == 1 and "Step 1/" in view._html.object


def test_components_take_the_state_not_callbacks_from_a_session():
    """No component receives a callback: read from the classes' declared parameters (not their source
    text), every Viewer of reviewer/components has no Callable parameter, and a `state` it takes is the
    review state."""
    import importlib
    import pkgutil

    import panel as pn
    import param

    from reviewer import components

    viewers = {cls for info in pkgutil.iter_modules(components.__path__)
               for cls in vars(importlib.import_module(f"reviewer.components.{info.name}")).values()
               if isinstance(cls, type) and issubclass(cls, pn.viewable.Viewer) and cls.__module__.startswith("reviewer.")}
    assert len(viewers) >= 15
    callables = [f"{cls.__name__}.{name}" for cls in viewers for name, p in cls.param.objects("existing").items()
                 if isinstance(p, param.Callable)]
    assert callables == []
    takes_state = [cls for cls in viewers if "state" in cls.param]
    assert len(takes_state) >= 10
    loose = sorted(cls.__name__ for cls in takes_state
                   if not (isinstance(cls.param["state"], param.ClassSelector) and cls.param["state"].class_ is ReviewState))
    assert loose == []


def test_several_sessions_at_once_share_the_caches_safely(app, tmp_path):
    """`--num-threads 4`: sessions opening items and rendering steps at once on one store."""
    store = app.state.store
    ids = [r["trajectory_id"] for r in store.queue.queue_items(limit=40)]
    errors: list[BaseException] = []

    def reviewer(k):
        try:
            state = ReviewState(store, reviewer=f"t{k}")
            for tid in ids[k::4]:
                assert state.open_item(trajectory_id=tid)
                for i in range(len(state.steps)):
                    state.go_to_step(i)
                    state.render()
                assert state.item.trajectory_id == tid
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=reviewer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert not errors, errors


def test_a_step_not_rendered_yet_never_shows_the_previous_steps_picture(app, monkeypatch):
    """In a served page a render is made on a thread; meanwhile the picture box is blank, not the
    picture of the step (or item) shown before."""
    from bokeh.document import Document as Doc
    from panel.io.state import set_curdoc

    from reviewer.components.step_render import BLANK_PNG

    state, view = app.state, app.views["render"]
    state.open_first()
    state.go_to_step(len(state.steps) - 1)  # a step with a render, made in-process here
    assert view._image.object not in (None, BLANK_PNG)
    pending = []
    monkeypatch.setattr(step_render, "prefetch", pending.append)  # the render thread never gets to run
    monkeypatch.setattr(step_render, "cached_step", lambda item, index, **_: (False, None))
    served = Doc()
    served._session_context = lambda: object()  # as in a served session
    with set_curdoc(served):
        state.step_item(+1)
    assert pending and view._image.object == BLANK_PNG and "Rendering" in view._caption.object


def test_the_next_queue_items_spectrum_is_read_ahead(app):
    from reviewer.services.spectra_cache import spectrum_is_cached

    state = app.state
    store = state.store
    rows = store.queue.queue_items(limit=200)
    sids = [r["spectrum_id"] for r in rows]
    # an item whose successor in the queue is on another spectrum
    at = next(i for i in range(len(sids) - 1) if sids[i + 1] != sids[i])
    assert state.open_item(trajectory_id=rows[at]["trajectory_id"])
    record = store.spectra.get_spectrum(sids[at + 1])
    assert state._next_read.result(timeout=60) == (record["source_path"], record.get("target"))
    assert spectrum_is_cached(record["source_path"], record.get("target"))
