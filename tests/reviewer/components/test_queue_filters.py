"""The queue's filters are held once, by the review state: the Filters card's widgets, the page, `n` / `b`
and the read-ahead read the same object (no copy pushed from the component into the state)."""
import panel as pn

from reviewer.components.queue import QueueView
from reviewer.queue_filters import FILTERS
from reviewer.review_state import ReviewState


def test_the_filter_widgets_are_the_states_filters_and_n_walks_what_they_show(demo_store):
    state = ReviewState(demo_store, reviewer="fil")
    queue = QueueView(state=state)
    assert not set(FILTERS) & set(queue.param)  # the component keeps no filter of its own
    task = next(w for w in queue._filters if isinstance(w, pn.widgets.Select) and w.name == "Task")
    assert "mg" in task.options
    task.value = "mg"  # as the reviewer picks it in the page
    assert state.filters.task == "mg" and state.queue_args()["task"] == "mg"
    shown = {row["trajectory_id"] for row in queue.fetch(0, 200)}
    assert shown and all(r["task"] == "mg" for r in queue.fetch(0, 200))
    state.open_first()
    walked = set()
    for _ in range(len(shown)):
        walked.add(state.item.trajectory_id)
        state.step_item(+1)
    assert walked == shown  # `n` goes through the filtered queue, nothing else

    state.filters.sort = "most contradicted first"  # set on the state (the address, a test): the page follows
    assert state.queue_args()["order"] == "contradicted"
    sort = next(w for w in queue._filters if isinstance(w, pn.widgets.Select) and w.name == "Sort")
    assert sort.value == "most contradicted first"
