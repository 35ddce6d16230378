"""The engine rules a preset sets beyond the main knobs, one control each, built from ``TIME_FIELDS``.

A preset is data: Flink's "side output only when every window refused it", Beam's "kept at exactly
end + allowed lateness", Spark's whole-millisecond watermark, Bytewax's forgotten clock... Each is a
TimeConfig field the CLI and YAML already set. Here they get a control too, so a user can switch one rule of an
engine off and see what it alone changes. The controls come from the same table as the CLI's options (name,
help, values), so a new field gets its control without code here: a choice is a dropdown, a yes/no a checkbox,
a duration a text box read as ``--heartbeat`` reads it ("60s", "1ms").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from explorer.config import TIME_FIELDS, TimeConfig, TimeField

RULE_FIELDS: tuple[TimeField, ...] = tuple(spec for spec in TIME_FIELDS if spec.control is None)
STYLE = {"description_width": "14em"}
MARGIN_PX = 2  # ipywidgets' margin around each control, on each side
FILL = f"calc(100% - {2 * MARGIN_PX}px)"  # a control as wide as its box: at 100% its margins ran past it


class RuleControls:
    """One widget per rule field (``widgets``, by field name), in a collapsed accordion (``box``)."""

    def __init__(self) -> None:
        self.widgets: dict[str, W.Widget] = {spec.name: _widget_for(spec) for spec in RULE_FIELDS}
        self.box = W.Accordion(children=[W.VBox(list(self.widgets.values()))], selected_index=None)
        self.box.set_title(0, "engine rules (set by the preset)")

    def values(self) -> dict[str, Any]:
        """The TimeConfig fields as the widgets say; an InputError names the option of one that is off."""
        return rules_from({name: widget.value for name, widget in self.widgets.items()})

    def show(self, time: TimeConfig) -> None:
        for spec in RULE_FIELDS:
            value = getattr(time, spec.name)
            self.widgets[spec.name].value = value if spec.values is bool else spec.to_text(value)

    def show_window(self, kind: str) -> None:
        """A rule that changes nothing for this window kind (sessions' rules under a tumbling window) is hidden;
        its value is kept."""
        for spec in RULE_FIELDS:
            self.widgets[spec.name].layout.display = None if kind in spec.windows else "none"


def rules_from(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The TimeConfig fields of the widgets' raw values (by field name), as ``RuleControls.values`` reads them."""
    return {spec.name: _read(spec, raw[spec.name]) for spec in RULE_FIELDS}


def _label(spec: TimeField) -> str:
    return spec.option.replace("_", " ")


def _widget_for(spec: TimeField) -> W.Widget:
    # the accordion's box less each widget's 2 px margins: at 29em the rules ran 23 px past its padding in the 30em
    # controls column, under a scroll bar that, once scrolled, cut the checkboxes off (seen in Chromium at 1280 px)
    layout = W.Layout(width=FILL)
    if spec.values is bool:
        return W.Checkbox(value=False, description=_label(spec), indent=False, tooltip=spec.help, layout=layout)
    if spec.values is None:
        return W.Text(value="", description=_label(spec), tooltip=spec.help, style=STYLE, layout=layout,
                      continuous_update=False)  # read once typed (Enter or leaving the box), not per keystroke
    return W.Dropdown(options=spec.choices, description=_label(spec), tooltip=spec.help, style=STYLE, layout=layout)


def _read(spec: TimeField, value: Any) -> Any:
    return bool(value) if spec.values is bool else spec.parse(value)
