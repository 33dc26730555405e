"""Shared pytest configuration: Hypothesis profiles.

Profiles:
    dev  50 examples, no deadline (the default)
    ci   300 examples, no deadline, random seeds, failure blobs printed

The profile named by ``HYPOTHESIS_PROFILE`` is loaded; without it, ``ci`` when the
``CI`` environment variable is set, otherwise ``dev``.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=False, print_blob=True)


def _profile_name() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI") else "dev"


settings.load_profile(_profile_name())
