"""Suite-wide settings. Property tests run derandomized (the same examples in every run: CI must not
flake on a draw no earlier run made); HYPOTHESIS_PROFILE=explore draws new examples, for local searching."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
