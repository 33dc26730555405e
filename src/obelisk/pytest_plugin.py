"""The ``pytest11`` entry point of obelisk: loads :mod:`obelisk.testing.plugin`.

pytest imports this module for every project that has obelisk installed.  With the
``testing`` extra it re-exports the plugin's fixtures and registers its Hypothesis
profiles (docs/testing.md).  Without it, pytest still starts: the fixtures exist,
and a test that asks for one fails with the
:class:`~obelisk.errors.MissingDependencyError` message naming the extra.
"""

from __future__ import annotations

from typing import Any

import pytest

from obelisk.errors import MissingDependencyError

try:
    from obelisk.testing.plugin import obelisk_events as obelisk_events
    from obelisk.testing.plugin import obelisk_fake_tools as obelisk_fake_tools
    from obelisk.testing.plugin import obelisk_registry as obelisk_registry
    from obelisk.testing.plugin import obelisk_tools as obelisk_tools
except MissingDependencyError as missing:
    _MISSING = str(missing)

    def _unavailable() -> Any:
        pytest.fail(_MISSING, pytrace=False)

    @pytest.fixture
    def obelisk_tools() -> Any:
        """Unavailable: the ``testing`` extra is not installed."""
        return _unavailable()

    @pytest.fixture
    def obelisk_registry() -> Any:
        """Unavailable: the ``testing`` extra is not installed."""
        return _unavailable()

    @pytest.fixture
    def obelisk_fake_tools() -> Any:
        """Unavailable: the ``testing`` extra is not installed."""
        return _unavailable()

    @pytest.fixture
    def obelisk_events() -> Any:
        """Unavailable: the ``testing`` extra is not installed."""
        return _unavailable()


__all__ = ["obelisk_events", "obelisk_fake_tools", "obelisk_registry", "obelisk_tools"]
