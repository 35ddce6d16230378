// The delay slider's next frames, kept in the page: a step whose frame is here is drawn at once, with no
// round trip to the kernel. See page_frames.py for the protocol.

const widgetId = (ref) => String(ref).replace(/^IPY_MODEL_/, "");

// An array in the form plotly's widget model reads from the kernel (it makes a typed array over the whole
// underlying buffer): a copy of the bytes, since a buffer may arrive as a view into a larger one.
function packed(spec, buffers) {
  const view = buffers[spec.buffer];
  if (view.byteLength === 0) return [];
  const bytes = view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
  const size = spec.dtype === "float32" ? 4 : 8;
  return { dtype: spec.dtype, shape: [view.byteLength / size], value: new DataView(bytes) };
}

function near(a, b) {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
}

export default {
  async initialize({ model }) {
    const frames = new Map(); // delay → {token, context, traces, x, y, text, title}
    const slider = await model.widget_manager.get_model(widgetId(model.get("slider")));
    const watched = {};
    for (const ref of model.get("watched")) {
      const id = widgetId(ref);
      watched[id] = await model.widget_manager.get_model(id);
    }

    const report = () => model.send({ kind: "held", frames: [...frames].map(([d, f]) => [d, f.token]) });
    const frameAt = (delay) => [...frames].find(([d]) => near(d, delay));
    // the frame was computed for these control values; any other value in the page makes it wrong
    const current = (context) => context.every(([id, trait, value]) => watched[id] && watched[id].get(trait) === value);

    const figure = await model.widget_manager.get_model(widgetId(model.get("figure")));
    // Drawn through the figure's own widget model, as if the kernel had sent the frame: every view of it
    // redraws with its own plotly.js, and the model's data stays what the page shows.
    function draw(frame) {
      if (Object.keys(figure.views || {}).length === 0) return false;
      const layout = figure.get("_widget_layout");
      const title = layout && layout.title && layout.title.text;
      const update = {
        style_data: { x: frame.x, y: frame.y, text: frame.text }, style_traces: frame.traces,
        layout_data: title === frame.title ? {} : { "title.text": frame.title },
        trace_edit_id: -1, layout_edit_id: -1, source_view_id: null, // ids the kernel never waits for
      };
      // a change that came from elsewhere, as ipywidgets marks the kernel's: not sent back to the kernel
      figure._state_lock = { _py2js_update: update };
      try {
        figure.set("_py2js_update", update);
      } finally {
        figure._state_lock = null;
      }
      return true;
    }

    let pending = null;
    slider.on("change:value", () => {
      // after the slider's own handlers (which send the value to the kernel), before the next paint
      const first = pending === null;
      pending = slider.get("value");
      if (!first) return;
      queueMicrotask(() => {
        const delay = pending;
        pending = null;
        const held = frameAt(delay);
        if (!held) return; // the kernel knows this page has no frame there and draws it itself
        const drew = current(held[1].context) && draw(held[1]);
        model.send({ kind: drew ? "drew" : "missed", token: held[1].token });
      });
    });

    model.on("msg:custom", (msg, buffers) => {
      if (msg.kind === "clear") {
        frames.clear();
      } else if (msg.kind === "frame") {
        const old = frameAt(msg.delay);
        if (old) frames.delete(old[0]);
        frames.set(msg.delay, {
          token: msg.token, context: msg.context, traces: msg.traces, title: msg.title,
          x: msg.x.map((s) => packed(s, buffers)), y: msg.y.map((s) => packed(s, buffers)), text: msg.text,
        });
        while (frames.size > model.get("capacity")) frames.delete(frames.keys().next().value);
      }
      report();
    });
    report();
  },
};
