"""The layers run one way (layouts -> reviewer -> agents -> kb), agents/ has no Panel and no SQL, and
reviewer/store is persistence only: it imports nothing from reviewer/ outside itself. Checked on the
source's import statements, so a new import in the wrong direction fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["layouts", "reviewer", "agents", "kb"]  # each may import only those to its right
FORBIDDEN_IN_AGENTS = {"panel", "bokeh", "holoviews", "duckdb", "param"}
# `panel serve reviewer` runs these two files from the reviewer folder: they are the outermost layer's
# entry points (they import layouts), not part of the reviewer package's code.
ENTRY_POINTS = {"reviewer/main.py", "reviewer/app_hooks.py"}


def imports_of(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
    return out


def sources(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", LAYERS)
def test_imports_run_one_way(package):
    allowed = set(LAYERS[LAYERS.index(package):])
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sources(package) if str(path.relative_to(ROOT)) not in ENTRY_POINTS
           for name, line in imports_of(path)
           if name.split(".")[0] in LAYERS and name.split(".")[0] not in allowed]
    assert bad == []


def test_agents_have_no_panel_and_no_sql():
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sources("agents") for name, line in imports_of(path)
           if name.split(".")[0] in FORBIDDEN_IN_AGENTS]
    assert bad == []


def test_the_store_imports_nothing_from_reviewer_outside_itself():
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sources("reviewer/store") for name, line in imports_of(path)
           if name.startswith("reviewer") and not name.startswith("reviewer.store")]
    assert bad == []


def test_only_the_store_runs_sql():
    """duckdb is imported by reviewer/store alone (the CLI reports its errors through the store)."""
    bad = [f"{path.relative_to(ROOT)}:{line}" for package in ("reviewer", "layouts")
           for path in sources(package) if "store" not in path.relative_to(ROOT).parts
           for name, line in imports_of(path) if name.split(".")[0] == "duckdb"]
    assert bad == []
