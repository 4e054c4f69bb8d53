"""Deprecated: moved to :mod:`fairarena.sweep.run`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.sweep.run``."""

import sys

from fairarena.sweep import run as _module

sys.modules[__name__] = _module
