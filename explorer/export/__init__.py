"""A tuned configuration handed back in the user's own engine: a snippet carrying the window, delay /
lateness bound, allowed lateness, idle timeout and late-data handling, with a comment for every setting
the target cannot express (so nothing is silently lost in translation).

A snippet uses the user's own column names (``ExportSource``: the file's name for event time and key), and
the PySpark one is a whole program: ``python job.py EVENTS OUTDIR`` replays the user's file at the cadence the
prediction assumed and writes what Spark emitted (``spark_job``; ``explorer.verify`` runs it).

The snippets are one function per engine in ``jvm`` (VoltSP, Beam Java, Kafka Streams), and the whole programs one
module each (``spark_job``, ``bytewax_job``, ``beam_job``, ``flink_job`` for PyFlink, ``flink_java_job`` for Flink
Java), over what they share (``common``, ``replay``); this module names them (:data:`TARGETS`) and picks one
(:func:`export`).
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.config import RunConfig, WindowKind
from explorer.export.common import DEFAULT_SOURCE, ExportSource, comment, without_cumulate
from explorer.export.jvm import beam_java, kafka_streams_java, voltsp_java, voltsp_yaml
from explorer.export.beam_job import beam_job as beam_python
from explorer.export.bytewax_job import bytewax_job as bytewax
from explorer.export.flink_java_job import flink_java_job as flink_java
from explorer.export.flink_job import pyflink_job as pyflink
from explorer.export.spark_job import spark_job as pyspark

__all__ = ["DEFAULT_SOURCE", "TARGETS", "ExportSource", "beam_java", "beam_python", "bytewax", "export", "flink_java",
           "kafka_streams_java", "pyflink", "pyspark", "voltsp_java", "voltsp_yaml"]


TARGETS: dict[str, Callable[[RunConfig, ExportSource], str]] = {
    "voltsp-yaml": voltsp_yaml, "voltsp-java": voltsp_java, "flink-java": flink_java, "pyflink": pyflink,
    "pyspark": pyspark, "bytewax": bytewax, "beam-python": beam_python, "beam-java": beam_java,
    "kafka-streams-java": kafka_streams_java,
}


# the targets whose engine has no CUMULATE windows: the engine's name and how its language starts a comment
WITHOUT_CUMULATE = {"voltsp-yaml": ("VoltSP", "#"), "voltsp-java": ("VoltSP", "//"),
                    "pyspark": ("Spark Structured Streaming", "#"), "bytewax": ("Bytewax", "#"),
                    "beam-python": ("Beam", "#"), "beam-java": ("Beam", "//"),
                    "kafka-streams-java": ("Kafka Streams", "//")}


# the targets whose engine has no windows made by records' time differences (Kafka Streams' SlidingWindows)
WITHOUT_KSTREAMS_SLIDING = {**{t: v for t, v in WITHOUT_CUMULATE.items() if t != "kafka-streams-java"},
                            "flink-java": ("Flink", "//"), "pyflink": ("Flink", "#")}


def export(config: RunConfig, target: str, source: ExportSource = DEFAULT_SOURCE) -> str:
    """The snippet for ``target`` (one of :data:`TARGETS`), naming the columns as ``source`` does. Where the
    target's engine has no CUMULATE windows, its program runs their last, whole windows, and says so first; where
    it has no Kafka Streams sliding windows, tumbling windows of their time difference, and says so."""
    from explorer.errors import InputError

    if target not in TARGETS:
        raise InputError(f"unknown export target {target!r}; use one of {', '.join(TARGETS)}")
    if config.window.kind is WindowKind.CUMULATE and target in WITHOUT_CUMULATE:
        engine, prefix = WITHOUT_CUMULATE[target]
        config, notes = without_cumulate(config, engine)
        return comment(prefix, notes) + TARGETS[target](config, source)
    if config.window.kind is WindowKind.KSTREAMS_SLIDING and target in WITHOUT_KSTREAMS_SLIDING:
        engine, prefix = WITHOUT_KSTREAMS_SLIDING[target]
        config, notes = without_kstreams_sliding(config, engine)
        return comment(prefix, notes) + TARGETS[target](config, source)
    return TARGETS[target](config, source)


def without_kstreams_sliding(config: RunConfig, engine: str) -> tuple[RunConfig, list[str]]:
    """For a target whose engine has no windows its records make: the config its program runs instead, tumbling
    windows of the time difference (fixed windows of that length: no engine but Kafka Streams has a window per
    record), and the notes that say so."""
    from dataclasses import replace

    from explorer.config import WindowSpec
    from explorer.config.presets import what_if
    from explorer.export.common import what_if_note

    d = config.window.size
    tumbling = replace(config, window=WindowSpec(WindowKind.TUMBLING, size=d, slide=d))
    notes = [what_if_note(config, setting) for setting in what_if(config) if setting not in what_if(tumbling)]
    notes.append(f"{engine} has no windows made by records' time differences (Kafka Streams' {config.window}: "
                 f"SlidingWindows.ofTimeDifferenceAndGrace, a record's [t - D, t] and [t + 1, t + 1 + D]); the "
                 f"program runs {tumbling.window}, fixed windows of that length, and none of the windows records make")
    return tumbling, notes
