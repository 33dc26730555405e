"""Every example in a public docstring runs and gives what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import obelisk
from obelisk.errors import MissingDependencyError

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(obelisk.__path__, "obelisk.")
    if not name.endswith("__main__")
)


def _importable(name: str) -> bool:
    """Whether module ``name`` imports here: an adapter of an optional extra that is
    not installed (``litellm``) raises MissingDependencyError, by design."""
    try:
        importlib.import_module(name)
    except MissingDependencyError:
        return False
    return True


def test_some_modules_have_examples() -> None:
    with_examples = [
        name
        for name in MODULES
        if _importable(name)
        and any(t.examples for t in doctest.DocTestFinder().find(importlib.import_module(name)))
    ]
    assert {
        "obelisk.diagnostics",
        "obelisk.grammar.paths",
        "obelisk.interpreter.runtime.run",
    } <= set(with_examples)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    if not _importable(name):
        pytest.skip(f"{name} needs an optional extra that is not installed")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
