"""The layers run one way (layouts -> reviewer -> agents -> kb), agents/ has no Panel and no SQL,
reviewer/store is persistence only (it imports nothing from reviewer/ outside itself), and the
services in reviewer/services sit on the store alone: no Panel, no UI. Checked on the source's import
statements, so a new import in the wrong direction fails here, and by importing the services in a
fresh interpreter."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["layouts", "reviewer", "agents", "kb"]  # each may import only those to its right
FORBIDDEN_IN_AGENTS = {"panel", "bokeh", "holoviews", "duckdb", "param"}
UI_LIBRARIES = ("panel", "bokeh", "holoviews", "param")
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


def test_the_services_import_only_the_store_and_each_other_from_reviewer():
    bad = [f"{path.relative_to(ROOT)}:{line} imports {name}"
           for path in sources("reviewer/services") for name, line in imports_of(path)
           if name.split(".")[0] in UI_LIBRARIES or name.split(".")[0] == "layouts"
           or (name.startswith("reviewer") and not name.startswith(("reviewer.services", "reviewer.store")))]
    assert bad == []


def test_components_and_layouts_read_through_services_never_a_repository():
    """`x.store.<repository>.<method>` in a component or a layout is a read that skipped the services:
    the store may be handed to a service function (or opened, probed, closed), never queried there."""
    def name(node) -> str | None:
        return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None

    bad = []
    for package in ("reviewer/components", "layouts"):
        for path in sources(package):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                        and name(node.value.value) == "store":  # state.store.queue.x, or a local `store`
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} store.{node.value.attr}.{node.attr}")
    assert bad == []


def test_importing_the_services_loads_no_panel_bokeh_holoviews_or_param():
    """Every module of reviewer/services imported in a fresh interpreter: the UI libraries stay
    unloaded (a transitive import, through agents/ or a library, would load them too)."""
    modules = sorted(f"reviewer.services.{p.stem}" for p in (ROOT / "reviewer" / "services").glob("*.py")
                     if p.stem != "__init__")
    assert len(modules) >= 15
    probe = ("import importlib, sys\n"
             f"for name in {modules!r}: importlib.import_module(name)\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({UI_LIBRARIES!r})))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", f"the services loaded {out.stdout.strip()}"
