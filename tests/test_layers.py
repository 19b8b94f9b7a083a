"""The layers run one way (layouts -> reviewer -> agents -> kb), agents/ has no Panel and no SQL,
reviewer/store is persistence only (it imports nothing from reviewer/ outside itself), and the
services in reviewer/services sit on the store alone: no Panel, no UI. Inside reviewer/ the modules
are ordered too (store < services < state < components < layouts; the CLI and the server beside,
imported by nothing below them), no module imports itself back through others (at module or function
level), and every third-party module the code imports is declared in pyproject.toml (issue 49, item
2). Checked on the source's import statements, so a new import in the wrong direction fails here, and
by importing the services in a fresh interpreter. Each rule is also run on a few lines written to break
it (test_each_rule_finds_what_it_forbids), so a rule that stopped finding anything fails too."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["layouts", "reviewer", "agents", "kb"]  # each may import only those to its right
FORBIDDEN_IN_AGENTS = {"panel", "bokeh", "holoviews", "duckdb", "param"}
UI_LIBRARIES = ("panel", "bokeh", "holoviews", "param")
# `panel serve reviewer` runs these two files from the reviewer folder: they are the outermost layer's
# entry points (they import layouts), not part of the reviewer package's code.
ENTRY_POINTS = {"reviewer/main.py", "reviewer/app_hooks.py"}
# Inside reviewer/: each module may import its own group and those ranked below it; the CLI and the
# server sit beside the ranked groups (they may import store, services, state and each other) and no
# ranked group imports them. The entry points above may import anything.
RANKED = ("store", "services", "state", "components", "layouts")
BESIDE = ("cli", "server")
STATE_MODULES = ("reviewer/review_state.py", "reviewer/queue_filters.py", "reviewer/view_frame.py",
                 "reviewer/label_writer.py", "reviewer/activity.py")
SERVER_MODULES = ("reviewer/server_app.py", "reviewer/csp.py", "reviewer/page_limits.py", "reviewer/logins.py",
                  "reviewer/server_endpoint.py", "reviewer/endpoint_file.py")


def imports_in(text: str) -> list[tuple[str, int]]:
    """(module, line) of every absolute import in `text`, at module or function level; `from x import y`
    gives x and, where y may be a module, x.y (`from reviewer import logins`)."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
            out += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names if alias.name != "*"]
    return out


def imports_of(path: Path) -> list[tuple[str, int]]:
    return [(name, line) for name, line in imports_in(path.read_text(encoding="utf-8"))
            if not _is_member(name)]


def _is_member(name: str) -> bool:
    """`from agents.x import y` also yields agents.x.y: a name, not a module, unless such a file exists."""
    parts = name.split(".")
    if parts[0] not in LAYERS or len(parts) == 1:
        return False
    base = ROOT.joinpath(*parts)
    parent = ROOT.joinpath(*parts[:-1])
    is_module = base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()
    parent_is_module = parent.with_suffix(".py").is_file() or (parent / "__init__.py").is_file()
    return not is_module and parent_is_module


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


# The store's own attributes that are values, not repositories: the database file's path (`store.path.name`).
STORE_PLAIN_ATTRIBUTES = {"path"}
# Above the store and the services, beside the components: the commands and the server's modules.
CLI_AND_SERVER = ("reviewer/cli",)
CLI_AND_SERVER_FILES = SERVER_MODULES + tuple(sorted(ENTRY_POINTS))


def repository_reads(text: str, where: str) -> list[str]:
    """`x.store.<repository>.<method>` (or a local `store.<repository>.<method>`): a read that skipped the
    services. The store may be handed to a service function (or opened, probed, closed), never queried."""
    def name(node) -> str | None:
        return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None

    return [f"{where}:{node.lineno} store.{node.value.attr}.{node.attr}" for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and name(node.value.value) == "store" and node.value.attr not in STORE_PLAIN_ATTRIBUTES]


def test_components_and_layouts_read_through_services_never_a_repository():
    bad = [hit for package in ("reviewer/components", "layouts") for path in sources(package)
           for hit in repository_reads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert bad == []


def test_the_review_state_reads_through_services_never_a_repository():
    bad = [hit for rel in STATE_MODULES
           for hit in repository_reads((ROOT / rel).read_text(encoding="utf-8"), rel)]
    assert bad == []


def test_the_cli_and_the_server_read_through_services_never_a_repository():
    """The commands (reviewer/cli), the server's modules and the entry points read (and write) through
    reviewer/services, as the components and the state do (issue 49, item 2)."""
    paths = [p for package in CLI_AND_SERVER for p in sources(package)] + [ROOT / rel for rel in CLI_AND_SERVER_FILES]
    bad = [hit for path in paths
           for hit in repository_reads(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
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


# -- inside reviewer/: the groups' order -------------------------------------------------------------------
def group_of(rel: str) -> str | None:
    """The group of a source file (a path relative to the root), or None outside reviewer/ and layouts/."""
    parts = rel.split("/")
    if parts[0] == "layouts":
        return "layouts"
    if parts[0] != "reviewer" or rel in ENTRY_POINTS or rel == "reviewer/__init__.py":
        return None
    if parts[1] in ("store", "services", "components", "cli"):
        return parts[1]
    if rel in STATE_MODULES:
        return "state"
    if rel in SERVER_MODULES:
        return "server"
    return "unplaced"


def group_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "layouts":
        return "layouts"
    if parts[0] != "reviewer" or len(parts) == 1:
        return None
    if parts[1] in ("store", "services", "components", "cli"):
        return parts[1]
    return group_of(f"reviewer/{parts[1]}.py")


def misplaced_imports(rel: str, text: str) -> list[str]:
    """The imports of one file that go against the groups' order."""
    mine = group_of(rel)
    if mine is None:
        return []
    bad = []
    for name, line in imports_in(text):
        theirs = group_of_module(name)
        if theirs is None or theirs == mine:
            continue
        if mine in RANKED:
            ok = theirs in RANKED and RANKED.index(theirs) < RANKED.index(mine)
            ok = ok and not (mine == "layouts" and theirs == "cli")
            ok = ok or (mine == "layouts" and theirs == "server")  # the page asks the server's plumbing (CSP, logins)
        else:  # cli, server: beside the ranked groups, below the layouts
            ok = theirs in BESIDE or theirs in ("store", "services", "state")
        if not ok or theirs == "unplaced":
            bad.append(f"{rel}:{line} ({mine}) imports {name} ({theirs})")
    return bad


def test_every_reviewer_module_has_a_place():
    unplaced = [str(p.relative_to(ROOT)) for p in sources("reviewer") if group_of(str(p.relative_to(ROOT))) == "unplaced"]
    assert unplaced == [], "name its group in tests/test_layers.py"


def test_inside_reviewer_the_groups_import_one_way():
    """store < services < state < components < layouts; cli and server beside: nothing ranked imports them."""
    bad = [hit for package in ("reviewer", "layouts") for path in sources(package)
           for hit in misplaced_imports(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))]
    assert bad == []


# -- import cycles, at module or function level --------------------------------------------------------------
def module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(texts: dict[str, str]) -> dict[str, set[str]]:
    """module -> the project modules it imports (each import resolved to the longest module that exists)."""
    modules = {module_name(rel) for rel in texts}
    graph = {}
    for rel, text in texts.items():
        me, edges = module_name(rel), set()
        for name, _ in imports_in(text):
            parts = name.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            target = ".".join(parts)
            # not to itself, nor to a package it is in (Python imports those first whatever is imported)
            if parts and target != me and not me.startswith(target + "."):
                edges.add(target)
        graph[me] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def project_texts() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for package in LAYERS for p in sources(package)}


def test_no_module_imports_itself_back_through_others():
    """A function-level import closes a cycle as surely as a module-level one: the shared names go down
    into a module both import (issue 49 cut claims check <-> redshift, hypotheses <-> redrock_adapter,
    import_rows <-> import_runs and cli -> remote -> server_endpoint -> cli that way)."""
    assert cycles(import_graph(project_texts())) == []


# -- every third-party import declared ---------------------------------------------------------------------------
def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions() -> set[str]:
    """pyproject's dependencies and the optional extras the code may import (not the test extra)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    specs += [spec for extra, listed in project["optional-dependencies"].items() if extra != "test" for spec in listed]
    return {_normal(re.match(r"[A-Za-z0-9_.-]+", spec).group(0)) for spec in specs}


def undeclared_imports(texts: dict[str, str], declared: set[str]) -> list[str]:
    distributions = packages_distributions()
    bad = []
    for rel, text in texts.items():
        for name, line in imports_in(text):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in LAYERS or top == "__future__":
                continue
            owners = {_normal(d) for d in distributions.get(top, [top])}
            if not owners & declared:
                bad.append(f"{rel}:{line} imports {top} (from {', '.join(sorted(owners))}): not in pyproject.toml")
    return sorted(set(bad))


def test_every_third_party_import_is_declared():
    assert undeclared_imports(project_texts(), declared_distributions()) == []


# -- each rule finds what it forbids ----------------------------------------------------------------------------------
def test_each_rule_finds_what_it_forbids():
    """A component that imports the CLI, a state that reads a repository, a cycle through a
    function-level import and an undeclared library: each rule above reports it."""
    assert misplaced_imports("reviewer/components/x.py", "def f():\n    from reviewer.cli import main\n")
    assert misplaced_imports("reviewer/components/x.py", "import reviewer.server_endpoint\n")
    assert misplaced_imports("reviewer/services/x.py", "from reviewer.review_state import ReviewState\n")
    assert misplaced_imports("reviewer/store/x.py", "from reviewer.services import labels\n")
    assert not misplaced_imports("reviewer/cli/x.py", "from reviewer.services import labels\n")
    assert repository_reads("def f(self):\n    return self.store.queue.queue_items()\n", "reviewer/review_state.py")
    assert repository_reads("def run(args):\n    return store.sessions.list_sessions()\n", "reviewer/cli/x.py")
    assert not repository_reads("log(store.path.name)\n", "reviewer/app_hooks.py")
    texts = {"agents/a.py": "import agents.b\n", "agents/b.py": "def f():\n    from agents import a\n",
             "agents/__init__.py": ""}
    assert cycles(import_graph(texts)) == [["agents.a", "agents.b"]]
    assert undeclared_imports({"agents/x.py": "def f():\n    import requests\n"}, declared_distributions())
    assert not undeclared_imports({"agents/x.py": "import numpy\n"}, declared_distributions())
