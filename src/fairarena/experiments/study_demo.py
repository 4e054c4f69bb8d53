"""Deprecated: moved to :mod:`fairarena.study.demo`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.demo``."""

import sys

from fairarena.study import demo as _module

sys.modules[__name__] = _module
