"""Suite-wide settings. Property tests run derandomized (the same examples in every run: CI must not
flake on a draw no earlier run made); HYPOTHESIS_PROFILE=explore draws new examples, for local searching."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# tests/ on the path for the suite's shared helper modules (import_scan: the layer tests' one scanner);
# test modules are imported by path (--import-mode=importlib), so this adds no test module name to it
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
