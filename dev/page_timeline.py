"""Dev tool (not part of `make test`): where one delay-slider step of the explorer spends its time in the page.

Starts JupyterLab and Debian's chromium as the browser test does, presses the delay slider's arrow key a few
times (each press followed by the full frame and a pause), and prints for each press, from the keydown:
when the biggest kernel message arrived in the page (the two-clocks update) and its size, when the plot's
data changed, and when that frame was on screen. With --trace, a Chrome trace of the last press lists the
page's main-thread tasks and the GPU process's tasks (software WebGL when there is no GPU).

With --burst, ten presses 50 ms apart on each slider instead (as a user holding the key, or tapping fast): how
long the page took to accept them beyond the gaps (each press returns once the page has handled its keydown),
how long each key waited in the page before its handler ran (from the event's timeStamp), how many of the
steps the page drew from frames it held, and when the frame of the last position was there after
the last press, data and on screen, and when the settled frame (every point, once the slider rests) came. Each
slider starts from delay 5 s, the others 0, and takes one step 2 s before the burst, as a user starts moving it
(the frames computed ahead then follow that slider, as they would).

With --run-all N, the notebook is opened N times, each on a freshly restarted kernel (the compiled kernel cached,
as after `make lab`'s first run): the time from Run All to the two clocks drawn with data.

    .venv/bin/python dev/page_timeline.py [--presses 6] [--trace] [--compare] [--burst] [--run-all 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from jupyter_lab import (CHROMIUM, CLOCKS_PLOT, EFFECTIVE_Y, FLAGS, open_explorer, run_in_kernel,  # noqa: E402
                         running_lab, time_arrow_right, watch_delay_slider)

# every WebSocket message the page receives, with its arrival time (before JupyterLab handles it)
RECORD_MESSAGES = """(() => { const Native = window.WebSocket; window.__messages = [];
  const Recording = function (...args) { const socket = new Native(...args);
    socket.addEventListener('message', e => window.__messages.push(
      [performance.now(), e.data.byteLength || e.data.length || e.data.size || 0]));
    return socket; };
  Recording.prototype = Native.prototype;
  Object.assign(Recording, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  window.WebSocket = Recording; })();"""
TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute"]


def press(page) -> dict[str, float]:
    page.evaluate("() => { window.__messages = []; }")
    t0, changed, on_screen = time_arrow_right(page)
    messages = page.evaluate("() => window.__messages")
    early = [(t - t0, size) for t, size in messages if t0 <= t <= t0 + changed]
    arrived, size = max(early, key=lambda m: m[1], default=(float("nan"), 0))
    return {"update arrived": arrived, "KB": size / 1000, "data changed": changed, "on screen": on_screen}


# every value a trace's y takes (the effective watermark's, or the late events' where the slider leaves the
# watermark alone), with its page time, and two animation frames later
RECORD_Y = """(name) => {
  const plot = """ + CLOCKS_PLOT + """;
  const trace = plot.data.find(t => t.name === name);
  window.__ys = [];
  let y = trace.y;
  Object.defineProperty(trace, 'y', {configurable: true, enumerable: true, get: () => y, set: (value) => {
    y = value;
    const entry = [performance.now(), Array.from(value || []), null];
    window.__ys.push(entry);
    requestAnimationFrame(() => requestAnimationFrame(() => { entry[2] = performance.now(); }));
  }});
}"""


def press_apart(page, presses: int, gap_ms: int) -> float:
    """``presses`` arrow-right presses ``gap_ms`` apart; the ms they took beyond the gaps (each press returns once
    the page has handled its key events)."""
    started = time.perf_counter()
    for number in range(presses):
        page.keyboard.press("ArrowRight")
        if number < presses - 1:
            time.sleep(gap_ms / 1000)
    return (time.perf_counter() - started) * 1000 - (presses - 1) * gap_ms


def burst(page, slider: str, presses: int = 10, gap_ms: int = 50) -> dict[str, float]:
    """``presses`` → presses ``gap_ms`` apart on ``slider``; then, once everything has settled, when the last
    position's frame was first there (its effective watermark, or its late events for allowed lateness, to float32's
    precision), from the last press."""
    page.locator(".widget-hslider", has_text=slider).locator(".noUi-handle").click()
    page.keyboard.press("ArrowRight")  # one step first, as a user starts: the frames ahead follow this slider
    page.wait_for_timeout(2000)
    # allowed lateness leaves the watermark alone; a light frame keeps every late event, so that trace is whole
    page.evaluate(RECORD_Y, "late, updated" if slider == "allowed lateness" else "effective watermark")
    page.evaluate("() => { window.__keys = []; window.__waits = []; document.addEventListener('keydown', "
                  "e => { window.__keys.push(performance.now()); window.__waits.push(performance.now() - e.timeStamp); },"
                  " true); }")
    accepted = press_apart(page, presses, gap_ms)
    page.wait_for_timeout(4000)  # the light frames, then every point once the slider rests
    keys, ys, waits = page.evaluate("() => [window.__keys, window.__ys, window.__waits]")
    last, final = keys[-1], ys[-1][1]
    def close(a: float | None, b: float | None) -> bool:  # gaps (None, NaN) where the other has them
        if a is None or b is None or a != a or b != b:
            return (a is None or a != a) == (b is None or b != b)
        return abs(a - b) <= 1e-3 * max(1.0, abs(b))

    same = [entry for entry in ys if len(entry[1]) == len(final) and all(map(close, entry[1], final))]
    first = next((entry for entry in same if entry[0] >= last), same[-1])
    return {"accepting the presses (ms over the gaps)": accepted,
            "a key waited in the page, median": statistics.median(waits), "longest": max(waits),
            "frames drawn": len(ys),
            "last position, data changed": first[0] - last,
            "last position, on screen": (first[2] or float("nan")) - last,
            "every point drawn (the settled frame), data": ys[-1][0] - last}


def summarize_trace(path: Path) -> None:
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    keydowns = [e for e in events if e.get("name") == "EventDispatch"
                and e.get("args", {}).get("data", {}).get("type") == "keydown"]
    if not keydowns:
        print("the trace holds no keydown")
        return
    t0 = keydowns[-1]["ts"]
    print("\nlast press, tasks over 4 ms (ms from the keydown, duration, what ran inside):")
    for task in sorted((e for e in events if e.get("ph") == "X" and e.get("dur", 0) > 4000
                        and t0 - 1000 <= e["ts"] < t0 + 600_000
                        and (e["name"], threads.get((e["pid"], e["tid"]))) in
                        {("RunTask", "CrRendererMain"), ("GPUTask", "CrGpuMain")}), key=lambda e: e["ts"]):
        inside = Counter()
        for e in events:
            if (e.get("ph") == "X" and (e["pid"], e["tid"]) == (task["pid"], task["tid"]) and e is not task
                    and task["ts"] <= e["ts"] < task["ts"] + task["dur"] and e.get("dur", 0) > 1500):
                inside[e["name"]] += e["dur"] / 1000
        where = "GPU process" if task["name"] == "GPUTask" else "page"
        print(f"  {(task['ts'] - t0) / 1000:7.1f} +{task['dur'] / 1000:6.1f}  {where:11}  "
              + ", ".join(f"{name} {ms:.0f}" for name, ms in inside.most_common(4)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=6)
    parser.add_argument("--trace", action="store_true", help="Chrome trace of the last press, summarized")
    parser.add_argument("--compare", action="store_true",
                        help="then the same presses with the page frames off (every step from the kernel)")
    parser.add_argument("--burst", action="store_true", help="ten presses 50 ms apart on each slider")
    parser.add_argument("--rounds", type=int, default=3, help="with --burst: bursts per slider")
    parser.add_argument("--run-all", type=int, default=0, metavar="N", help="Run All to the first figure, N times")
    parser.add_argument("--preset", help="with --burst: the presets to burst under, comma-separated (default: the notebook's)")
    parser.add_argument("--kafka-export", action="store_true",
                        help="on `generate kafka-export` (50k rows, ISO event times, epoch-ms arrivals) instead of 003's")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, running_lab(Path(tmp)) as (url, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1300})
        page.add_init_script(RECORD_MESSAGES)
        open_explorer(page, url, token, Path(tmp))
        page.wait_for_timeout(3000)  # the background sweep and the first full frame
        if args.kafka_export:
            export = Path(tmp) / "topic-export.csv"
            run_in_kernel(url, token, "from explorer.cli import main; "
                          f"main(['generate', 'kafka-export', '--out', {str(export)!r}]);"
                          f"from explorer import load_events; explorer._load_stream(load_events({str(export)!r}, columns="
                          "{'event_time': 'ts', 'arrival_time': 'ingest_ts', 'key': 'device_id'}), reset=True);"
                          "explorer.controls.delay.value = 5")
            page.wait_for_timeout(8000)  # the new stream's frame, the sweep and the frames computed ahead
        if args.run_all:
            run_all(page, url, token, args.run_all)
            browser.close()
            return
        if args.burst:
            bursts(page, url, token, args.rounds, args.preset.split(",") if args.preset else [None])
            browser.close()
            return
        watch_delay_slider(page)
        modes = [("frames kept in the page", "")]
        if args.compare:  # the same presses with every step sent by the kernel, in the same run
            modes.append(("every step sent by the kernel",
                          "explorer.page_frames.capacity = 0; explorer.page_frames.clear()"))
        for number_of_mode, (mode, code) in enumerate(modes):
            if code:
                run_in_kernel(url, token, code)
            rows = []
            for number in range(args.presses):
                tracing = args.trace and number_of_mode == 0 and number == args.presses - 1
                if tracing:
                    browser.start_tracing(page=page, path=str(Path(tmp) / "trace.json"), categories=TRACE_CATEGORIES)
                rows.append(press(page))
                if tracing:
                    page.wait_for_timeout(300)
                    browser.stop_tracing()
                page.wait_for_timeout(1500)  # the full frame follows after 0.5 s; then a pause
            print(f"{mode}: ms from the keydown, per press:")
            for name in rows[0]:
                values = [row[name] for row in rows]
                shown = [v for v in values if v == v]  # NaN: no kernel message came before the data changed
                median = f"{statistics.median(shown):6.0f}" if shown else "     -"
                print(f"  {name:15} median {median}   all {['-' if v != v else round(v) for v in values]}")
        if args.trace:
            summarize_trace(Path(tmp) / "trace.json")
        browser.close()


def run_all(page, url: str, token: str, times: int) -> None:
    """--run-all: restart the kernel, reload the notebook, Run All, and time it until the two clocks have data."""
    import urllib.request

    seconds = []
    for _ in range(times):
        with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=10) as answer:
            (kernel,) = json.load(answer)
        restart = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}/restart?token={token}", method="POST")
        urllib.request.urlopen(restart, timeout=60).close()
        page.reload()
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        page.wait_for_timeout(2000)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        started = time.perf_counter()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        marks = {}
        busy = "document.querySelector(\".jp-Notebook-ExecutionIndicator[data-status='busy']\")"
        for name, condition in [("kernel busy", busy),
                                ("widgets shown", "document.querySelector('.jp-OutputArea .widget-hslider')"),
                                ("a plot shown", "document.querySelector('.jp-OutputArea .js-plotly-plot')"),
                                ("two clocks drawn", f"({EFFECTIVE_Y})() && ({EFFECTIVE_Y})().length > 0")]:
            page.wait_for_function(f"() => !!({condition})", timeout=90_000, polling=20)
            marks[name] = time.perf_counter() - started
        seconds.append(marks["two clocks drawn"])
        print("Run All → " + ", ".join(f"{k} {v:.1f} s" for k, v in marks.items()), flush=True)
    print(f"median {statistics.median(seconds):.1f} s of {times}")


PLAIN_INPUT = """() => { const box = document.createElement('input'); box.id = '__plain';
  box.style = 'position: fixed; top: 0; left: 0; z-index: 9999'; document.body.appendChild(box); }"""


def plain_burst(page, presses: int = 10, gap_ms: int = 50) -> float:
    """The same presses in a text box of its own, which draws nothing: what the presses cost beyond the gaps
    when the page has nothing to do (the driver's own round trips)."""
    page.evaluate(PLAIN_INPUT)
    page.locator("#__plain").focus()
    accepted = press_apart(page, presses, gap_ms)
    page.evaluate("() => document.getElementById('__plain').remove()")
    return accepted


def bursts(page, url: str, token: str, rounds: int, presets: list[str | None]) -> None:
    """--burst: each slider's burst, ``rounds`` times, under each preset; prints every burst and the medians."""
    rows: dict[str, list[dict[str, float]]] = {}
    plain = []
    for number in range(rounds):
        plain.append(plain_burst(page))
        for preset in presets:
            if preset:
                run_in_kernel(url, token, f"explorer.controls.preset.value = {preset!r}")
            for slider in ("delay", "allowed lateness", "idle timeout"):
                # each burst from the same place: ten steps from the top of a range move nothing
                run_in_kernel(url, token, "c = explorer.controls; c.delay.value, c.allowed.value, c.idle.value = 5, 0, 0")
                drawn = int(run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)"))
                row = burst(page, slider)
                row["steps drawn from the page's frames"] = int(
                    run_in_kernel(url, token, "print(explorer.page_frames.drawn_in_page)")) - drawn
                name = f"{preset or 'notebook'}, {slider}"
                rows.setdefault(name, []).append(row)
                print(f"round {number + 1}, {name}: " + ", ".join(f"{k} {v:.0f}" for k, v in row.items()), flush=True)
    print(f"\nmedians (ms); the same presses in a plain text box: {statistics.median(plain):.0f} ms over the gaps")
    for name, found in rows.items():
        print(f"  {name:30} " + ", ".join(f"{k} {statistics.median(r[k] for r in found):.0f}" for k in found[0]))


if __name__ == "__main__":
    main()
