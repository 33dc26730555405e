"""Clock tools."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import datetime, timezone

import pytest

from obelisk.stdlib_tools import default_registry

R = default_registry()


def test_now_is_utc_iso_8601_with_z() -> None:
    before = datetime.now(timezone.utc)
    text = R["now"]()
    after = datetime.now(timezone.utc)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text)
    moment = datetime.fromisoformat(text[:-1] + "+00:00")
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= moment <= after
    assert R["now"].pure is False


def test_today() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", R["today"]())
    assert R["today"]() == datetime.now(timezone.utc).date().isoformat()


def test_seconds_between_and_add_seconds() -> None:
    assert R["seconds_between"]("2024-05-01T12:00:00Z", "2024-05-01T12:01:30.5Z") == 90.5
    assert R["seconds_between"]("2024-05-01T14:00:00+02:00", "2024-05-01T12:00:00") == 0.0
    assert R["seconds_between"]("2024-05-02", "2024-05-01") == -86400.0
    assert R["add_seconds"]("2024-05-01T23:59:30Z", 45) == "2024-05-02T00:00:15.000Z"
    assert R["add_seconds"]("2024-05-01T10:00:00+02:00", -0.25) == "2024-05-01T07:59:59.750Z"
    with pytest.raises(ValueError) as caught:
        R["seconds_between"]("yesterday", "2024-05-01")
    assert str(caught.value) == "not an ISO 8601 date or date-time: 'yesterday'"
    with pytest.raises(OverflowError, match="out of the supported range"):
        R["add_seconds"]("9999-12-31T23:59:59Z", 10)


def test_sleep_waits_and_returns_the_seconds() -> None:
    assert R["sleep"].is_async
    start = time.perf_counter()
    assert asyncio.run(R["sleep"](0.05)) == 0.05
    assert time.perf_counter() - start >= 0.04
    assert asyncio.run(R["sleep"](0)) == 0.0


@pytest.mark.parametrize("seconds", [-1, 3600.5])
def test_sleep_refuses_out_of_range(seconds: float) -> None:
    with pytest.raises(ValueError) as caught:
        asyncio.run(R["sleep"](seconds))
    assert str(caught.value) == f"seconds must be between 0 and 3600, got {seconds}"
