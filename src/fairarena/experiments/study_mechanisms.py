"""Deprecated: moved to :mod:`fairarena.study.mechanisms`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.mechanisms``."""

import sys

from fairarena.study import mechanisms as _module

sys.modules[__name__] = _module
