"""Database files for tests: each test writes to its own."""
from __future__ import annotations

import shutil
from pathlib import Path


def own_copy(template: Path, folder: Path) -> Path:
    """A copy of a closed database file for one test (writes there reach no other test)."""
    path = folder / template.name
    shutil.copyfile(template, path)
    return path
