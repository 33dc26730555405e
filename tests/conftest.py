"""Shared pytest configuration: Hypothesis profiles.

Profiles:
    dev  50 examples, no deadline (the default)
    ci   300 examples, no deadline, random seeds, failure blobs printed

The profile named by ``HYPOTHESIS_PROFILE`` is loaded; without it, ``ci`` when the
``CI`` environment variable is set, otherwise ``dev``.

Integration tests (``@pytest.mark.integration("postgresql")``) need a real server or
browser. They run only where ``OBELISK_INTEGRATION=1`` (``.ci/run`` sets it for one run
of the suite, not for every Python version); elsewhere they are skipped with that reason,
which ``-ra`` prints. A test whose component cannot start skips itself with the reason.

Tests that run a benchmark script (the files of ``tests/integration`` whose names say
``benchmark``, and the competitors') carry the ``benchmark`` marker, added here. The
README's test command runs them; ``.ci/run``'s later runs of the suite (lowest versions,
other Pythons) leave them out with ``-m "not benchmark"``, since the benchmark scripts
are the team's tools and already ran in its first run.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=False, print_blob=True)


def _profile_name() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI") else "dev"


settings.load_profile(_profile_name())


def _runs_a_benchmark(item: pytest.Item) -> bool:
    name = item.path.name
    return item.path.parent.name == "integration" and (
        "benchmark" in name or name == "test_competitors.py"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the benchmark scripts' tests; skip integration tests, with the reason, unless
    ``OBELISK_INTEGRATION=1``."""
    for item in items:
        if _runs_a_benchmark(item):
            item.add_marker(pytest.mark.benchmark)
    if os.environ.get("OBELISK_INTEGRATION") == "1":
        return
    for item in items:
        marker = item.get_closest_marker("integration")
        if marker is not None:
            component = marker.args[0] if marker.args else "a server"
            item.add_marker(
                pytest.mark.skip(
                    reason=f"integration test ({component}): runs with OBELISK_INTEGRATION=1,"
                    " as .ci/run's first run of the suite does"
                )
            )
