"""Everything that is not UI: spectrum reading, deterministic tools, agents.

Pure Python, importable in a notebook. No Panel, no SQL (the store in `reviewer.store`
is the only place that speaks SQL).
"""
