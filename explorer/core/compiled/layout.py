"""Integer codes shared by the compiled evaluation and the Python that prepares and reads it.

numba compiles module-level ints as constants, so these names cost nothing inside the kernel.

The kernel's state is one int64 array (the arena, ``st.m``) plus a namedtuple of ints: the configuration,
the sizes, and where each table starts in the arena (``state.State``). One array, because numba passes each
array of a tuple with a reference-count update on every call: a state of 21 arrays cost 180 ns per call,
one array and a hundred ints cost 10.
"""

from explorer.core.rules import NONE as NONE  # ("no watermark yet", one definition for both engines)

NO_SCRIPTED = -(2**63)  # a batch without a scripted watermark (streams.batching.NO_SCRIPTED)

# --- the run's scalars: the first slots of the arena ---------------------------------------------------
SC_CLOCK = 0  # processing clock: last commit or heartbeat
SC_NOW = 1  # event clock: the processing time watermarks are read at
SC_HIGHEST = 2  # the highest merge leaf any partition has had (partition idleness: the merge when all are idle)
SC_FLOOR = 3  # partition idleness: the merged watermark so far (it never goes back)
SC_GLOBAL_MAX = 4  # newest event time of the whole stream (event-clock idleness)
SC_BATCH = 5  # batch number decisions are stamped with
SC_ALIVE = 6  # windows held in state
SC_MAX_OPEN = 7
SC_NODES = 8  # window-content nodes used
SC_WINDOWS = 9  # session windows allocated
SC_EMISSIONS = 10  # emissions recorded (counted past the table's end: see plan.run_kernel)
SC_TRACE = 11  # trace rows recorded (likewise)
SC_DIRTY = 12  # windows a late admission marked for re-emission in this batch
SC_PENDING = 13  # backlog: sources with a pending watermark
SC_TOUCHED_SOURCES = 14
SC_TOUCHED_GROUPS = 15
SC_IDLE_SIZE = 16
SC_DUE_SIZE = 17
SC_PART_HEAP_SIZE = 18  # partition idleness: entries in the heap of inactivity clocks
SC_PART_ACTIVE = 19  # partition idleness: partitions with a record since the last periodic emit (listed)
SC_PART_RESET = 20  # partition idleness: partitions without an inactivity clock, waiting for an emit without a record
SC_LAST_CHECK = 21  # partition idleness: the last periodic emit
SC_KPAIRS = 22  # Kafka Streams' sliding windows: (event, window) decisions recorded (counted past the table's end)
SC_KTAKEN = 23  # ... the windows the record being admitted took (st.taken)
SC_KFORWARD = 24  # ... the window it made from another's aggregate, or −1
SC_SLOTS = 25

# --- the partition merge's tree leaves (watermarks.merge_changed) -------------------------------------
NO_MARK_YET = -(2**63) + 1  # a partition without a watermark: below every mark (min picks it, max never)
ABSENT_FROM_MIN = 2**63 - 1  # an idle partition, or a padding leaf, in a min merge
ABSENT_FROM_MAX = -(2**63)  # likewise in a max merge

# --- emissions: EM_FIELDS ints per emission -----------------------------------------------------------
# EM_ROW: an UPDATE's own record (the row it carries), else −1
EM_KEY, EM_START, EM_END, EM_COUNT, EM_HEAD, EM_BATCH, EM_AT, EM_RAW, EM_REASON, EM_REVISION, EM_MAX_SEEN, EM_ROW = \
    range(12)
EM_FIELDS = 12

# --- Kafka Streams' sliding windows: KP_FIELDS ints per (event, window) decision --------------------------
KP_EVENT, KP_START, KP_END, KP_LATE, KP_ADMITTED = range(5)
KP_FIELDS = 5

# --- the watermark trace: TR_FIELDS ints per row (one per batch or heartbeat, and scope) -------------
TR_BATCH, TR_AT, TR_SOURCE, TR_RAW, TR_KIND = range(5)
TR_FIELDS = 5
TRACE_ALL_SOURCES = -1  # the merged row of a partition merge ("*")

REASON_WATERMARK, REASON_IDLE_TIMEOUT, REASON_LATE_UPDATE, REASON_END_OF_STREAM, REASON_UPDATE, REASON_TOMBSTONE = (
    0, 1, 2, 3, 4, 5)
KIND_COMMIT, KIND_HEARTBEAT, KIND_NO_DATA, KIND_IDLE_CHECK = 0, 1, 2, 3
STATUS_ON_TIME, STATUS_LATE_UPDATED, STATUS_REFUSED = 0, 1, 2
