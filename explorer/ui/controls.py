"""The controls, in the words of the CLI and VoltSP's timeConfig, and their two-way mapping to RunConfig.

The mapping reads a ``ControlValues`` (every control's value, read at once on the kernel's thread), so a thread
that must know the config of a slider position (the prefetch thread, checking a frame it computed ahead) gets
it from a snapshot handed to it, not from widgets the kernel's thread may be changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import ipywidgets as W

from explorer.config import (PRESETS, TIME_FIELDS, BatchSpec, RunConfig, TimeField, WindowKind, WindowSpec, apply_delay,
                             delay_of, preset)
from explorer.errors import InputError
from explorer.ui.rule_controls import MARGIN_PX, RuleControls, rules_from
from explorer.timeutil import MICROS, human_duration

S = MICROS["s"]
STYLE = {"description_width": "9em"}
# 30em leaves a dropdown 21em: its longest option ("scripted (the input's watermark rows)") fits, where 26em
# cut the watermark strategy to "bounded (max seen − L, per eve…" (tests/test_browser_page.py measures it)
CONTROL_WIDTH = "30em"
# the column: its controls and their 2 px margins (MARGIN_PX) each side; at CONTROL_WIDTH it ran 4 px short, so it
# scrolled sideways and cut its boxes' right edges (seen in Chromium at 1280 px)
COLUMN_WIDTH = f"calc({CONTROL_WIDTH} + {2 * MARGIN_PX}px)"


def wide() -> W.Layout:
    """A layout of its own for each control: a shared Layout would hide every control when one is hidden."""
    return W.Layout(width=CONTROL_WIDTH)


def _slider(description: str, maximum: float, step: float = 0.5) -> W.FloatSlider:
    """A slider that takes the width of its row (``sliders_box``): in the controls column its track was 60 px
    for a 0–191 s range, too short to drag a step at a time."""
    return W.FloatSlider(value=0.0, min=0.0, max=maximum, step=step, description=description, style=STYLE,
                         layout=W.Layout(flex="1 1 auto", width="auto", min_width="20em"), continuous_update=True,
                         readout_format=".1f")


@dataclass(frozen=True)
class ControlValues:
    """Every control's value at one moment (by attribute name), the engine rules' raw values (by field name) and
    the config last shown: all ``config_of`` reads. Take it on the kernel's thread (``Controls.values``)."""

    widgets: Mapping[str, Any]
    rules: Mapping[str, Any]
    shown: RunConfig


# the controls config_of reads, besides the time fields' own
_READ = ("preset", "window_kind", "size", "slide", "batches", "delay")


class Controls:
    """Every knob of a RunConfig as a widget. ``config()`` reads them; ``show(config)`` fills them (presets)."""

    def __init__(self, max_delay: float = 40.0):
        self.preset = W.Dropdown(options=sorted(PRESETS), value="voltsp", description="preset", style=STYLE, layout=wide())
        self.time_source = W.ToggleButtons(options=[("event time", "event"), ("processing time", "processing")],
                                           description="time", style={**STYLE, "button_width": "auto"})
        self.strategy = W.Dropdown(options=[("MIN_EVENT_TIME (per batch)", "min"), ("MAX_EVENT_TIME (per batch)", "max"),
                                            ("bounded (max seen − L, per event)", "bounded"),
                                            ("event clock (Bytewax: arrival-driven)", "event-clock"),
                                            ("scripted (the input's watermark rows)", "scripted")],
                                   description="watermark", style=STYLE, layout=wide())
        self.delay = _slider("delay (s)", max_delay)
        self.bound = W.FloatText(value=0.0, step=0.5, description="bound L (s)", style=STYLE, layout=wide())
        self.allowed = _slider("allowed lateness", max_delay)
        self.late = W.Dropdown(options=[("side output", "side-output"), ("drop", "drop")], description="late events",
                               style=STYLE, layout=wide())
        self.rule = W.Dropdown(options=[("window already closed", "window"), ("timestamp < watermark", "timestamp")],
                               description="late when", style=STYLE, layout=wide())
        self.idle = _slider("idle timeout (s)", 600.0, step=1.0)
        self.idle.tooltip = "flush a key's windows after this much silence; 0 = off"
        self.idle_clock = W.Dropdown(options=["processing", "event"], description="idle clock", style=STYLE, layout=wide())
        self.source_idle = W.FloatText(value=0.0, step=1.0, description="partition idle (s)", style=STYLE,
                                       layout=wide(), tooltip="a partition this long without events leaves the "
                                                              "watermark merge (Flink's withIdleness); 0 = off")
        self.window_kind = W.Dropdown(options=[k.value for k in WindowKind], description="window", style=STYLE,
                                      layout=wide())
        self.size = W.FloatText(value=10.0, description="size (s)", style=STYLE, layout=wide())
        self.slide = W.FloatText(value=10.0, description="slide (s)", style=STYLE, layout=wide())
        self.scope = W.Dropdown(options=[("one per key", "key"), ("one global", "global"),
                                         ("per partition, min", "partition-min"), ("per partition, max", "partition-max"),
                                         ("each partition its own", "partition")],
                                description="watermarks", style=STYLE, layout=wide())
        self.batches = W.Text(value="", placeholder="event | count:N | interval:5s | column",
                              description="micro-batches", style=STYLE, layout=wide())
        self.durations = {name: W.HTML(layout=W.Layout(flex="0 0 7em")) for name in self.SLIDERS}
        for name in self.SLIDERS:
            getattr(self, name).observe(self._say_durations, names="value")
        self._say_durations()
        self._shown = preset("voltsp")  # the config last shown: what no control shows comes from it
        self.preset.observe(self._name_the_delay, names="value")
        self._name_the_delay()
        self.rules = RuleControls()
        self.window_kind.observe(lambda change: self.rules.show_window(change["new"]), names="value")
        self.window_kind.observe(self._name_the_window, names="value")
        self._name_the_window()
        self.rules.show_window(self.window_kind.value)
        self.rules.show(self._shown.time)
        self.all = [self.preset, self.time_source, self.strategy, self.delay, self.bound, self.allowed, self.late,
                    self.rule, self.idle, self.idle_clock, self.window_kind, self.size, self.slide, self.scope,
                    self.source_idle, self.batches, *self.rules.widgets.values()]

    def _name_the_delay(self, _change: object = None) -> None:
        """In a preset whose one knob is the bound L of ``max seen − L`` (003's textbook, Bytewax's wait), the delay
        slider *is* L: it says so, and the bound box, which it overrides, is hidden rather than left showing a
        value that does nothing."""
        is_bound = PRESETS[self.preset.value].delay_field == "bound"
        self.delay.description = "delay = L (s)" if is_bound else "delay (s)"
        self.bound.layout.display = "none" if is_bound else None

    def _name_the_window(self, _change: object = None) -> None:
        """The two window boxes say what they are for the kind picked, in the words of its --window: a session's
        gap, a cumulate window's step (Flink SQL's CUMULATE(size, step)), Kafka Streams' time difference D
        (SlidingWindows.ofTimeDifferenceAndGrace). Under cumulate the box read "slide", which a cumulate window does
        not do: its windows share a start and grow by the step."""
        kind = WindowKind(self.window_kind.value)
        self.size.description = {WindowKind.SESSION: "gap (s)",
                                 WindowKind.KSTREAMS_SLIDING: "difference (s)"}.get(kind, "size (s)")
        self.slide.description = "step (s)" if kind is WindowKind.CUMULATE else "slide (s)"

    def box(self) -> W.VBox:
        """Every control but the sliders (``sliders_box``) and the engine rules' (under them, collapsed)."""
        rules = set(self.rules.widgets.values())
        shown = [w for w in self.all if w not in rules and self.slider_name(w) is None]
        return W.VBox([W.HTML("<b>Time configuration</b>"), *shown, self.rules.box],
                      layout=W.Layout(width=COLUMN_WIDTH, min_width=COLUMN_WIDTH))

    def sliders_box(self) -> W.VBox:
        """The sliders, one a row as wide as the figure under them, each with its value as a duration: the knobs
        moved while watching the two clocks sit right above them, with a track long enough to drag."""
        return W.VBox([W.HBox([getattr(self, name), self.durations[name]], layout=W.Layout(width="100%"))
                       for name in self.SLIDERS], layout=W.Layout(width="100%"))

    def _say_durations(self, _change: object = None) -> None:
        """Each slider's value as a duration beside its seconds ("5 min 16 s"): a trace's delays run to
        minutes, and 316.0 is not read at a glance."""
        for name in self.SLIDERS:
            seconds = getattr(self, name).value
            words = "off" if name == "idle" and seconds == 0 else human_duration(round(seconds * S))
            self.durations[name].value = f"<span style='color:#555'>{words}</span>"

    SLIDERS = ("delay", "allowed", "idle")

    def config(self, **slider_values: float) -> RunConfig:
        """The RunConfig the widgets describe; an InputError names the control that is off.

        ``slider_values`` (e.g. ``delay=5.5``) stand in for those sliders' current values. The engine rules
        (heartbeat, schedule, Flink's, Beam's, Storm's, Bytewax's and Spark's own rules) come from their controls
        in ``rules``.
        """
        return config_of(self.values(), **slider_values)

    def values(self) -> ControlValues:
        """Every control's value now (kernel's thread): what ``config_of`` computes a config from elsewhere."""
        names = {*_READ, *(spec.control for spec in TIME_FIELDS if spec.control)}
        return ControlValues({name: getattr(self, name).value for name in names},
                             {name: widget.value for name, widget in self.rules.widgets.items()}, self._shown)

    def neighbours(self, slider: str, direction: int = 1, steps: tuple[int, ...] = (1, 2, -1)) -> list[float]:
        """The values ``steps`` steps along ``slider`` in ``direction`` (one and two on, then one back), within
        its range: where a slider that is being moved goes next (``config(**{slider: value})`` for each)."""
        widget = getattr(self, slider)
        values = [widget.value + k * direction * widget.step for k in steps]
        return [v for v in values if widget.min <= v <= widget.max]

    def slider_name(self, widget: object) -> str | None:
        return next((name for name in self.SLIDERS if getattr(self, name) is widget), None)

    def show(self, config: RunConfig) -> None:
        """Fill the widgets from a config (e.g. when a preset is picked)."""
        self._shown = config
        self.preset.value = config.preset
        for spec in TIME_FIELDS:
            if spec.control and spec.name != "delay":
                getattr(self, spec.control).value = _to_widget(spec, getattr(config.time, spec.name))
        self.rules.show(config.time)
        self.delay.value = delay_of(config) / S
        self.window_kind.value = config.window.kind.value
        self.size.value = (config.window.gap if config.window.kind is WindowKind.SESSION else config.window.size) / S
        self.slide.value = config.window.slide / S
        self.batches.value = str(config.batches) if config.batches else ""


def config_of(values: ControlValues, **slider_values: float) -> RunConfig:
    """The RunConfig of ``values`` (``Controls.config``), with ``slider_values`` standing in for those sliders'."""
    unknown = set(slider_values) - set(Controls.SLIDERS)
    if unknown:
        raise ValueError(f"not a slider: {', '.join(sorted(unknown))}")
    read = values.widgets
    kind = WindowKind(read["window_kind"])
    size, slide = round(read["size"] * S), round(read["slide"] * S)
    if size <= 0 or (kind in (WindowKind.SLIDING, WindowKind.CUMULATE) and slide <= 0):
        raise InputError("window size, slide and gap must be positive")
    base = values.shown if values.shown.preset == read["preset"] else preset(read["preset"])
    # no control moves the offset: the one of the config shown (a YAML's, a --window's) stays
    offset = base.window.offset if base.window.kind is not WindowKind.SESSION else 0
    if kind is WindowKind.TUMBLING:
        window = WindowSpec(kind, size=size, slide=size, offset=offset)
    elif kind is WindowKind.KSTREAMS_SLIDING:  # the size box is its time difference; records make its windows
        window = WindowSpec(kind, size=size, slide=size)
    elif kind in (WindowKind.SLIDING, WindowKind.CUMULATE):  # cumulate: the slide box is its step
        window = WindowSpec(kind, size=size, slide=slide, offset=offset)
    else:
        window = WindowSpec(kind, gap=size)
    batches = BatchSpec.parse(read["batches"]) if read["batches"].strip() else None
    changes = {spec.name: _from_widget(spec, slider_values.get(spec.control, read[spec.control]))
               for spec in TIME_FIELDS if spec.control and spec.name != "delay"}
    changes.update(rules_from(values.rules))
    config = replace(base, window=window, batches=batches or base.batches).with_time(**changes)
    return apply_delay(config, round(slider_values.get("delay", read["delay"]) * S))


def _from_widget(spec: TimeField, value: Any) -> Any:
    """A control's value as the field's: enums by value, durations from seconds (0 = off where allowed)."""
    if spec.values is None:
        return None if spec.optional and value <= 0 else round(value * S)
    return spec.values(value)


def _to_widget(spec: TimeField, value: Any) -> Any:
    if spec.values is None:
        return (value or 0) / S
    return value.value
