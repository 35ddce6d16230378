// The sliders' next frames, kept in the page: a step whose frame is here is drawn at once, with no round trip
// to the kernel. See page_frames.py for the protocol.

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
    const models = async (refs) => Promise.all(refs.map((ref) => model.widget_manager.get_model(widgetId(ref))));
    const [figure] = await models([model.get("figure")]);
    const sliders = await models(model.get("sliders"));
    const watched = Object.fromEntries((await models(model.get("watched"))).map((m) => [m.model_id, m]));
    let frames = []; // oldest first: {token, slider, value, context, traces, x, y, text, title}

    const report = () => model.send({ kind: "held", tokens: frames.map((f) => f.token) });
    const frameAt = (slider, value) => frames.find((f) => f.slider === slider && near(f.value, value));
    // the frame was computed for these control values; any other value in the page makes it wrong
    const current = (context) => context.every(([id, trait, value]) => watched[id] && watched[id].get(trait) === value);

    // the figure's plots in this page (its views' elements), where its current zoom is read
    let plots = [];
    const findPlots = () =>
      Promise.all(Object.values(figure.views || {})).then((views) => { plots = views.map((v) => v.el); });
    findPlots();

    // Drawn through the figure's own widget model, as if the kernel had sent the frame: every view of it
    // redraws with its own plotly.js, and the model's data stays what the page shows.
    function draw(frame) {
      if (Object.keys(figure.views || {}).length === 0) return false;
      const layout = figure.get("_widget_layout");
      const title = layout && layout.title && layout.title.text;
      // a date axis stays one: its type and its range, as this page shows them now, go with the frame
      // (plotly_messages.date_axes says why)
      const types = {};
      const shown = plots.find((el) => el._fullLayout);
      for (const axis of ["xaxis", "yaxis"]) {
        const held = layout && layout[axis];
        if (!held || held.type !== "date") continue;
        types[`${axis}.type`] = "date";
        const range = shown ? (!shown._fullLayout[axis].autorange && shown.layout[axis].range)
                            : (held.autorange !== true && held.range);
        if (range) Object.assign(types, { [`${axis}.range`]: [...range], [`${axis}.autorange`]: false });
        else types[`${axis}.autorange`] = true;
      }
      findPlots(); // for the next frame: views shown since
      const update = {
        style_data: { x: frame.x, y: frame.y, text: frame.text }, style_traces: frame.traces,
        layout_data: title === frame.title ? types : { ...types, "title.text": frame.title },
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

    // the last trace edit the kernel sent this figure that reached the page: a kernel frame sent after it is
    // still on its way, and lands on top of whatever the page draws now (page_frames.py: "seen"); and once it
    // is on screen the page says so ("shown"), and the kernel sends its next light frame
    let seen = 0;
    const painted = (then) => requestAnimationFrame(() => requestAnimationFrame(then)); // two frames: painted
    const listening = []; // [model, event, callback]: let go when the module is loaded again
    const listen = (target, event, callback) => { target.on(event, callback); listening.push([target, event, callback]); };
    for (const name of ["_py2js_update", "_py2js_restyle"]) {
      listen(figure, `change:${name}`, () => {
        const message = figure.get(name);
        if (!message || !(message.trace_edit_id > seen)) return;
        const edit = (seen = message.trace_edit_id);
        painted(() => model.send({ kind: "shown", edit }));
      });
    }

    // One frame drawn by the page at a time: until it is on screen (two animation frames; with software WebGL
    // ~150 ms), later moves only note their position, and the last one is drawn then. Drawing each move in
    // turn kept the page busy and the keys waiting behind (benchmarks/RESULTS.md, issue 30's bursts).
    let pending = null; // the latest slider move not drawn yet: [slider's model id, value]
    let onScreen = true; // the page's last frame is on screen
    let queued = false;
    function drawLatest() {
      queued = false;
      if (pending === null || !onScreen) return;
      const frame = frameAt(...pending);
      pending = null;
      if (!frame) return; // the kernel knows this page held no such frame and draws the step itself
      const drew = current(frame.context) && draw(frame);
      model.send({ kind: drew ? "drew" : "missed", token: frame.token, seen });
      if (!drew) return;
      onScreen = false;
      painted(() => { onScreen = true; drawLatest(); });
    }
    for (const slider of sliders) {
      listen(slider, "change:value", () => {
        // after the slider's own handlers (which send the value to the kernel), before the next paint
        pending = [slider.model_id, slider.get("value")];
        if (!queued) {
          queued = true;
          queueMicrotask(drawLatest);
        }
      });
    }

    listen(model, "msg:custom", (msg, buffers) => {
      if (msg.kind === "clear") {
        frames = [];
      } else if (msg.kind === "frame") {
        frames = frames.filter((f) => !(f.slider === msg.slider && near(f.value, msg.value)));
        frames.push({
          token: msg.token, slider: msg.slider, value: msg.value, context: msg.context, traces: msg.traces,
          title: msg.title, text: msg.text,
          x: msg.x.map((s) => packed(s, buffers)), y: msg.y.map((s) => packed(s, buffers)),
        });
        frames = frames.slice(Math.max(0, frames.length - model.get("capacity")));
      }
      report();
    });
    report();
    return () => listening.forEach(([target, event, callback]) => target.off(event, callback));
  },
};
