"""The provider SDKs are optional extras, imported only when their adapter is used
(issue 29, point 5; docs/install.md, "Extras")."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import obelisk
from obelisk.models import ScriptedModel, tool_calls
model = ScriptedModel([{"calls": [], "output": 1}])
assert obelisk.Loop(model, []).run_sync().output == 1
import obelisk.cli.loop
print(sorted(name for name in ("anthropic", "litellm", "openai") if name in sys.modules))
"""


def test_no_sdk_is_imported_until_its_adapter_is() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
