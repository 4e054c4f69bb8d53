"""Deprecated: moved to :mod:`fairarena.study.noise`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.noise``."""

import sys

from fairarena.study import noise as _module

sys.modules[__name__] = _module
