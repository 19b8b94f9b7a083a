"""Plain-Python services above the store: labels and consensus, conflicts, curation, statistics,
ingest and exports, candidates, same-object matches, renders and the spectrum cache.

No Panel, Bokeh, HoloViews or param here (tests/test_layers.py imports this package and checks);
the UI (reviewer/review_state.py, reviewer/components/, layouts/) and the server plumbing sit above it.
"""
