"""The queue listing's progress: read again only when something was written, never stale after a verdict."""
from __future__ import annotations

from reviewer.review_state import ReviewState


def test_progress_is_read_again_only_once_a_verdict_or_trajectory_is_written_anywhere(demo_store, monkeypatch,
                                                                                        make_trajectory):
    ann, bob = ReviewState(demo_store, reviewer="ann"), ReviewState(demo_store, reviewer="bob")
    reads = []
    counted = demo_store.queue.queue_progress
    monkeypatch.setattr(demo_store.queue, "queue_progress", lambda *a, **kw: reads.append(a) or counted(*a, **kw))
    total = demo_store.trajectories.count_trajectories()
    assert ann.queue.progress("ann", None) == {"done": 0, "total": total}
    # asked again with nothing written (a filter changed: the queue's page is read again, this not)
    assert ann.queue.progress("ann", None) == {"done": 0, "total": total}
    assert len(reads) == 1

    ann.open_first()
    ann.writer.save("verdict", action="approve")  # ann's own verdict
    assert ann.queue.progress("ann", None) == {"done": 1, "total": total}
    bob.open_first()
    bob.writer.save("verdict", action="reject")  # a verdict in another page moves the mark too
    assert ann.queue.progress("bob", None) == {"done": 1, "total": total}
    assert ann.queue.progress("ann", None) == {"done": 1, "total": total}
    demo_store.trajectories.save_trajectory(make_trajectory(spectrum_id=None))  # a new trajectory: one more item
    assert ann.queue.progress("ann", None) == {"done": 1, "total": total + 1}
    assert len(reads) == 5  # ann, ann after her verdict, bob, ann after bob's, ann after the trajectory
