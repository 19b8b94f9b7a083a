"""Issue 49, item 5: one table of settings. Every `SPECREVIEW_` environment variable named anywhere (the
code, the tests, the benchmarks, the docs) is defined in agents/settings.py; the code names none of
them itself (it reads them through that module); the README's table of variables is the one the module
prints."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from agents import settings

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bSPECREVIEW_[A-Z][A-Z0-9_]*[A-Z0-9]\b")
# identifiers, not environment variables: the SpecReview FITS table's format label
NOT_VARIABLES = {"SPECREVIEW_TABLE"}
PRODUCT = ("agents", "reviewer", "layouts", "kb")
# read before the project can be imported (a sitecustomize the interpreter loads at its start)
READ_BEFORE_IMPORTS = {"bench/call_times/sitecustomize.py"}


def texts():
    for pattern in ("agents/**/*.py", "reviewer/**/*.py", "layouts/**/*.py", "kb/**/*", "tests/**/*.py",
                    "bench/**/*.py", "docs/**/*.md", "README.md"):
        for path in ROOT.glob(pattern):
            if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".txt"):
                yield path, path.read_text(encoding="utf-8", errors="replace")


def test_every_variable_named_anywhere_is_in_the_settings_table():
    named = {}
    for path, text in texts():
        for name in set(NAME.findall(text)) - NOT_VARIABLES:
            named.setdefault(name, str(path.relative_to(ROOT)))
    missing = {name: where for name, where in named.items() if name not in settings.BY_NAME}
    assert missing == {}
    unused = [s.name for s in settings.SETTINGS if s.name not in named]
    assert unused == [], "in the table but named nowhere else"


def test_the_code_reads_them_through_the_settings_module():
    """A string that is exactly a variable's name, outside agents/settings.py, is a read (or a write) that
    skipped the table."""
    bad = []
    for package in (*PRODUCT, "tests/shared_data.py"):
        paths = [ROOT / package] if package.endswith(".py") else sorted((ROOT / package).rglob("*.py"))
        for path in paths:
            rel = str(path.relative_to(ROOT))
            if rel == "agents/settings.py" or rel in READ_BEFORE_IMPORTS:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value) \
                        and node.value not in NOT_VARIABLES:
                    bad.append(f"{rel}:{node.lineno} {node.value}")
    assert bad == []


def test_the_readme_table_is_the_settings_modules():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- settings table: python -m agents.settings -->\n")
    end = readme.index("\n<!-- end of settings table -->")
    shown = readme[readme.index("\n", start) + 1:end]
    assert shown == settings.markdown_table(), "regenerate it: python -m agents.settings"


def test_each_setting_says_what_it_means_its_default_and_who_reads_it():
    for s in settings.SETTINGS:
        assert s.meaning and s.default and s.read_by, s.name
        reader = s.read_by.split()[0]
        assert (ROOT / reader).is_file(), f"{s.name}: {reader} is not a file"
        assert s.name in (ROOT / reader).read_text(encoding="utf-8") or \
            f"{s.name.removeprefix('SPECREVIEW_')}" in (ROOT / reader).read_text(encoding="utf-8"), s.name
