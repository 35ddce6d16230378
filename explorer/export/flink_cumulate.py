"""Flink SQL's CUMULATE windows in the Flink exports' DataStream programs (``flink_java_job``, ``flink_job``).

CUMULATE is a window table-valued function of Flink SQL with no DataStream assigner, and the exports are DataStream
jobs (their output contract, their side output, their replay): each program carries an assigner of its own that
assigns the windows flink-table-runtime's ``CumulativeWindowAssigner`` does, and Flink's window operator does the rest
as for any event-time window: a window takes an element until the watermark reaches its end, and a refused element
goes to the side output only when every window of it refused it. That is what Flink SQL's slicing operator gives (a
row whose slice has fired is merged into the windows still open, and dropped only once the last has fired), with a
side output SQL does not have.
"""

JAVA_CUMULATIVE_IMPORTS = """import java.util.Collection;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
"""

JAVA_CUMULATIVE_ASSIGNER = r"""
    /** Flink SQL's CUMULATE(step, size, offset) windows: [s, s + k * step) for k = 1 .. size / step, sharing the start
     *  s = offset + n * size, as flink-table-runtime's CumulativeWindowAssigner.assignWindows assigns them; each
     *  fires as an event-time window does (EventTimeTrigger). */
    public static class CumulativeEventTimeWindows extends WindowAssigner<Object, TimeWindow> {
        private final long size, step, offset;

        private CumulativeEventTimeWindows(long size, long step, long offset) {
            if (size <= 0 || step <= 0 || size % step != 0) {
                throw new IllegalArgumentException("CUMULATE needs step > 0 and a size a whole number of steps");
            }
            this.size = size;
            this.step = step;
            this.offset = offset;
        }

        public static CumulativeEventTimeWindows of(Duration size, Duration step, Duration offset) {
            return new CumulativeEventTimeWindows(size.toMillis(), step.toMillis(), offset.toMillis());
        }

        @Override
        public Collection<TimeWindow> assignWindows(Object element, long timestamp, WindowAssignerContext context) {
            List<TimeWindow> windows = new ArrayList<>();
            long start = TimeWindow.getWindowStartWithOffset(timestamp, offset, size);
            for (long end = TimeWindow.getWindowStartWithOffset(timestamp, offset, step) + step; end <= start + size;
                 end += step) {
                windows.add(new TimeWindow(start, end));
            }
            return windows;
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return EventTimeTrigger.create();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig executionConfig) {
            return new TimeWindow.Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }
"""

PYTHON_CUMULATIVE_ASSIGNER = r'''

class CumulativeEventTimeWindows(WindowAssigner):
    """Flink SQL's CUMULATE(step, size, offset) windows: [s, s + k * step) for k = 1 .. size / step, sharing the start
    s = offset + n * size, as flink-table-runtime's CumulativeWindowAssigner.assignWindows assigns them; each fires as
    an event-time window does (EventTimeTrigger)."""

    def __init__(self, size, step, offset):
        if size <= 0 or step <= 0 or size % step:
            raise ValueError("CUMULATE needs step > 0 and a size a whole number of steps")
        self._size, self._step, self._offset = size, step, offset

    @staticmethod
    def of(size, step, offset):
        return CumulativeEventTimeWindows(size.to_milliseconds(), step.to_milliseconds(), offset.to_milliseconds())

    def assign_windows(self, element, timestamp, context):
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        first_end = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._step) + self._step
        return [TimeWindow(start, end) for end in range(first_end, start + self._size + 1, self._step)]

    def get_default_trigger(self, env):
        return EventTimeTrigger()

    def get_window_serializer(self):
        return TimeWindowSerializer()

    def is_event_time(self):
        return True
'''
PYTHON_CUMULATIVE_IMPORTS = ("from pyflink.datastream.window import EventTimeTrigger, TimeWindow, TimeWindowSerializer, "
                             "WindowAssigner\n")
