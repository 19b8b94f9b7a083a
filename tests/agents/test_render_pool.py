"""The render pool of an LLM campaign starts its workers up front, and they draw what an inline
render draws."""
import multiprocessing as mp

import numpy as np

from agents import render_pool
from agents.render_pool import PooledZoomTool


def test_workers_start_with_the_pool_not_with_the_first_render():
    before = {p.pid for p in mp.active_children()}
    with render_pool.running(2) as pool:
        started = {p.pid for p in mp.active_children()} - before
        assert len(started) == 2 and pool.renders == 0
    assert not ({p.pid for p in mp.active_children()} & started)  # and stop with it


def test_a_pooled_render_is_the_inline_render():
    wave = np.linspace(3800, 9000, 1500)
    tool = PooledZoomTool(wave, 1 + 0.1 * np.sin(wave / 50), title="Spectrum: synthetic.fits")
    inline = tool([6500, 6620], "H-alpha").png
    with render_pool.running(1) as pool:
        pooled = tool([6500, 6620], "H-alpha").png
        overview = tool(None).png
    assert pool.renders == 2 and pooled == inline and overview == tool(None).png
