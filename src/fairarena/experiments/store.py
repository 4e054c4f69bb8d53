"""Deprecated: moved to :mod:`fairarena.sweep.store`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.sweep.store``."""

import sys

from fairarena.sweep import store as _module

sys.modules[__name__] = _module
