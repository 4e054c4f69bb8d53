"""Deprecated: moved to :mod:`fairarena.study.plan`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.plan``."""

import sys

from fairarena.study import plan as _module

sys.modules[__name__] = _module
