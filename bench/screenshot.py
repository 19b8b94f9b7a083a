"""Re-make docs/screenshot.png, the README's picture of the review screen: the demo database, a
verify (FORMA-protocol) item at a step with its zoom shaded, in Debian's Chromium at 1440x900.

    .venv/bin/python bench/screenshot.py [--out docs/screenshot.png]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]  # the project before tests/, whose folders mirror its packages
sys.path.append(str(REPO / "tests"))

from served_app import CHROMIUM_ARGS, ServedApp, seeded_db  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshot.png")
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    from reviewer.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        db, _ = seeded_db(Path(tmp))
        with Store(db) as store:
            item = next(r for r in store.queue.queue_items(limit=200) if r["task"] == "verify")
        app = ServedApp(db, Path(tmp) / "panel.log")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1440, "height": 900})
                page.goto(f"{app.url}?reviewer=ada&trajectory={item['trajectory_id']}", timeout=120_000)
                expect(page.locator(".sr-step-view")).to_contain_text("Step 1", timeout=120_000)
                page.locator(".sr-step-view").first.click()
                for _ in range(5):  # to a step with a zoom window to shade
                    page.keyboard.press("j")
                expect(page.locator(".sr-step-view")).to_contain_text("Step 6", timeout=60_000)
                page.locator("canvas").first.wait_for(timeout=60_000)
                page.screenshot(path=str(args.out))
                browser.close()
        finally:
            app.stop()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
