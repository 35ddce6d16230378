"""The engine state the Spark runner keeps in Spark's state store is plain JSON: written and read back after
every batch it gives the same decisions as an engine never interrupted, for every kind of setting the property
tests draw; and a document that names anything but the core's own classes is refused, not run."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from explorer.core.assemble import batch_rows
from explorer.core.engine import Engine
from explorer.core.records import as_row
from explorer.core.snapshot import dumps, loads
from explorer.errors import InputError
from explorer.streams import batches_for

from strategies import examples, stream_and_config


def _rows(out) -> list:
    return [[as_row(r) for r in items] for items in (out.events, out.assignments, out.emissions, out.trace)] + \
        [out.open_windows]


@settings(max_examples=examples(150), deadline=None)
@given(stream_and_config())
def test_state_written_and_read_after_every_batch_changes_no_decision(case):
    stream, config = case
    partitions = stream.partitions
    steady, restored = Engine(config, partitions), Engine(config, partitions)
    for batch in batch_rows(stream, config):
        restored = loads(dumps(restored))
        assert _rows(restored.step(batch)) == _rows(steady.step(batch))
    batches = batches_for(stream, config)
    last, clock = len(batches.commit_time), int(batches.commit_time[-1])
    restored = loads(dumps(restored))
    assert _rows(restored.finish(last, clock)) == _rows(steady.finish(last, clock))


def test_sharing_survives_the_round_trip():
    """One window object sits in several tables; after reading, it is still one object."""
    from explorer import generate, preset

    stream = generate("voltsp", scenario=3)
    config = preset("voltsp")
    engine = Engine(config, stream.partitions)
    for batch in list(batch_rows(stream, config))[:5]:
        engine.step(batch)
    copy = loads(dumps(engine))
    assert copy.store.within_horizon.__self__ is copy.lateness  # a bound method of the same rule object
    assert copy.assigner.store is copy.store


@pytest.mark.parametrize("document", [
    {"O": "os._wrap_close", "id": 0, "f": {}},  # a class outside the core
    {"O": "builtins.object", "id": 0, "f": {}},
    {"B": "eval"},  # a builtin other than min/max
    {"M": "__init__", "of": {"O": "explorer.core.windows.Window", "id": 0, "f": {}}},  # a private method
    {"E": "explorer.core.windows.Window", "v": 1},  # not an enum
    [1, 2],
])
def test_a_document_naming_anything_else_is_refused(document):
    with pytest.raises(InputError, match="not a state this version wrote"):
        loads(json.dumps(document))


def test_state_outside_the_plain_classes_cannot_be_written():
    engine = Engine(__import__("explorer").preset("voltsp"), ["p"])
    engine.extra = lambda: None
    with pytest.raises(TypeError, match="not part of an engine's plain state"):
        dumps(engine)
