"""The explorer's "Run on <engine>" panel: the exported job run by the real engine on the explorer's stream, and
a badge saying whether it did what the preview predicts (kernel side; the page test opens every panel)."""

import time

import pytest

from explorer.ui import Explorer
from explorer.verify import engines


def wait_for(panel, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while panel.thread is not None and panel.thread.is_alive() and time.time() < deadline:
        time.sleep(0.2)
    assert not panel.thread.is_alive()


def test_settings_the_engine_cannot_run_are_one_line_before_anything_starts(tmp_path, monkeypatch):
    explorer = Explorer("voltsp", "textbook")
    panel = explorer.engine_panel
    panel.engine.value = "bytewax"
    assert panel.run_button.description == "Run on bytewax"
    panel.start()
    assert panel.thread is None and "use --preset bytewax" in panel.status.value  # the preview is textbook's
    explorer.controls.preset.value = "bytewax"
    monkeypatch.setattr(engines, "ENGINES_DIR", tmp_path / "nowhere")
    panel.start()
    assert panel.thread is None and "run `make engines` once" in panel.status.value


@pytest.mark.engines
def test_the_panel_runs_bytewax_and_says_the_job_did_what_the_preview_predicts():
    explorer = Explorer("voltsp", "bytewax")
    panel = explorer.engine_panel
    panel.engine.value = "bytewax"
    panel.start()
    wait_for(panel)
    assert panel.verdict is not None and panel.verdict.identical
    assert "bytewax: identical to the preview" in panel.badge.value and "refused as late" in panel.lines.value
    assert not panel.run_button.disabled and panel.cancel_button.disabled


@pytest.mark.engines
def test_cancel_stops_the_engines_job():
    explorer = Explorer("textbook", "flink")  # 20,000 events: Flink takes a while to start and run them
    panel = explorer.engine_panel
    panel.engine.value = "flink"
    panel.start()
    time.sleep(2)
    panel.cancel_button.click()
    wait_for(panel, 60)
    assert panel.verdict is None and "stopped the exported job after" in panel.status.value
