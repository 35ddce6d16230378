"""In the page (real JupyterLab, headless Chromium): the mouse on an emission diamond that sits on the
effective watermark's step hovers and clicks a marker (the emission, or an event dot drawn on it), never the line
(the line took both before: an SVG line's vertex within 3 px ranks nearer than a WebGL marker's centre). The
kernel-side check of the traces' settings is tests/test_ui_reading.py."""

from __future__ import annotations

import pytest
from jupyter_lab import CHROMIUM, CLOCKS_PLOT, FLAGS, open_explorer, run_in_kernel

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed, so the browser "
                                "test cannot run")


# the visible emission nearest (in pixels) to a vertex of the effective watermark's line, with no event dot under it,
# and where it is on the page
ON_THE_LINE = """() => {
  const p = """ + CLOCKS_PLOT + """;
  p.scrollIntoView({block: 'center'});
  const xa = p._fullLayout.xaxis, ya = p._fullLayout.yaxis, box = p.getBoundingClientRect();
  const px = (a, v) => a._offset + a.l2p(a.d2l(v));
  const line = p.data.find(t => t.name === 'effective watermark');
  const vertices = [];
  for (let i = 0; i < line.x.length; i++)
    if (line.y[i] !== null && !Number.isNaN(line.y[i])) vertices.push([px(xa, line.x[i]), px(ya, line.y[i])]);
  const inside = (x, y) => x > xa._offset + 5 && x < xa._offset + xa._length - 5 && y > ya._offset + 5 &&
                          y < ya._offset + ya._length - 5;
  const events = [];  // the event dots drawn: an emission apart from them is looked at first
  for (const t of p.data)
    if (String(t.hovertemplate || '').includes('click to inspect'))
      for (let i = 0; i < (t.x || []).length; i++) {
        const x = px(xa, t.x[i]), y = px(ya, t.y[i]);
        if (inside(x, y)) events.push([x, y]);
      }
  let best = null;
  for (const t of p.data) {
    if (!String(t.hovertemplate || '').includes('emitted')) continue;
    for (let i = 0; i < (t.x || []).length; i++) {
      const x = px(xa, t.x[i]), y = px(ya, t.y[i]);
      if (!inside(x, y)) continue;
      const crowded = events.some(([ex, ey]) => Math.hypot(ex - x, ey - y) < 8);
      let near = Infinity;
      for (const [vx, vy] of vertices) near = Math.min(near, Math.hypot(vx - x, vy - y));
      const rank = (near >= 3 ? 2000 : 0) + (crowded ? 1000 : 0) + near;  // on the line, apart from events first
      if (!best || rank < best.rank)
        best = {name: t.name, near, crowded, rank, x: box.left + x, y: box.top + y};
    }
  }
  window.__hovered = [];
  p.on('plotly_hover', e => { window.__hovered = e.points.map(q => q.data.name); });
  return best;
}"""


def test_the_mouse_on_an_emission_on_the_watermark_line_hovers_and_clicks_the_emission(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    url, token = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_context(viewport={"width": 1600, "height": 1300}).new_page()
        open_explorer(page, url, token, tmp_path)
        run_in_kernel(url, token, "explorer.data.source.value = 'kafka-export'\nexplorer.data.load()\n"
                                  "explorer.wait_until_settled()\nexplorer.wait_for_prefetch()")
        page.evaluate(f"() => {{ const p = {CLOCKS_PLOT}; window.__last_update = performance.now(); "
                      "p.on('plotly_update', () => { window.__last_update = performance.now(); }); }")
        page.wait_for_function("() => performance.now() - window.__last_update > 2000", timeout=60_000)  # quiet
        emission = page.evaluate(ON_THE_LINE)
        assert emission is not None and emission["near"] < 3, emission  # a diamond on the line's step
        for _ in range(5):  # a busy machine may miss a move: off the plot and back
            page.mouse.move(1, 1)
            page.evaluate("() => { window.__hovered = []; }")
            page.mouse.move(emission["x"], emission["y"])
            try:
                page.wait_for_function("() => window.__hovered.length > 0", timeout=5_000)
                break
            except Exception:
                continue
        hovered = page.evaluate("() => window.__hovered")
        assert hovered and not {"watermark", "effective watermark"} & set(hovered), (hovered, emission)  # a marker
        page.mouse.click(emission["x"], emission["y"])
        # the inspector explains what was clicked: the window (or, where a dot lies on the diamond, the event)
        page.wait_for_function("() => [...document.querySelectorAll('.widget-html-content')]"
                               ".some(e => /^(window \\[|event )/.test(e.textContent))", timeout=60_000)
        browser.close()
