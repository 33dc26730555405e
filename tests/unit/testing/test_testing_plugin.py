"""The pytest plugin of obelisk.testing, run in pytester sessions (docs/testing.md)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import obelisk
import pytest


@obelisk.tool
def greet(name: str) -> str:
    "Greet someone."
    return f"hello {name}"


@pytest.fixture
def obelisk_tools():
    return [greet]
"""


def test_the_fixtures_build_on_the_users_tools(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        import obelisk
        from obelisk.testing import FakeTools, RecordingSubscriber


        def test_fixtures(obelisk_tools, obelisk_registry, obelisk_fake_tools, obelisk_events):
            assert obelisk_registry.names() == ["greet"]
            assert isinstance(obelisk_fake_tools, FakeTools)
            assert isinstance(obelisk_events, RecordingSubscriber)
            plan = [{"_tool": "greet", "name": "ada", "_outputPath": "†state.g"}]
            result = obelisk.run_sync(plan, obelisk_fake_tools, on_event=obelisk_events)
            assert result.status == "completed"
            assert isinstance(result.state["g"], str)
            assert obelisk_fake_tools.calls == [("greet", {"name": "ada"})]
            assert obelisk_events.names()[-1] == "run_finished"
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_without_an_override_the_fixture_says_what_to_do(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_needs_tools(obelisk_fake_tools):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the obelisk_tools fixture is not set*conftest.py*"])


def test_the_profiles_can_be_chosen_on_the_command_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from hypothesis import HealthCheck, settings


        def test_profile():
            assert settings().max_examples == 300
            assert settings().deadline is None
            assert HealthCheck.too_slow in settings().suppress_health_check
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--hypothesis-profile=obelisk-ci"
    )
    result.assert_outcomes(passed=1)


def test_a_users_profile_of_the_same_name_is_kept() -> None:
    code = textwrap.dedent(
        """
        from hypothesis import settings
        settings.register_profile("obelisk-dev", max_examples=7)
        from obelisk.testing.plugin import register_profiles
        assert settings.get_profile("obelisk-dev").max_examples == 7
        assert register_profiles() == []
        assert settings.get_profile("obelisk-ci").max_examples == 300
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


# As if Hypothesis were not installed: every import of it fails.
BLOCK_HYPOTHESIS = """
import sys


class BlockHypothesis:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("hypothesis", "hypothesis_jsonschema"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, BlockHypothesis())
"""


def test_pytest_starts_without_hypothesis(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_HYPOTHESIS)
    monkeypatch.setenv("PYTHONPATH", str(site))
    pytester.makepyfile(
        """
        import sys


        def test_plain():
            assert "hypothesis" not in sys.modules


        def test_fixture_names_the_extra(obelisk_fake_tools):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, errors=1)
    assert "pip install 'obelisk[testing]'" in result.stdout.str()
