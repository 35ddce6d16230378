"""The exported Beam Python program's early timer (``export/beam_job.py`` puts it in at ``{EARLY_DUE}``): when a
pane's early timer is due, and, for ``--early-aligned-to``, the trigger that sets it there, since Beam Python has no
``alignedTo``. A module of its own: the program's text is beam_job's, and this part is the aligned trigger's."""

EARLY_DUE = '''
def early_due(arrival):
    """When the early timer of a pane whose first element arrives at ``arrival`` (µs) is due: EARLY_US later, or
    with ALIGNED_US at Beam Java's alignedTo(EARLY_US, ALIGNED_US) of it (AlignFn: Java's remainder takes the
    dividend's sign, so from before the offset it is the second multiple after it)."""
    if ALIGNED_US is None:
        return arrival + EARLY_US
    since = arrival - ALIGNED_US
    m = since % EARLY_US if since >= 0 else -(-since % EARLY_US)
    return arrival if m == 0 else arrival + EARLY_US - m


class AlignedAfterProcessingTime(trigger.AfterProcessingTime):
    """Beam Java's AfterProcessingTime.pastFirstElementInPane().alignedTo(EARLY_US, ALIGNED_US), which Beam Python
    lacks: AfterProcessingTime with its timer at early_due of the pane's first element's arrival, on the program's
    clock (CLOCK_SCALE µs per µs of arrival time since ``first``, the first arrival)."""

    def __init__(self, first):
        super().__init__()
        self.first = first

    def on_element(self, element, window, context):
        if not context.get_state(self.STATE_TAG):
            arrival = self.first + round(context.get_current_time() * 1_000_000 / CLOCK_SCALE)
            context.set_timer("", TimeDomain.REAL_TIME,
                              (early_due(arrival) - self.first) * CLOCK_SCALE / 1_000_000)
        context.add_state(self.STATE_TAG, True)
'''
