"""The explorer in a real JupyterLab, in Debian's headless Chromium driven by Playwright.

Opens notebooks/explorer.ipynb (a copy, so autosave never touches the repo), runs all cells, moves the
delay slider with the keyboard and checks that the effective-watermark trace in the page changed, then
compares two engines (a disagreement ringed in each panel) and runs the settings on Spark from the page
until the agreement badge shows. WX_SCREENSHOTS=docs/screenshots saves the screenshots there.

With -s it prints two latencies from the keydown: "plot data changed" is when the page's figure holds the
new arrays (the Plotly call that set them has returned), and "on screen" is two animation frames later,
once Chromium has drawn it. With software WebGL here, most of the difference is the GPU process drawing.
Baselines from the same page: Plotly redrawing with nothing sent, and the same steps with the page's
frames off, so every step makes the round trip to the kernel.
"""

from __future__ import annotations

import os
import re
import statistics
from pathlib import Path

import pytest
from jupyter_lab import (CHROMIUM, CLOCKS_PLOT, EFFECTIVE_Y, FLAGS, open_explorer, run_in_kernel, time_arrow_right,
                         watch_delay_slider)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                "(apt-get install chromium; .ci/run installs it), so the browser test cannot run")


def run_on_spark(page, batches: str, badge: str) -> None:
    """Set the batches box, open the Run-on-Spark panel, press its button and wait for the badge's words."""
    box = page.locator(".widget-text", has_text="micro-batches").locator("input")
    box.fill(batches)
    box.press("Enter")
    page.get_by_text("Run on Spark", exact=True).first.click()
    page.locator("button.jupyter-button", has_text="Run on Spark").click()
    page.wait_for_function("words => [...document.querySelectorAll('.widget-html-content')]"
                           ".some(e => e.textContent.includes(words))", arg=badge, timeout=240_000)


def test_delay_slider_redraws_the_watermark_in_the_browser(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    url, token = lab
    shots = Path(os.environ.get("WX_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1300})
        # a wrong token is refused: the server keeps its auth
        page.goto(f"{url}/lab?token=wrong")
        assert "/login" in page.url
        open_explorer(page, url, token, shots)
        page.wait_for_timeout(1500)  # let the background sweep draw the curve
        before = page.evaluate(EFFECTIVE_Y)

        watch_delay_slider(page)
        events = """() => {
          const plot = """ + CLOCKS_PLOT + """;
          const statuses = plot.data.filter(t => ['on time', 'late, updated', 'side output', 'dropped'].includes(t.name));
          const count = key => statuses.reduce((n, t) => n + (t[key] ? t[key].length : 0), 0);
          return [count('x'), count('y')];
        }"""
        # while the slider moves a light frame is drawn; once it rests, every event, with its status colour
        def step() -> tuple[float, float]:
            """One press, then a look: the light frame comes first, every event once the slider rests. The
            light frame (drawn by the page from a frame it held, or sent by the kernel) has the effective
            watermark of the settled one, to float32's precision."""
            _, changed, on_screen = time_arrow_right(page)
            light = page.evaluate("() => window.__changed_y")
            page.wait_for_function(f"() => ({events})().every(n => n === 20000)", timeout=20_000)
            page.wait_for_timeout(700)
            assert page.evaluate(EFFECTIVE_Y) == pytest.approx(light, abs=1e-3)
            return changed, on_screen

        latencies, painted = zip(*[step() for _ in range(7)])
        # the page drew the steps from the frames the kernel computed ahead and handed it (page_frames.py);
        # the first may come before the page holds its frame
        assert int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)")) >= 5
        after = page.evaluate(EFFECTIVE_Y)
        assert after != before
        markers = page.evaluate("""() => {
          const plot = """ + CLOCKS_PLOT + """;
          const t = plot.data.find(t => t.name === 'emitted: watermark');
          return [t.x ? t.x.length : 0, t.y ? t.y.length : 0];
        }""")
        assert markers[0] > 100 and markers[0] == markers[1]  # every emission marker reached the page whole
        page.wait_for_function(f"() => ({events})().every(n => n === 20000)", timeout=20_000)
        # each step is 0.5 s of delay: the effective watermark sits 3.5 s lower where it is above 0
        pairs = [(b, a) for b, a in zip(before, after) if a > 0]
        assert pairs and all(abs((b - a) - 3.5) < 1e-9 for b, a in pairs)
        # the same-page baseline: Plotly redrawing the settled figure with nothing sent, the floor of any update
        redraw, redraw_painted = page.evaluate("""async () => {
          const plot = """ + CLOCKS_PLOT + """;
          const frames = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
          const times = [], painted = [];
          for (let i = 0; i < 5; i++) {
            await frames();
            const t0 = performance.now(); await Plotly.redraw(plot); times.push(performance.now() - t0);
            await frames(); painted.push(performance.now() - t0);
          }
          return [times.sort((a, b) => a - b)[2], painted.sort((a, b) => a - b)[2]];
        }""")
        # the same steps with every frame sent by the kernel, as before the page kept frames: the baseline
        capacity = run_in_kernel(url, token, "print(explorer.page_frames.capacity)").strip()
        run_in_kernel(url, token, "explorer.page_frames.capacity = 0; explorer.page_frames.clear()")
        kernel, kernel_painted = zip(*[step() for _ in range(4)])
        run_in_kernel(url, token, f"explorer.page_frames.capacity = {capacity}")
        median, median_painted = statistics.median(latencies), statistics.median(painted)
        print(f"\nbrowser: keydown → plot data changed, median {median:.0f} ms, all {[round(x) for x in latencies]};"
              f" → that frame on screen, median {median_painted:.0f} ms, all {[round(x) for x in painted]}."
              f"\nSame page, settled figure, nothing sent: Plotly.redraw {redraw:.0f} ms, to screen {redraw_painted:.0f} ms"
              f" (ratios {median / redraw:.1f} and {median_painted / redraw_painted:.1f})."
              f"\nSame page, every step sent by the kernel: data changed median {statistics.median(kernel):.0f} ms,"
              f" on screen {statistics.median(kernel_painted):.0f} ms (page frames / kernel:"
              f" {median / statistics.median(kernel):.2f} and {median_painted / statistics.median(kernel_painted):.2f})")
        # moves faster than frames reach the screen (a drag, a held key): the page draws the first, notes the
        # others while that frame is not yet on screen, then draws the last; drawing each in turn kept the page
        # busy and the keys waiting (three moves here, all held by the page: two drawn, not three)
        page.keyboard.press("ArrowRight")  # the page held no frame (capacity was 0): the kernel hands it some now
        page.wait_for_timeout(2500)
        drawn_before = int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)"))
        delay_before = float(run_in_kernel(url, token, "print(explorer.controls.delay.value)"))
        page.evaluate(THREE_QUICK_MOVES)
        page.wait_for_timeout(2500)
        assert int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)")) == drawn_before + 2
        assert float(run_in_kernel(url, token, "print(explorer.controls.delay.value)")) == delay_before + 0.5
        # the other sliders' steps come from the page too, once the one moved has handed it its neighbours
        drawn_before = int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)"))
        page.locator(".widget-hslider", has_text="allowed lateness").locator(".noUi-handle").click()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(1200)
        assert int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)")) >= drawn_before + 1
        late_updated = """() => (""" + CLOCKS_PLOT + """).data.find(t => t.name === 'late, updated').x.length"""
        assert page.evaluate(late_updated) > 0  # 1.5 s of allowed lateness takes some late events in

        # the idle-timeout slider steps like the delay slider: three presses (each drawn from a frame the page
        # holds once it has drawn one), then ten quick ones; the settled figure is the Result of where it stopped
        drawn_before = int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)"))
        page.locator(".widget-hslider", has_text="idle timeout").locator(".noUi-handle").click()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(1200)
        for _ in range(10):
            page.keyboard.press("ArrowRight")
            page.wait_for_timeout(50)
        page.wait_for_timeout(2500)
        assert int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)")) >= drawn_before + 2
        idle, flushed = run_in_kernel(url, token, "r = explorer.result; print(r.config.time.idle_timeout, "
                                      "(r.windows.reason == 'IDLE_TIMEOUT').sum())").split()
        assert int(idle) == 13_000_000
        idle_markers = """() => (""" + CLOCKS_PLOT + """).data.find(t => t.name === 'emitted: idle timeout').x.length"""
        # once the input runs out the heartbeats go on, so the windows still open flush by idle timeout
        assert page.evaluate(idle_markers) == int(flushed) > 0

        page.screenshot(path=str(shots / "explorer.png"), full_page=True)
        page.locator(".js-plotly-plot").first.screenshot(path=str(shots / "two-clocks.png"))

        # compare mode: the same stream under two presets, then a disagreement ringed in every panel
        page.get_by_text("Compare engines", exact=True).click()
        page.locator("button.jupyter-button", has_text="compare").click()
        panels = """() => [...document.querySelectorAll('.js-plotly-plot')]
            .find(p => p.data && p.data.filter(t => t.name === 'highlight').length >= 2)"""
        page.wait_for_function(f"() => !!({panels})()", timeout=60_000)
        titles = page.evaluate(f"() => ({panels})().layout.annotations.map(a => a.text)")
        assert titles == ["flink", "voltsp"]
        disagreements = page.locator(".widget-select select:not([multiple])")
        page.wait_for_function(  # per-operator vs per-key watermarks disagree; the list arrives after the plot
            "() => document.querySelectorAll('.widget-select select:not([multiple]) option').length > 0",
            timeout=30_000)
        disagreements.select_option(index=min(12, disagreements.locator("option").count() - 1))
        page.wait_for_function(
            f"() => ({panels})().data.filter(t => t.name === 'highlight').every(t => t.x && t.x.length > 0)",
            timeout=30_000)
        page.locator(".js-plotly-plot", has=page.locator("text=flink")).first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "compare.png"), full_page=True)

        # Run on Spark: the 20k textbook stream with one arrival batch per event (20,000 batches, which Spark
        # carries four micro-batches of 5,000), in the background, then the agreement badge
        assert run_in_kernel(url, token, "print(len(explorer.stream))").strip() == "20000"
        run_on_spark(page, batches="event", badge="Spark agrees with the preview")
        finished = page.locator(".widget-html-content", has_text="Spark finished").first.text_content()
        assert "Spark finished 5 micro-batches" in finished, finished  # four of events and the end of input
        assert run_in_kernel(url, token, "print(explorer.result.config.batches)").strip() == "event"
        page.wait_for_function("""() => [...document.querySelectorAll('.js-plotly-plot')]
            .map(p => String((p.layout && p.layout.title && p.layout.title.text) || ''))
            .some(t => t.startsWith('The two clocks') && t.includes('computed by spark'))""", timeout=30_000)
        browser.close()
    assert (shots / "explorer.png").stat().st_size > 10_000


# three key presses on the delay slider within one task, as fast as a drag delivers moves: right, right, left
THREE_QUICK_MOVES = """async () => {
  const handle = [...document.querySelectorAll('.widget-hslider')].find(s => s.textContent.includes('delay'))
    .querySelector('.noUi-handle');
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowLeft']) {
    handle.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true}));
    await Promise.resolve(); await Promise.resolve();  // each move's handlers, before any frame is painted
  }
}"""

CLIPPED = """() => {
  const found = [];
  let labelsSeen = 0, plotsSeen = 0;
  const visible = el => el.offsetParent !== null && el.getBoundingClientRect().width > 0;
  const notebook = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook').getBoundingClientRect();
  const right = Math.min(notebook.right, window.innerWidth);
  const labels = '.widget-label, .widget-label-basic, button.jupyter-button, .widget-toggle-button, ' +
                 '.jupyter-widget-Collapse-header, .lm-TabBar-tabLabel, .widget-html-content';
  for (const el of document.querySelectorAll(labels)) {
    if (!visible(el) || !el.closest('.jp-OutputArea')) continue;
    labelsSeen += 1;
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
      found.push('label cut: ' + el.textContent.trim().slice(0, 40));
  }
  for (const plot of document.querySelectorAll('.jp-OutputArea .js-plotly-plot')) {
    if (!visible(plot)) continue;
    plotsSeen += 1;
    const box = plot.getBoundingClientRect();
    const name = String((plot.layout && plot.layout.title && plot.layout.title.text) || '').slice(0, 30);
    if (box.right > right + 1) found.push(`figure past the edge by ${Math.round(box.right - right)} px: ${name}`);
    const svg = plot.querySelector('.main-svg').getBoundingClientRect();
    for (const part of plot.querySelectorAll('.gtitle, .legend')) {
      const r = part.getBoundingClientRect();
      if (r.width && (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1))
        found.push(`${part.getAttribute('class')} clipped in ${name}`);
    }
  }
  return {found, labelsSeen, plotsSeen};
}"""


@pytest.mark.parametrize("width, height, file_browser", [(1280, 800, False), (1600, 1000, True)])
def test_nothing_is_cut_at_1280_px_or_with_the_file_browser_open(lab, tmp_path, width, height, file_browser):
    """At 1280×800, and at 1600 px with JupyterLab's file browser open, the curve was off-screen, the
    two-clocks title and legend clipped, and labels cut ("idle timeout (0…", "Run on Sp…", "micro-bat…")."""
    from playwright.sync_api import sync_playwright

    url, token = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        open_explorer(page, url, token, tmp_path)
        sidebar = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']")
        is_open = "lm-mod-current" in (sidebar.get_attribute("class") or "")
        if is_open != file_browser:
            sidebar.click()
        page.wait_for_timeout(1500)  # the figures follow the new width
        page.screenshot(path=str(tmp_path / f"layout-{width}.png"))
        seen = page.evaluate(CLIPPED)
        assert seen["plotsSeen"] >= 3 and seen["labelsSeen"] >= 20  # the check looked at the explorer
        found = seen["found"]
        for title in ("Run on Spark", "Compare engines", "Copy config as…"):
            header = page.get_by_text(title, exact=True).first
            header.click()  # each panel open in turn, so its labels show
            header.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            seen = page.evaluate(CLIPPED)
            assert seen["labelsSeen"] >= 3, title
            found += [f"{title}: {what}" for what in seen["found"] if what not in found]
        browser.close()
    assert found == [], '\n'.join(found)


def test_a_kafka_export_uploaded_in_the_page_reads_as_date_times_and_the_target_sets_a_delay_that_reaches_it(
        lab, tmp_path):
    """As a new user would: upload a Kafka export (ts in ISO with a Z, ingest_ts in epoch ms, devices that go
    offline), take the guessed mapping, and ask for 99.5%. The axes read as dates, the delay slider moves to the
    suggestion, and the completeness card then shows at least 99.5%. Then Spark's own query runs on it under the
    spark preset and agrees with the preview."""
    from playwright.sync_api import sync_playwright
    from explorer.cli import main

    url, token = lab
    export = tmp_path / "topic-export.csv"
    assert main(["generate", "kafka-export", "--devices", "8", "--duration", "900", "--out", str(export)]) == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport={"width": 1600, "height": 1300},
                                      permissions=["clipboard-read", "clipboard-write"])
        page = context.new_page()
        open_explorer(page, url, token, tmp_path)

        def dropdown(label: str):  # by its own label: option texts such as "kafka-streams" hold other words
            return page.locator(".widget-dropdown").filter(
                has=page.locator("label", has_text=re.compile(f"^{label}$"))).first.locator("select")

        dropdown("stream").select_option(label="(uploaded file)")
        with page.expect_file_chooser() as chooser:  # the widget's file input is never in the document
            page.locator(".widget-upload", has_text="upload a file").click()
        chooser.value.set_files(str(export))
        page.wait_for_function("() => [...document.querySelectorAll('.widget-html-content')]"
                               ".some(e => /topic-export.csv: [0-9,]+ rows/.test(e.textContent))", timeout=60_000)
        mapped = {name: dropdown(name).input_value() for name in ("event_time", "arrival_time", "key")}
        assert mapped == {"event_time": "ts", "arrival_time": "ingest_ts", "key": "device_id"}
        page.locator("button.jupyter-button", has_text="use this file").click()
        page.wait_for_function(f"() => {{ const p = {CLOCKS_PLOT}; return p && p.layout.xaxis.type === 'date' "
                               "&& p.layout.yaxis.type === 'date'; }", timeout=60_000)
        page.wait_for_timeout(1500)  # the frames drawn after it: plotly.js re-guessed the type on each (ticks "1.7951652T")
        axes = page.evaluate(f"() => {{ const p = {CLOCKS_PLOT}; return [p._fullLayout.xaxis.type, p._fullLayout.yaxis.type, "
                             "[...p.querySelectorAll('.xtick text')].map(t => t.textContent).join(' ')]; }")
        assert axes[:2] == ["date", "date"] and "2026" in axes[2], axes
        view = (f"() => {{ const p = {CLOCKS_PLOT}; const x = p._fullLayout.xaxis; "
                "return [x.type, x.range.map(v => x.r2l(v))]; }")
        run_in_kernel(url, token, "explorer.wait_until_settled()\nexplorer.wait_for_prefetch()")
        page.evaluate(f"() => {{ const p = {CLOCKS_PLOT}; window.__last_update = performance.now(); "
                      "p.on('plotly_update', () => { window.__last_update = performance.now(); }); }")
        page.wait_for_function("() => performance.now() - window.__last_update > 2000", timeout=60_000)  # quiet
        whole = page.evaluate(view)[1]
        page.evaluate(f"() => {{ const p = {CLOCKS_PLOT}; const x = p._fullLayout.xaxis; "  # the user zooms in
                      f"return Plotly.relayout(p, {{'xaxis.range': [{whole[0]}, {whole[0] + 120_000}].map(v => x.l2r(v))}}); }}")
        page.wait_for_timeout(1000)  # the zoom reaches the kernel's copy of the layout
        before = page.evaluate(view)
        assert before[0] == "date" and before[1] == [whole[0], whole[0] + 120_000]
        watch_delay_slider(page)
        for _ in range(3):  # slider steps, drawn by the kernel or from the page's own frames
            time_arrow_right(page)
        page.wait_for_timeout(1500)
        assert page.evaluate(view) == before  # still a date axis, still where it was (naming the type
        # without the range made plotly autorange it on every frame)
        seen = page.evaluate(CLIPPED)  # the upload form open: its labels fit too
        assert seen["found"] == [], seen["found"]
        said = page.locator(".widget-html-content", has_text="ingest_ts → arrival_time").first.text_content()
        assert "Unix epoch milliseconds" in said and "ISO-8601" in said
        target = page.locator(".widget-text", has_text="target %").locator("input")
        target.fill("99.5")
        target.press("Enter")
        page.wait_for_function("() => [...document.querySelectorAll('.widget-html-content')]"
                               ".some(e => e.textContent.startsWith('smallest delay reaching 99.5%'))", timeout=120_000)
        page.wait_for_timeout(2000)  # the slider moves, the cards follow
        completeness = page.locator(".widget-html-content", has_text="completeness").first.text_content()
        shots = Path(os.environ.get("WX_SCREENSHOTS", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "kafka-export.png"))
        # copy the settings as PySpark: the snippet names the file's columns, and the button puts it on the clipboard
        page.get_by_text("Copy config as…", exact=True).first.click()
        page.locator(".wx-export select").select_option("pyspark")
        snippet = page.locator(".wx-export textarea")
        page.wait_for_function("() => document.querySelector('.wx-export textarea').value.includes('pyspark')")
        page.locator(".wx-export button.wx-copy").click()
        page.wait_for_timeout(500)
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied == snippet.input_value() and "EVENT_TIME = ('ts', 'iso'" in copied and "KEY = 'device_id'" in copied
        # Spark's own query on the export: the spark preset, a micro-batch per minute of arrivals; the badge
        # holds it against the preview, and the preview's watermark stays dotted beside Spark's
        dropdown("preset").select_option("spark")
        run_on_spark(page, batches="interval:60s", badge="Spark's own query agrees with the preview")
        assert run_in_kernel(url, token, "print(explorer.result.engine, explorer.result.config.preset, "
                                         "explorer.result.config.batches)").split() == ["spark-native", "spark",
                                                                                         "interval:1m"]
        page.wait_for_function(f"""() => {{ const p = {CLOCKS_PLOT};
            const line = p.data.find(t => t.name === "the preview's effective watermark");
            return p.layout.title.text.includes('computed by spark-native') && line.showlegend
                && line.y && line.y.length > 1; }}""", timeout=30_000)
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        seen = page.evaluate(CLIPPED)  # the longer title (computed by …) fits too
        assert seen["found"] == [], seen["found"]
        page.screenshot(path=str(shots / "spark-native.png"))
        browser.close()
    shown = float(completeness.split("completeness")[1].split("%")[0])
    assert shown >= 99.5
