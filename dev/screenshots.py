"""Retake README's screenshot as a laptop user sees the explorer: JupyterLab at 1280×800 with its file browser
open, the explorer notebook run, in Debian's chromium. Writes docs/screenshots/explorer.png.

    .venv/bin/python dev/screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from jupyter_lab import CHROMIUM, FLAGS, open_explorer, running_lab  # noqa: E402


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as root, running_lab(Path(root)) as (url, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        open_explorer(page, url, token, Path(root))
        browser_open = page.locator("#filebrowser").is_visible()
        if not browser_open:
            page.get_by_role("tab", name="File Browser").click()
        time.sleep(5)  # the settled redraw and the curve
        # the cards, the sliders and the two clocks: what a step changes (the settings are above them)
        page.evaluate("""() => { const card = [...document.querySelectorAll('.jp-OutputArea-output div')]
            .find(d => d.textContent.trim() === 'completeness');
          card.scrollIntoView({block: 'start'}); }""")
        time.sleep(1)
        page.screenshot(path=str(ROOT / "docs" / "screenshots" / "explorer.png"))
        browser.close()
    print("wrote docs/screenshots/explorer.png (1280×800, file browser open)")


if __name__ == "__main__":
    main()
