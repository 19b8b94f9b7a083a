"""A redshift input that shows an empty box, never "NaN", when there is no redshift.

Panel hands a FloatInput's None to the browser as NaN once the widget has held a number (panel
widgets/input.py, FloatInput._process_param_change; holoviz/panel#5205), and Bokeh formats NaN as the
text "NaN": moving from an item with a redshift to a DESI sky fibre, which has none, printed "NaN" in
the field. Bokeh's Spinner takes None (Nullable) and shows it as an empty box, so None is sent as None.
"""
from __future__ import annotations

from typing import Any

import panel as pn


class ZInput(pn.widgets.FloatInput):
    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        empty = [k for k in ("value", "value_throttled") if k in params and params[k] is None]
        props = super()._process_param_change(params)
        for key in empty:  # undo Panel's None -> NaN for these keys (value_throttled is not sent)
            if key in props:
                props[key] = None
        return props
