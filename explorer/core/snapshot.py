"""An engine's whole state as plain JSON, for Spark's state store.

The Spark runner keeps each state group's :class:`~explorer.core.engine.Engine` between micro-batches. Kept as a
pickle, a checkpoint on shared storage would be a way to run code: unpickling calls whatever the bytes name.
This format names only the core's own classes, the config's records and enums, and Python's containers; reading
it creates objects of those classes and sets their fields, and calls nothing else.

The state is an object graph (a window sits in its key's table and in the firing heap; the store holds bound
methods of the lateness rule), so every object and container is written once with a number and later met as a
reference, and reading it gives the same sharing back. Tags: ``O`` object, ``R`` reference, ``L`` list,
``T`` tuple, ``S`` set, ``D`` dict (as pairs: keys need not be text), ``E`` enum member, ``M`` bound method,
``B`` builtin (min or max, the partition merge's pick). Anything else is refused when written, so a new kind
of state fails the round-trip tests rather than a checkpoint.
"""

from __future__ import annotations

import json
from enum import Enum
from types import BuiltinFunctionType, MethodType
from typing import Any

import numpy as np

from explorer import config
from explorer.core import engine, idleness, kstreams_sliding, records, result, rules, wakeups, watermarks, windows
from explorer.errors import InputError

_MODULES = (config, config.windows, engine, idleness, kstreams_sliding, records, result, rules, wakeups, watermarks,
            windows)
CLASSES: dict[str, type] = {f"{m.__name__}.{name}": c for m in _MODULES for name, c in vars(m).items()
                            if isinstance(c, type) and c.__module__ == m.__name__}
BUILTINS = {"min": min, "max": max}


def dumps(state: Any) -> str:
    """``state`` (an Engine) as JSON text."""
    return json.dumps(_Writer().write(state), separators=(",", ":"))


def loads(text: str) -> Any:
    """The object :func:`dumps` wrote. A document that names anything outside the allowed classes is refused."""
    try:
        return _Reader().read(json.loads(text))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise InputError(f"engine state in the checkpoint is not a state this version wrote: {error}") from None


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class _Writer:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # holds what was numbered, so no id() is reused while writing

    def _number(self, value: Any) -> int | None:
        """A new number for ``value``, or None when it was written already."""
        if id(value) in self.ids:
            return None
        self.ids[id(value)] = len(self.ids)
        self.keep.append(value)
        return self.ids[id(value)]

    def write(self, value: Any) -> Any:
        if isinstance(value, Enum):  # before str and int: the config's enums are str enums
            return {"E": _name(type(value)), "v": value.value}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value)
        if isinstance(value, tuple):
            return {"T": [self.write(v) for v in value]}
        if isinstance(value, MethodType):
            return {"M": value.__func__.__name__, "of": self.write(value.__self__)}
        if isinstance(value, BuiltinFunctionType) and BUILTINS.get(name := value.__name__) is value:
            return {"B": name}
        if id(value) in self.ids:
            return {"R": self.ids[id(value)]}
        if isinstance(value, (list, set, dict)):
            n = self._number(value)
            if isinstance(value, dict):
                return {"D": [[self.write(k), self.write(v)] for k, v in value.items()], "id": n}
            return {"L" if isinstance(value, list) else "S": [self.write(v) for v in value], "id": n}
        cls = type(value)
        if CLASSES.get(_name(cls)) is not cls:
            raise TypeError(f"{_name(cls)} is not part of an engine's plain state")
        n = self._number(value)
        return {"O": _name(cls), "id": n, "f": {k: self.write(v) for k, v in vars(value).items()}}


class _Reader:
    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}

    def read(self, node: Any) -> Any:
        if not isinstance(node, dict):
            if isinstance(node, list):
                raise TypeError("a bare list")
            return node
        if "R" in node:
            return self.objects[node["R"]]
        if "T" in node:
            return tuple(self.read(v) for v in node["T"])
        if "E" in node:
            cls = CLASSES[node["E"]]
            if not issubclass(cls, Enum):
                raise TypeError(f"{node['E']} is not an enum")
            return cls(node["v"])
        if "B" in node:
            return BUILTINS[node["B"]]
        if "M" in node:
            owner = self.read(node["of"])
            method = getattr(type(owner), node["M"])
            if not callable(method) or node["M"].startswith("_"):
                raise TypeError(f"{node['M']} is not a method")
            return MethodType(method, owner)
        if "L" in node or "S" in node:
            items: Any = [] if "L" in node else set()
            self.objects[node["id"]] = items
            for v in node["L"] if "L" in node else node["S"]:
                (items.append if "L" in node else items.add)(self.read(v))
            return items
        if "D" in node:
            table: dict[Any, Any] = {}
            self.objects[node["id"]] = table
            for k, v in node["D"]:
                table[self.read(k)] = self.read(v)
            return table
        cls = CLASSES[node["O"]]
        if issubclass(cls, Enum):
            raise TypeError(f"{node['O']} is an enum")
        obj = object.__new__(cls)
        self.objects[node["id"]] = obj
        vars(obj).update({k: self.read(v) for k, v in node["f"].items()})
        return obj
