"""Package names imported when first used (PEP 562), so that importing one light module of a package
does not import its heavy ones (a LangGraph graph) with it."""
from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` is read from its module (the value)
    when first asked for."""
    def __getattr__(name: str) -> Any:
        if name in homes:
            return getattr(import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
