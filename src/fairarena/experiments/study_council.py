"""Deprecated: moved to :mod:`fairarena.study.council`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.council``."""

import sys

from fairarena.study import council as _module

sys.modules[__name__] = _module
