"""Deprecated: moved to :mod:`fairarena.sweep.config`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.sweep.config``."""

import sys

from fairarena.sweep import config as _module

sys.modules[__name__] = _module
