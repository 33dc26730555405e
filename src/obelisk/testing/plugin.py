"""The pytest plugin of obelisk.testing: fixtures and Hypothesis profiles (docs/testing.md).

pytest loads it by itself through the ``pytest11`` entry point ``obelisk``
(:mod:`obelisk.pytest_plugin`, which stands in for it when the ``testing`` extra is
missing).  Fixtures:

- ``obelisk_tools``: your tools; override it in your ``conftest.py`` (it may
  return anything ``tools=`` takes).  The default fails the test, saying so.
- ``obelisk_registry``: ``obelisk_tools`` as an :class:`obelisk.Registry`.
- ``obelisk_fake_tools``: :class:`~obelisk.testing.FakeTools` over it (seed 0).
- ``obelisk_events``: a fresh :class:`~obelisk.testing.RecordingSubscriber`.

Hypothesis profiles, registered unless a profile of that name already exists
(yours win): ``obelisk-dev`` (50 examples, no deadline) and ``obelisk-ci`` (300
examples, no deadline, failure blobs printed).  Neither is loaded: choose one with
``--hypothesis-profile=obelisk-ci`` or ``settings.load_profile``.  Both suppress
the ``too_slow`` and ``data_too_large`` health checks, which 20-call plans trip.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.errors import InvalidArgument

from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.testing.doubles import FakeTools, RecordingSubscriber

__all__ = [
    "PROFILES",
    "obelisk_events",
    "obelisk_fake_tools",
    "obelisk_registry",
    "obelisk_tools",
    "register_profiles",
]

_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]
#: The settings of each profile the plugin registers.
PROFILES: dict[str, dict[str, Any]] = {
    "obelisk-dev": {"max_examples": 50, "deadline": None, "suppress_health_check": _SLOW},
    "obelisk-ci": {
        "max_examples": 300,
        "deadline": None,
        "print_blob": True,
        "suppress_health_check": _SLOW,
    },
}


def register_profiles() -> list[str]:
    """Register every profile of :data:`PROFILES` that is not registered yet;
    returns the names it registered."""
    made = []
    for name, options in PROFILES.items():
        try:
            settings.get_profile(name)
        except InvalidArgument:
            settings.register_profile(name, **options)
            made.append(name)
    return made


register_profiles()


@pytest.fixture
def obelisk_tools() -> Any:
    """Your tools, for the other obelisk fixtures: override this fixture in conftest.py."""
    pytest.fail(
        "the obelisk_tools fixture is not set: define it in your conftest.py, e.g.\n"
        "    @pytest.fixture\n"
        "    def obelisk_tools():\n"
        "        return [get_customer, send_email]",
        pytrace=False,
    )


@pytest.fixture
def obelisk_registry(obelisk_tools: ToolsLike) -> Registry:
    """``obelisk_tools`` as a :class:`obelisk.Registry`."""
    return Registry.coerce(obelisk_tools)


@pytest.fixture
def obelisk_fake_tools(obelisk_registry: Registry) -> FakeTools:
    """:class:`~obelisk.testing.FakeTools` over ``obelisk_tools`` (seed 0): same names
    and schemas, generated outputs, every call recorded."""
    return FakeTools(obelisk_registry, seed=0)


@pytest.fixture
def obelisk_events() -> RecordingSubscriber:
    """A fresh :class:`~obelisk.testing.RecordingSubscriber` to pass as ``on_event``."""
    return RecordingSubscriber()
