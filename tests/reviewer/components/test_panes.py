"""A pane whose text changes while the page is open is a TextHTML (reviewer.components.panes): Panel's HTML
pane sends every property of its model again with each new object, and a served page's new stylesheet
models make Bokeh walk the whole document's model graph (DocumentModelManager.recompute) for one line of
text: ~40-140 ms per pane of the server's page thread at 1M trajectories, seen by py-spy after a verdict
(the acknowledgement, the queue's progress), more with the Stats tab in the page. Checked on the source,
so a new changing pane made the other way fails here."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted([*ROOT.joinpath("reviewer", "components").glob("*.py"), *ROOT.joinpath("layouts").glob("*.py")])


def _is_plain_html(call: ast.AST) -> bool:
    """`pn.pane.HTML(...)`."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "HTML"
            and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "pane")


def _name(target: ast.AST) -> str | None:
    """`self.x` -> "self.x", `x` -> "x"."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return f"{target.value.id}.{target.attr}"
    return None


def changing_plain_html_panes(path: Path) -> list[str]:
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(path.read_text(encoding="utf-8"))
    plain, changed, bound = {}, set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if _is_plain_html(node.value) and _name(target):
                    plain[_name(target)] = node.lineno
                if isinstance(target, ast.Attribute) and target.attr == "object" and _name(target.value):
                    changed.add(_name(target.value))
        if _is_plain_html(node) and node.args and isinstance(node.args[0], ast.Call) and \
                isinstance(node.args[0].func, ast.Attribute) and node.args[0].func.attr == "bind":
            bound.append(f"{where}:{node.lineno} (bound)")
    return [f"{where}:{line} {name}" for name, line in plain.items() if name in changed] + bound


def test_every_pane_whose_text_changes_sends_its_text_alone():
    found = [hit for path in SOURCES for hit in changing_plain_html_panes(path)]
    assert not found, "pn.pane.HTML whose object changes (make it a TextHTML): " + ", ".join(found)


def test_the_check_sees_a_changing_plain_pane(tmp_path):
    source = ("class V:\n    def __init__(self):\n        self._a = pn.pane.HTML('')\n        self._b = TextHTML('')\n"
              "        self._c = pn.pane.HTML(pn.bind(f, x))\n    def show(self):\n        self._a.object = 'x'\n"
              "        self._b.object = 'y'\n")
    probe = tmp_path / "view.py"
    probe.write_text(source, encoding="utf-8")
    assert [hit.split(" ", 1)[1] for hit in changing_plain_html_panes(probe)] == ["self._a", "(bound)"]


def test_the_busy_light_shows_the_servers_work_by_its_styles_alone():
    """The template's busy indicator (reviewer.components.panes.BusyLight): lit and dark through `styles`,
    never `css_classes` (which lay the whole page out again in BokehJS), on the error page as on the review page
    (tests/layouts/test_app.py)."""
    from bokeh.document import Document

    from layouts.app import error_page
    from reviewer.components.panes import BusyLight

    light = BusyLight()
    model = light.get_root(Document())
    classes, dark = list(model.css_classes), dict(model.styles)
    light.value = True
    assert model.styles == BusyLight.BUSY != dark == BusyLight.IDLE and list(model.css_classes) == classes
    light.value = False
    assert model.styles == BusyLight.IDLE and "The server is working" in model.text
    assert isinstance(error_page("x").busy_indicator, BusyLight)
