"""Clock tools: the current time, date arithmetic and waiting.

Times are ISO 8601 text; results are in UTC with a ``Z`` suffix and millisecond
precision (``2024-05-01T12:30:00.000Z``).
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta, timezone

from obelisk.interpreter.tools.tool import Tool, standard_tool
from obelisk.stdlib_tools._common import one_line

__all__ = [
    "MAX_SLEEP",
    "TOOLS",
    "add_seconds",
    "now",
    "parse_time",
    "seconds_between",
    "sleep",
    "today",
    "utc_text",
]

MAX_SLEEP = 3600.0
_FRACTION = re.compile(r"(\d\d:\d\d:\d\d)\.(\d+)")


def utc_text(moment: datetime) -> str:
    """``moment`` in UTC as ISO 8601 with milliseconds and ``Z``."""
    text = moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """An aware datetime from ISO 8601 text (``Z`` allowed; no offset means UTC)."""
    cleaned = text.strip()
    if cleaned[-1:] in ("Z", "z"):
        cleaned = cleaned[:-1] + "+00:00"
    # Python 3.10 accepts only 3 or 6 fractional digits
    cleaned = _FRACTION.sub(lambda m: m[1] + "." + (m[2] + "000000")[:6], cleaned, count=1)
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(f"not an ISO 8601 date or date-time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


@standard_tool()
def now() -> str:
    """The current time in UTC, ISO 8601 with milliseconds ("2024-05-01T12:30:00.000Z")."""
    return utc_text(datetime.now(timezone.utc))


@standard_tool()
def today() -> str:
    """Today's date in UTC ("2024-05-01")."""
    return datetime.now(timezone.utc).date().isoformat()


@standard_tool(pure=True)
def seconds_between(start: str, end: str) -> float:
    """Seconds from ISO 8601 time `start` to `end` (negative when end is earlier; no offset
    means UTC). Bad text: ValueError."""
    return (parse_time(end) - parse_time(start)).total_seconds()


@standard_tool(pure=True)
def add_seconds(time: str, seconds: float) -> str:
    """ISO 8601 `time` moved by `seconds` (may be negative), in UTC with "Z". Bad text:
    ValueError."""
    try:
        return utc_text(parse_time(time) + timedelta(seconds=seconds))
    except OverflowError:
        raise OverflowError(f"{time} + {seconds} s is out of the supported range") from None


@standard_tool()
async def sleep(seconds: float) -> float:
    """Wait `seconds` (0 to 3600, fractions allowed), then return the seconds waited.
    Out of range: ValueError."""
    if not 0 <= seconds <= MAX_SLEEP:
        raise ValueError(f"seconds must be between 0 and {MAX_SLEEP:g}, got {seconds}")
    await asyncio.sleep(seconds)
    return float(seconds)


TOOLS: tuple[Tool, ...] = one_line(now, today, seconds_between, add_seconds, sleep)
