"""Deprecated: moved to :mod:`fairarena.study.traces`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.traces``."""

import sys

from fairarena.study import traces as _module

sys.modules[__name__] = _module
