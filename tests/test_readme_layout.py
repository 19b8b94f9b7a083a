"""Issue 49, item 5: the README's layout of the code names every repository a Store holds (it named 10
of 12; 13 with the step judgments), in the order Store.__init__ makes them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_names_every_store_repository():
    init = next(node for node in ast.walk(ast.parse((ROOT / "reviewer/store/repository.py").read_text()))
                if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    made = [target.attr for node in ast.walk(init) if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Attribute)
            and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "").endswith("Repository")]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"one repository per concern \(([^)]*)\)", readme, re.S).group(1)
    named = re.findall(r"\.(\w+)", re.sub(r"\s+", " ", listed.replace("store.", ".")))
    assert len(made) == 13 and named == made
