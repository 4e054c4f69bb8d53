"""Deprecated: moved to :mod:`fairarena.study.analysis`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.analysis``."""

import sys

from fairarena.study import analysis as _module

sys.modules[__name__] = _module
