"""A VoltSP YAML file in, a RunConfig out (and a TimeConfig back out in VoltSP's words, for export).

A module of its own because reading a user's file is its own job: safe loading (size, encoding, alias bombs),
two document shapes (a bare ``timeConfig`` or a pipeline's ``emitter``), and messages that name the file and
the setting; the model it fills (``explorer.config``) knows nothing of files.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import yaml

from explorer.config import BatchSpec, RunConfig, TimeConfig, TimeSource, WindowKind, WindowSpec
from explorer.config.fields import TIME_FIELDS
from explorer.config.presets import preset
from explorer.errors import InputError
from explorer.timeutil import parse_duration

_WINDOW_SECTIONS = {
    "tumbling-time-window": WindowKind.TUMBLING,
    "sliding-time-window": WindowKind.SLIDING,
    "session-window": WindowKind.SESSION,
}
@dataclass(frozen=True)
class LoadedConfig:
    """A YAML file read into a RunConfig, plus the event-time column its eventTimeExtractor names."""

    config: RunConfig
    event_time_column: str | None


MAX_YAML_BYTES = 1024**2  # a timeConfig is a few hundred bytes; a pipeline file a few KB
MAX_YAML_NODES = 10_000  # counted with every alias expanded: a 1 KB "billion laughs" file is refused, not built
_SHORT_FORM_KEYS = ("timeConfig", "window", "batches", "preset")


def load_yaml_config(path: str | Path) -> LoadedConfig:
    """Read a VoltSP-style YAML: either a top-level ``timeConfig`` (with optional ``window``,
    ``batches``, ``preset``) or a pipeline's ``emitter: <window-type>: {..., timeConfig: ...}``."""
    try:
        return _config_from_doc(read_yaml(path), path)
    except InputError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(f"{path}:") else f"{path}: {message}") from None


def read_yaml(path: str | Path) -> Any:
    """A YAML document read safely: UTF-8/16/32 by its BOM, at most MAX_YAML_BYTES, and at most MAX_YAML_NODES
    nodes once aliases are expanded (checked on the composed graph, before any object is built)."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; give the YAML file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the config file ({exc.strerror})") from None
    if len(data) > MAX_YAML_BYTES:
        raise InputError(f"{path}: over {MAX_YAML_BYTES // 1024} KiB; a config file is a few KB")
    loader = None
    try:
        loader = yaml.SafeLoader(data)  # reads the encoding and the first characters: can fail already
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node, {}) > MAX_YAML_NODES:
            raise InputError(f"over {MAX_YAML_NODES:,} values once its aliases (*name) are expanded; a config file "
                             "is a few dozen")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc.__class__.__name__).split())
        raise InputError(f"{path}: not valid YAML{where} ({problem})") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a config file") from None
    finally:
        if loader is not None:
            loader.dispose()


def _expanded_nodes(node: yaml.Node, memo: dict[int, int | None]) -> int:
    """How many nodes the document has with every alias expanded (an alias shares its anchor's node object).
    Stops counting past the limit, so a bomb costs no more than the limit; a node inside itself counts as over."""
    key = id(node)
    if key in memo:
        counted = memo[key]
        return MAX_YAML_NODES + 1 if counted is None else counted
    memo[key] = None  # being counted: meeting it again means it contains itself
    total = 1
    children = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode)
                else node.value if isinstance(node, yaml.SequenceNode) else [])
    for child in children:
        total += _expanded_nodes(child, memo)
        if total > MAX_YAML_NODES:
            break
    memo[key] = total
    return total


def _mapping(value: Any, what: str) -> dict[str, Any]:
    """A YAML section that must be a mapping (empty when left blank)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a mapping of settings, not {type(value).__name__} {str(value)[:40]!r}")
    return value


def _unknown(key: Any, known: Sequence[str], where: str) -> InputError:
    close = difflib.get_close_matches(str(key), known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return InputError(f"unknown {where} setting {str(key)[:40]!r}{hint}; known: {', '.join(sorted(known))}")


def _config_from_doc(doc: Any, path: str | Path) -> LoadedConfig:
    doc = _mapping(doc, "the file")
    if not doc:
        raise InputError("expected a mapping with timeConfig or emitter")
    if "emitter" not in doc:  # the short form has nothing else in it: a misspelt key must not pass unseen
        for key in doc:
            if key not in _SHORT_FORM_KEYS:
                raise _unknown(key, [*_SHORT_FORM_KEYS, "emitter"], "top-level")
    base = preset(str(doc.get("preset", "voltsp")))
    window = base.window
    section: dict[str, Any] = doc
    if "emitter" in doc:
        emitter = _mapping(doc["emitter"], "emitter")
        found = [k for k in emitter if k in _WINDOW_SECTIONS]
        if len(found) != 1:
            raise InputError(f"emitter needs exactly one of {', '.join(_WINDOW_SECTIONS)}")
        section = _mapping(emitter[found[0]], f"emitter.{found[0]}")
        window = _window_from_voltsp(found[0], section, path)
    elif "window" in doc:
        window = WindowSpec.parse(doc["window"])
    time_section = _mapping(section.get("timeConfig"), "timeConfig")
    time, column = _time_from_voltsp(time_section, base.time, path)
    batches = BatchSpec.parse(doc["batches"]) if "batches" in doc else base.batches
    return LoadedConfig(RunConfig(window=window, time=time, batches=batches, preset=base.preset), column)


def _window_from_voltsp(kind_name: str, section: dict[str, Any], path: str | Path) -> WindowSpec:
    kind = _WINDOW_SECTIONS[kind_name]
    try:
        if kind is WindowKind.TUMBLING:
            size = parse_duration(section["windowSpan"])
            return WindowSpec(kind, size=size, slide=size)
        if kind is WindowKind.SLIDING:
            return WindowSpec(kind, size=parse_duration(section["windowSpan"]), slide=parse_duration(section["slide"]))
        return WindowSpec(kind, gap=parse_duration(section["gap"]))
    except KeyError as missing:
        raise InputError(f"{path}: {kind_name} needs {missing.args[0]}") from None


def _time_from_voltsp(section: dict[str, Any], base: TimeConfig, path: str | Path) -> tuple[TimeConfig, str | None]:
    by_word = {spec.yaml: spec for spec in TIME_FIELDS if spec.yaml}
    changes: dict[str, Any] = {}
    column = None
    extractor = section.get("eventTimeExtractor")
    if extractor:
        changes["time_source"] = TimeSource.EVENT
        column = str(extractor).split("::")[-1]
    elif section:
        changes["time_source"] = TimeSource.PROCESSING
    for key, value in section.items():
        if key == "eventTimeExtractor":
            continue
        if key not in by_word:
            raise _unknown(key, ["eventTimeExtractor", *by_word], "timeConfig")
        try:
            changes[by_word[key].name] = by_word[key].parse(value, f"timeConfig.{key}")
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
    try:
        return replace(base, **changes), column
    except InputError as exc:
        raise InputError(f"{path}: timeConfig: {exc}") from None


def time_config_to_voltsp(time: TimeConfig, event_time_column: str = "event_time") -> dict[str, Any]:
    """The inverse of the YAML reader, for export and round-trip tests: every setting that differs from
    VoltSP's defaults, in VoltSP's words."""
    out: dict[str, Any] = {}
    if time.time_source is TimeSource.EVENT:
        out["eventTimeExtractor"] = event_time_column
    defaults = TimeConfig()
    for spec in TIME_FIELDS:
        value = getattr(time, spec.name)
        wanted = spec.name == "strategy" and time.time_source is TimeSource.EVENT
        wanted = wanted or (spec.name == "idle_clock" and time.idle_timeout is not None)
        if spec.yaml and (wanted or value != getattr(defaults, spec.name)):
            words = {v: k for k, v in (spec.voltsp_words or {}).items()}
            out[spec.yaml] = words.get(value) or (value if spec.values is bool else spec.to_text(value))
    return out

