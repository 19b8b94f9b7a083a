"""Screens: which components go where for each mode. Thin: no logic beyond placement.

`create_app` is what `panel serve reviewer` shows (through the shim `reviewer/main.py`).
"""
from __future__ import annotations

from layouts.app import create_app

__all__ = ["create_app"]
