"""Dev tool (not part of `make test`): what Plotly itself costs the explorer's two clocks in the page.

Starts JupyterLab and Debian's chromium as the browser test does and opens the explorer (20k textbook events).
Then, on the settled two-clocks figure, with the page's own ``window.Plotly``:
- ``Plotly.redraw`` with every trace shown, and with every trace hidden (axes, legend and title alone);
- ``Plotly.restyle`` of the 2-point diagonal alone, and of every trace: any data edit replots the figure.
Last, a CPU profile of delay steps drawn from the page's frames, summed per function over the page's
JavaScript: how much of plotly's widget update (``do_update``) goes to reporting trace and layout deltas
back to the kernel (``_sendTraceDeltas``, ``_sendLayoutDelta``), which it does on every update.

    .venv/bin/python dev/plotly_costs.py [--presses 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from jupyter_lab import (CHROMIUM, CLOCKS_PLOT, FLAGS, open_explorer, running_lab, time_arrow_right,  # noqa: E402
                         watch_delay_slider)

PLOTLY_COSTS = """async () => {
  const gd = """ + CLOCKS_PLOT + """;
  const P = window.Plotly, every = [...gd.data.keys()];
  const median = async (f) => { const s = []; for (let k = 0; k < 7; k++) {
    const t = performance.now(); await f(); s.push(performance.now() - t); } s.sort((a, b) => a - b); return s[3]; };
  const shown = (keep) => P.restyle(gd, {visible: every.map(i => keep.includes(i) ? true : 'legendonly')});
  const out = {};
  out['redraw, every trace'] = await median(() => P.redraw(gd));
  await shown([]);
  out['redraw, every trace hidden'] = await median(() => P.redraw(gd));
  await shown(every);
  out['restyle of the diagonal alone'] = await median(() => P.restyle(gd, {x: [gd.data[0].x.slice()]}, [0]));
  out['restyle of every trace'] = await median(() => P.restyle(
    gd, {x: every.map(i => gd.data[i].x.slice()), y: every.map(i => gd.data[i].y.slice())}, every));
  return out;
}"""
WIDGET_FUNCTIONS = ("do_update", "_sendTraceDeltas", "_sendLayoutDelta")


def inclusive_ms(profile: dict) -> Counter:
    """Per function name, the sampled time of the stacks it is on (counted once per stack)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    totals: Counter = Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"]):
        names, node = set(), sample
        while node is not None:
            names.add(nodes[node]["callFrame"]["functionName"])
            node = parent.get(node)
        for name in names:
            totals[name] += delta / 1000
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=4)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with running_lab(Path(tempfile.mkdtemp())) as (url, token), sync_playwright() as p:
        page = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS).new_page(viewport={"width": 1600, "height": 1300})
        open_explorer(page, url, token, Path(tempfile.mkdtemp()))
        page.wait_for_timeout(3000)  # the background sweep and the settled frame
        for name, ms in page.evaluate(PLOTLY_COSTS).items():
            print(f"{name:32s} {ms:6.1f} ms")
        watch_delay_slider(page)
        for _ in range(3):  # the frames of the next steps are computed ahead and handed to the page
            time_arrow_right(page)
            page.wait_for_timeout(1500)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 100})
        totals: Counter = Counter()
        for _ in range(args.presses):
            cdp.send("Profiler.start")
            time_arrow_right(page)
            totals.update(inclusive_ms(cdp.send("Profiler.stop")["profile"]))
            page.wait_for_timeout(1500)
        print(f"CPU profile of {args.presses} steps drawn from the page (sampling slows them), per step:")
        for name in WIDGET_FUNCTIONS:
            print(f"  {name:18s} {totals[name] / args.presses:6.1f} ms")


if __name__ == "__main__":
    main()
