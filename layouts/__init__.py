"""Screens: which components go where for each mode. Thin."""
