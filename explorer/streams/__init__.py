"""Events in, batches out: loading and validation, synthetic generators, micro-batching."""

from explorer.streams.batching import Batches, assign_batches, batches_for, default_batches
from explorer.streams.generators import GENERATORS, generate
from explorer.streams.loading import load_events, read_in_batches, stream_from_frame
from explorer.streams.stream import Stream

__all__ = ["Batches", "GENERATORS", "Stream", "assign_batches", "batches_for", "default_batches", "generate",
           "load_events", "read_in_batches", "stream_from_frame"]
