"""How the UI words counts and durations: a count with its noun in the right number ("1 revision", "2
revisions"), and a duration that is missing said in a word ("none", "never") rather than a bare "-"."""

from __future__ import annotations

from explorer.timeutil import human_duration


def plural(count: int, one: str, many: str | None = None) -> str:
    """``count`` and its noun: ``plural(1, "event")`` is "1 event", ``plural(2_000, "event")`` "2,000 events";
    ``many`` for a noun that does not take an "s" (``plural(2, "batch", "batches")``)."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def duration(micros: int | float | None, missing: str = "none") -> str:
    """A duration in words (``human_duration``), or ``missing`` when there is none (None or NaN)."""
    if micros is None or micros != micros:
        return missing
    return human_duration(micros)
