"""Deprecated: moved to :mod:`fairarena.sweep.preflib_example`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.sweep.preflib_example``."""

import sys

from fairarena.sweep import preflib_example as _module

sys.modules[__name__] = _module
