# ruff: noqa: E402  (the extra is looked for before anything that needs it is imported)
"""obelisk.testing: Hypothesis strategies and test doubles for plans and tools (docs/testing.md).

Needs the ``testing`` extra (``pip install 'obelisk[testing]'``): Hypothesis and
hypothesis-jsonschema.  Without them, importing this package raises
:class:`~obelisk.errors.MissingDependencyError` naming the extra.  ``import
obelisk`` never imports it.

Strategies: :func:`plans`, :func:`invalid_plans`, :func:`inputs`,
:func:`tool_outputs`, :func:`outcome_assignments`, :func:`references`,
:func:`expressions`, :func:`spellings`.  Doubles: :class:`FakeTools`,
:class:`RecordingSubscriber`, :class:`ScriptedModel`.  The pytest plugin
(fixtures ``obelisk_tools``, ``obelisk_fake_tools``, ``obelisk_events``;
Hypothesis profiles ``obelisk-dev`` and ``obelisk-ci``) loads by itself.
"""

import importlib.util
import sys

from obelisk.errors import MissingDependencyError


def _missing(name: str) -> bool:
    """True when ``name`` cannot be imported; hypothesis_jsonschema is only looked
    for, not imported (its import reads Hypothesis's unicode tables, which pytest
    warns about while plugins load)."""
    if name in sys.modules:
        return sys.modules[name] is None
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


if _missing("hypothesis") or _missing("hypothesis_jsonschema"):
    raise MissingDependencyError(
        "obelisk.testing needs Hypothesis and hypothesis-jsonschema, the 'testing' extra: "
        "pip install 'obelisk[testing]' (from a clone: pip install '.[testing]')"
    ) from None

from obelisk.models.scripted import ScriptedModel as ScriptedModel
from obelisk.public_module import report_public_module as _report_public_module
from obelisk.testing.assignments import OutcomeAssignment as OutcomeAssignment
from obelisk.testing.assignments import outcome_assignments as outcome_assignments
from obelisk.testing.doubles import FakeToolError as FakeToolError
from obelisk.testing.doubles import FakeTools as FakeTools
from obelisk.testing.doubles import RecordingSubscriber as RecordingSubscriber
from obelisk.testing.expressions import expressions as expressions
from obelisk.testing.expressions import references as references
from obelisk.testing.expressions import spellings as spellings
from obelisk.testing.invalid import INVALID_CODES as INVALID_CODES
from obelisk.testing.invalid import InvalidPlan as InvalidPlan
from obelisk.testing.invalid import invalid_plans as invalid_plans
from obelisk.testing.plans import ERROR_ARM_SCHEMA as ERROR_ARM_SCHEMA
from obelisk.testing.plans import GeneratedPlan as GeneratedPlan
from obelisk.testing.plans import plans as plans
from obelisk.testing.values import inputs as inputs
from obelisk.testing.values import tool_outputs as tool_outputs

__all__ = [
    "ERROR_ARM_SCHEMA",
    "FakeToolError",
    "FakeTools",
    "GeneratedPlan",
    "INVALID_CODES",
    "InvalidPlan",
    "OutcomeAssignment",
    "RecordingSubscriber",
    "ScriptedModel",
    "expressions",
    "inputs",
    "invalid_plans",
    "outcome_assignments",
    "plans",
    "references",
    "spellings",
    "tool_outputs",
]

# public names report their public module (src/obelisk/public_module.py): obelisk's
# own (ScriptedModel) "obelisk", the others "obelisk.testing"
_report_public_module(globals(), ["ScriptedModel"], "obelisk")
_report_public_module(globals(), [n for n in __all__ if n != "ScriptedModel"], __name__)
