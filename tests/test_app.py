"""`make app`: the explorer and the teaching notebooks as a standalone app (Voilà), as a class or a new hire opens
them: the same widgets and figures, no code cells, a token, 127.0.0.1 only. Checked in Debian's chromium, in the
page and not in the kernel."""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_lab import CHROMIUM, FLAGS, free_port, running_server

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
FIGURES_WITH_POINTS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(g => g.getBoundingClientRect().width > 0)
  .map(g => ({title: String((g.layout && g.layout.title && g.layout.title.text) || ''),
              points: (g.data || []).reduce((n, t) => n + ((t.x || []).length || 0), 0)}))"""


def make_app_command() -> list[str]:
    """The command `make app` runs, read from the Makefile (so the test runs what users run)."""
    recipe = re.search(r"^app:.*\n\t(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert recipe, "the Makefile has no app target"
    return recipe.group(1).replace("$(VENV)/bin/", str(ROOT / ".venv" / "bin") + "/").split()


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[str, str]]:
    command = make_app_command()
    assert "--token" in command and "--Voila.ip=127.0.0.1" in command  # token on, loopback only
    port, token = free_port(), os.urandom(12).hex()
    command = [arg for arg in command if arg != "--token"] + [f"--token={token}", f"--port={port}"]
    with running_server(command, port, f"/?token={token}", "Voilà", cwd=ROOT) as url:
        yield url, token


def test_the_app_asks_for_its_token(app):
    url, token = app

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None  # a redirect to the login page is the answer, not a page to follow

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.build_opener(NoRedirect).open(f"{url}/voila/render/explorer.ipynb", timeout=10)
    assert refused.value.code in (302, 401, 403), refused.value.code
    assert urllib.request.urlopen(f"{url}/?token={token}", timeout=10).status == 200


@contextmanager
def opened(url: str, token: str, notebook: str, figures: int) -> Iterator[Any]:
    """``notebook`` rendered by the app at 1280×800, once ``figures`` of its figures have points."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{url}/voila/render/{notebook}?token={token}", timeout=300_000)
            page.wait_for_function(f"() => ({FIGURES_WITH_POINTS})().filter(f => f.points > 0).length >= {figures}",
                                   timeout=120_000)
            yield page
        finally:
            browser.close()


def test_the_explorer_opens_as_an_app_with_its_figures_drawn_and_no_code(app, tmp_path):
    url, token = app
    with opened(url, token, "explorer.ipynb", figures=2) as page:
        drawn = page.evaluate(FIGURES_WITH_POINTS)
        page.screenshot(path=str(tmp_path / "app-explorer.png"))
        assert any(f["title"].startswith("The two clocks") and f["points"] > 1000 for f in drawn), drawn
        assert page.locator(".jp-InputArea-editor:visible, .cm-editor:visible").count() == 0  # no code cells
        assert re.search(r"\d+\.\d\d%", page.inner_text("body"))  # the cards' completeness


def test_the_app_lists_the_notebooks_and_a_teaching_one_opens(app, tmp_path):
    url, token = app
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        page.goto(f"{url}/?token={token}")
        page.wait_for_selector("text=explorer.ipynb", timeout=60_000)
        listed = page.inner_text("body")
        browser.close()
    assert all(name in listed for name in ("explorer.ipynb", "completeness-vs-latency.ipynb",
                                           "delay-distributions.ipynb"))
    with opened(url, token, "completeness-vs-latency.ipynb", figures=1) as page:
        page.screenshot(path=str(tmp_path / "app-completeness.png"))
        assert page.locator(".jp-InputArea-editor:visible, .cm-editor:visible").count() == 0
        assert "65.84%" in page.inner_text("body") or "0.6584" in page.inner_text("body")  # 003's table, L = 0
