"""Export snippets for the engines configured in Python: Beam's Python SDK (PySpark's, Bytewax's and PyFlink's are
whole programs: ``spark_job``, ``bytewax_job``, ``flink_job``).
"""

from __future__ import annotations


from explorer.config import RunConfig
from explorer.export.common import DEFAULT_SOURCE, ExportSource, beam_window_fn, comment, unsupported, watermark_lag
from explorer.timeutil import format_duration

def beam_python(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    """Beam's Python SDK: KafkaIO's limited-delay timestamp policy for the lag, WindowInto with the default
    trigger (a late pane per late element), the allowed lateness and the panes (accumulating, as the explorer's
    windows re-fire whole, or discarding)."""
    t = config.time
    lag = watermark_lag(config)
    key = f"e['{source.key}']" if source.key else "'all'"
    lines = ["import apache_beam as beam",
             "from apache_beam.transforms import trigger, window",
             f"# watermark = max event time seen − {format_duration(lag)}: in Java, KafkaIO's "
             "CustomTimestampPolicyWithLimitedDelay with that max delay",
             f"stamped = events | beam.Map(lambda e: window.TimestampedValue(e, e['{source.event_time}']))",
             "counts = (stamped",
             f"          | beam.Map(lambda e: ({key}, 1))",
             f"          | beam.WindowInto({beam_window_fn(config, lambda v: f'{v / 1e6:g}', java=False)},",
             "                           trigger=trigger.AfterWatermark(late=trigger.AfterCount(1)),",
             f"                           allowed_lateness={t.allowed_lateness / 1e6:g},",
             f"                           accumulation_mode=trigger.AccumulationMode.{t.panes.value.upper()})",
             "          | beam.CombinePerKey(sum))"]
    notes = unsupported(config, "Beam", {"allowed", "panes"})
    return comment("#", notes) + "\n".join(lines) + "\n"
