"""Deprecated: moved to :mod:`fairarena.study.store`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.store``."""

import sys

from fairarena.study import store as _module

sys.modules[__name__] = _module
