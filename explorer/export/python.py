"""Export snippets for the engines configured in Python: PyFlink and Beam's Python SDK (PySpark's and Bytewax's are
whole programs: ``spark_job``, ``bytewax_job``).
"""

from __future__ import annotations


from explorer.config import LatePolicy, RunConfig, WindowKind
from explorer.export.common import (DEFAULT_SOURCE, MS, ExportSource, beam_window_fn, comment, unsupported,
                                    watermark_lag)
from explorer.timeutil import format_duration

def pyflink(config: RunConfig, source: ExportSource = DEFAULT_SOURCE) -> str:
    t = config.time
    lag = watermark_lag(config)

    def ms(micros: int) -> str:
        return f"Duration.of_millis({micros // MS})"

    assigner = {WindowKind.TUMBLING: f"TumblingEventTimeWindows.of(Time.milliseconds({config.window.size // MS}))",
                WindowKind.SLIDING: f"SlidingEventTimeWindows.of(Time.milliseconds({config.window.size // MS}), "
                                    f"Time.milliseconds({config.window.slide // MS}))",
                WindowKind.SESSION: f"EventTimeSessionWindows.with_gap(Time.milliseconds({config.window.gap // MS}))"}
    lines = ["late = OutputTag('late', Types.PICKLED_BYTE_ARRAY())",
             f"watermarks = (WatermarkStrategy.for_bounded_out_of_orderness({ms(lag)})",
             f"              .with_timestamp_assigner(EventTimestamps('{source.event_time}'))"]
    if t.source_idle_timeout is not None:
        lines.append(f"              .with_idleness({ms(t.source_idle_timeout)})")
    lines[-1] += ")"
    chain = ["stream.assign_timestamps_and_watermarks(watermarks)",
             f".key_by(lambda e: {f'e.{source.key}' if source.key else '0'})",
             f".window({assigner[config.window.kind]})"]
    if t.allowed_lateness:
        chain.append(f".allowed_lateness({t.allowed_lateness // MS})")
    if t.late_policy is LatePolicy.SIDE_OUTPUT:
        chain.append(".side_output_late_data(late)")
    chain.append(".reduce(lambda a, b: a + b)")
    lines.append("counts = (" + "\n          ".join(chain) + ")")
    notes = unsupported(config, "PyFlink", {"allowed", "side_output", "per_element"})
    return comment("#", notes) + "\n".join(lines) + "\n"


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
