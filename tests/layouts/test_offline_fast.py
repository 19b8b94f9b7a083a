"""OfflineFast overrides Panel's undocumented `Design.params(viewable, doc)` to cache each class's
modifiers: pinned here against Panel's own answer, so an upgrade that changes the method (its name,
signature, or what the modifiers depend on) fails this test instead of styling the page wrongly."""
from __future__ import annotations

import inspect

import panel as pn
import pytest
from bokeh.document import Document

from layouts.app import OfflineFast


def test_panel_still_has_the_method_with_the_signature_overridden():
    assert list(inspect.signature(pn.theme.Fast.params).parameters)[:3] == ["self", "viewable", "doc"]


@pytest.mark.parametrize("make", [lambda: pn.widgets.Button(label="a"), lambda: pn.pane.HTML("x"),
                                  lambda: pn.Column(), lambda: pn.widgets.FloatInput(value=1.0)])
def test_cached_modifiers_equal_panels_and_are_copies(make):
    doc = Document()
    ours, theirs = OfflineFast(), pn.theme.Fast()
    first, second = make(), make()
    expected = theirs.params(first, doc)
    got = ours.params(first, doc)
    again = ours.params(second, doc)  # another instance of the class: served from the cache
    assert got == expected and again == expected
    if "stylesheets" in got[0]:
        got[0]["stylesheets"].append("changed")  # a caller's edit does not leak into the cache
        assert ours.params(second, doc)[0]["stylesheets"] == expected[0]["stylesheets"]
