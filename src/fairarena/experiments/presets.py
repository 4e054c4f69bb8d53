"""Deprecated: moved to :mod:`fairarena.sweep.presets`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.sweep.presets``."""

import sys

from fairarena.sweep import presets as _module

sys.modules[__name__] = _module
