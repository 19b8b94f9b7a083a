import shutil
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parent))  # after the repo: tests/agents must not shadow agents
from browser import new_page
from databases import own_copy
from scripted_openai_server import ScriptedOpenAIServer
from served_app import CHROMIUM_ARGS, ServedApp
from shared_data import manifest_rows, spectra_dir

from agents.settings import REQUIRE_BROWSER

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_DIR = REPO_ROOT / "assets" / "demo"


@pytest.fixture(scope="session")
def shared_spectra() -> Path:
    """The shared real-spectra folder; tests that need it skip (loudly) where it is absent."""
    path = spectra_dir()
    if path is None:
        pytest.skip("shared/data/spectra not found (set SPECREVIEW_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def manifest(shared_spectra) -> list[dict]:
    return manifest_rows()


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """A database seeded as the app's first run (demo spectra, their shipped trajectories, checked
    claims), built once per test session and never opened again: each test takes its own copy."""
    from reviewer.services.demo import seed_demo_if_empty
    from reviewer.store import Store

    path = tmp_path_factory.mktemp("demo-template") / "demo.duckdb"
    store = Store(path)
    assert seed_demo_if_empty(store) > 0
    store.close()
    return path


@pytest.fixture
def demo_store(demo_template, tmp_path):
    """This test's own copy of the demo database, open."""
    from reviewer.store import Store

    store = Store(own_copy(demo_template, tmp_path))
    yield store
    store.close()


@pytest.fixture(scope="session")
def demo_dir() -> Path:
    return DEMO_DIR


@pytest.fixture
def openai_server():
    """A started local OpenAI-compatible server that replays scripted replies (tests/scripted_openai_server.py)."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright (`playwright install` cannot download browsers here). Where
    it is missing the browser tests skip, unless SPECREVIEW_REQUIRE_BROWSER=1 (CI sets it) makes that an error."""
    chromium = shutil.which("chromium")
    if chromium is None:
        if REQUIRE_BROWSER.flag(False):
            pytest.fail("Debian's chromium is not installed (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A 1600x1000 page in its own context; `page.console_errors` collects the page's errors."""
    yield from new_page(browser, 1600, 1000)


@pytest.fixture(scope="session")
def wait_for_background_renders():
    """Waits until the app's background threads have done what was queued: step renders (opening an
    item renders its steps, FIFO), spectrum read-aheads and review-priority refreshes after a verdict.
    A no-op queued behind each ends after them, so a store is not closed under work that reads it."""
    from reviewer.services import background

    return background.drain


@pytest.fixture(scope="session", autouse=True)
def background_work_stops():
    """The suite ends as the server does: the background lanes and render processes are stopped, and
    no lane thread is left running."""
    yield
    from reviewer.services import background

    background.stop()
    assert background.live_threads() == []


@pytest.fixture(autouse=True)
def served_apps_log_no_exception(request):
    """A browser or served-app test (`ui`) fails when a server it ran against logged an exception while
    it ran (issue 45: a Stats tab that raised at each opening, and was never drawn, passed every test)."""
    if request.node.get_closest_marker("ui") is None:
        yield
        return
    for app in list(ServedApp.live):
        app.new_exceptions()  # logged before this test: another test's (already judged there)
    yield
    logged = [text for app in list(ServedApp.live) for text in app.new_exceptions()]
    assert not logged, "the server logged an exception during this test:\n" + "\n---\n".join(logged)
