"""A real JupyterLab on 127.0.0.1 with a token, and Debian's chromium opening the explorer notebook in it.

Shared by the browser test and `dev/page_timeline.py`, which times a slider step part by part.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CLOCKS_PLOT = """[...document.querySelectorAll('.js-plotly-plot')]
  .find(p => p.layout && p.layout.title && String(p.layout.title.text || '').startsWith('The two clocks'))"""
EFFECTIVE_Y = """() => {
  const plot = """ + CLOCKS_PLOT + """;
  if (!plot) return null;
  const trace = plot.data.find(t => t.name === 'effective watermark');
  return trace && trace.y ? Array.from(trace.y).filter(v => v !== null && !Number.isNaN(v)) : null;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(address: str, what: str, seconds: float = 60) -> None:
    """Until ``address`` answers (a server just started), or one error naming ``what`` after ``seconds``."""
    deadline = time.time() + seconds
    while True:
        try:
            urllib.request.urlopen(address, timeout=2)
            return
        except OSError:
            if time.time() > deadline:
                raise RuntimeError(f"{what} did not start within {seconds:g} s") from None
            time.sleep(0.5)


@contextmanager
def running_lab(root: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab serving a copy of notebooks/explorer.ipynb from ``root`` (so autosave never touches the
    repo), first-run popups off; yields its URL and token."""
    shutil.copy(ROOT / "notebooks" / "explorer.ipynb", root / "explorer.ipynb")
    settings = root / ".settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"checkForUpdates": False,
                                                                            "fetchNews": "false"}))
    port, token = free_port(), os.urandom(12).hex()
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces")}
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--allow-root"]
    with running_server(command, port, f"/api/status?token={token}", "JupyterLab", env=env) as url:
        yield url, token


@contextmanager
def running_server(command: list[str], port: int, probe: str, what: str, **popen: Any) -> Iterator[str]:
    """``command``, a server on 127.0.0.1:``port``, once ``probe`` answers; its URL. Stopped afterwards."""
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + probe, what)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


def run_in_kernel(url: str, token: str, code: str) -> str:
    """Run ``code`` in the notebook's kernel, beside the page (as a second client, like a console), and
    return what it printed."""
    from jupyter_client import BlockingKernelClient
    from jupyter_core.paths import jupyter_runtime_dir

    with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=10) as answer:
        (kernel,) = json.load(answer)
    client = BlockingKernelClient(connection_file=str(Path(jupyter_runtime_dir()) / f"kernel-{kernel['id']}.json"))
    client.load_connection_file()
    client.start_channels()
    printed: list[str] = []
    try:
        reply = client.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(
            msg["content"]["text"]) if msg["msg_type"] == "stream" else None)
    finally:
        client.stop_channels()
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code!r} failed in the kernel: {reply['content'].get('evalue')}")
    return "".join(printed)


def open_explorer(page, url: str, token: str, shots: Path) -> None:
    """Open the notebook, run all cells and wait until the two clocks show a watermark."""
    page.goto(f"{url}/lab/tree/explorer.ipynb?reset&token={token}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    try:  # JupyterLab asks for a kernel when it cannot match the kernelspec at once
        page.get_by_role("button", name="Select", exact=True).click(timeout=5_000)
    except Exception:
        pass
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    for attempt in range(3):  # a busy machine can drop the first click on a menu that is still loading
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(f"() => ({EFFECTIVE_Y})() && ({EFFECTIVE_Y})().length > 0", timeout=90_000)
            return
        except Exception:
            page.screenshot(path=str(shots / f"failed-run-all-{attempt}.png"))
            if attempt == 2:
                raise


def watch_delay_slider(page) -> None:
    """Focus the delay slider's handle; note the time of every keydown (``window.__t0``), and call
    ``window.__on_plot_change`` right after the code that gave the effective watermark new values."""
    page.locator(".widget-hslider", has_text="delay").locator(".noUi-handle").click()
    page.evaluate("""() => {
      document.addEventListener('keydown', () => { window.__t0 = performance.now(); }, true);
      // the moment new values are assigned, from the explorer's own drawing in the page or from plotly's widget
      // drawing what the kernel sent (plotly.js's own events come from a promise that, for these WebGL traces,
      // often never settles); the watcher runs once the JavaScript that assigned them has returned
      const trace = (""" + CLOCKS_PLOT + """).data.find(t => t.name === 'effective watermark');
      let y = trace.y;
      Object.defineProperty(trace, 'y', {configurable: true, enumerable: true, get: () => y, set: (value) => {
        y = value;
        queueMicrotask(() => window.__on_plot_change && window.__on_plot_change());
      }});
    }""")


def time_arrow_right(page) -> tuple[float, float, float]:
    """Press → on the focused slider; return the keydown's page time, and the ms from it until the effective
    watermark's data changed and until that frame was on screen (two animation frames later). The values it
    changed to stay in ``window.__changed_y``.

    The data has changed when the Plotly call that changed it has returned: the page may then spend a while
    laying out and painting, which the on-screen time includes."""
    page.evaluate("""() => {
      const before = JSON.stringify((""" + EFFECTIVE_Y + """)());
      window.__changed = window.__on_screen = null;
      window.__on_plot_change = () => {
        if (window.__changed !== null || JSON.stringify((""" + EFFECTIVE_Y + """)()) === before) return;
        window.__changed = performance.now() - window.__t0;
        window.__changed_y = (""" + EFFECTIVE_Y + """)();
        requestAnimationFrame(() => requestAnimationFrame(() => { window.__on_screen = performance.now() - window.__t0; }));
      };
    }""")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.__on_screen !== null", timeout=20_000)
    return tuple(page.evaluate("() => [window.__t0, window.__changed, window.__on_screen]"))
