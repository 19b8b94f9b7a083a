"""Reads off the page's thread: the newest one's result goes in, an older one's never over it."""
from __future__ import annotations

import threading

from served_doc import ServedDoc

from reviewer.components.next_tick import NewestReads


def test_only_the_newest_reads_result_goes_in_whatever_order_they_finish():
    reads, doc, shown = NewestReads(), ServedDoc(), []
    first, second = reads.begin(), reads.begin()
    # the newer read finishes first, the older one after it: only the newer one's result is put in
    reads.put_in_later(doc, second, lambda: shown.append("second"))
    reads.put_in_later(doc, first, lambda: shown.append("first"))
    doc.run(2)
    assert shown == ["second"]


def test_a_read_on_the_pages_own_thread_makes_one_still_running_out_of_date():
    reads, doc, shown = NewestReads(), ServedDoc(), []
    running = reads.begin()
    reads.begin()  # the page read again itself meanwhile (a filter changed)
    reads.put_in_later(doc, running, lambda: shown.append("late"))
    doc.run(1)
    assert shown == []


def test_results_handed_back_from_other_threads_go_in_on_the_documents_tick():
    reads, doc, shown = NewestReads(), ServedDoc(), []
    ticket = reads.begin()
    threads = [threading.Thread(target=reads.put_in_later, args=(doc, ticket, lambda i=i: shown.append(i)))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shown == []  # nothing is put in from the threads themselves
    doc.run(3)
    assert sorted(shown) == [0, 1, 2]  # every part of the newest read (the Stats tab's two parts share one)
