"""Time arithmetic shared by the tools, the predicates and the generator.

The domain clock is fixed (`NOW`) so every run sees the same "future". Appointments occupy whole
30-minute slots: a 60-minute visit at 10:00 needs the 10:00 and 10:30 slots.
"""

from __future__ import annotations

import datetime as dt
import re

NOW = "2025-03-10T09:00:00"
SLOT_MINUTES = 30
CANCELLATION_WINDOW_HOURS = 24
DURATIONS = (30, 60)
FORMAT = "%Y-%m-%dT%H:%M:%S"
# The shapes `strptime` is asked for, written out in ASCII digits: a text of one of them is read by
# `fromisoformat` (40 times faster), whose value is then `strptime`'s; any other text, or a value
# out of range, goes to `strptime`, which answers (or refuses) as it always has.
_SECONDS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")
_MINUTES = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}")


def _iso(shape: re.Pattern[str], text: str) -> dt.datetime | None:
    if shape.fullmatch(text):
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            pass
    return None


def parse(text: str) -> dt.datetime:
    return _iso(_SECONDS, text) or dt.datetime.strptime(text, FORMAT)


def fmt(moment: dt.datetime) -> str:
    # isoformat writes FORMAT's text for a naive time without microseconds from the year 1000 on
    # (strftime writes earlier years without their leading zeros)
    if moment.year >= 1000 and not moment.microsecond and moment.tzinfo is None:
        return moment.isoformat()
    return moment.strftime(FORMAT)


def normalise(text: str) -> str:
    """`2025-03-12T10:00` or `2025-03-12 10:00:00` → `2025-03-12T10:00:00`; ValueError otherwise."""
    cleaned = text.strip().replace(" ", "T")
    moment = _iso(_SECONDS, cleaned) or _iso(_MINUTES, cleaned)
    if moment is not None:
        return fmt(moment)
    for pattern in (FORMAT, "%Y-%m-%dT%H:%M"):
        try:
            return fmt(dt.datetime.strptime(cleaned, pattern))
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not a date and time like 2025-03-12T10:00:00")


def slots_for(start: str, duration_minutes: int) -> list[str]:
    """The slot starts an appointment at `start` lasting `duration_minutes` occupies."""
    first = parse(start)
    count = max(1, -(-duration_minutes // SLOT_MINUTES))
    return [fmt(first + dt.timedelta(minutes=SLOT_MINUTES * i)) for i in range(count)]


def overlaps(start_a: str, minutes_a: int, start_b: str, minutes_b: int) -> bool:
    a0, b0 = parse(start_a), parse(start_b)
    a1 = a0 + dt.timedelta(minutes=minutes_a)
    b1 = b0 + dt.timedelta(minutes=minutes_b)
    return a0 < b1 and b0 < a1


def hours_between(earlier: str, later: str) -> float:
    return (parse(later) - parse(earlier)).total_seconds() / 3600
