"""Deprecated: moved to :mod:`fairarena.study.design`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.design``."""

import sys

from fairarena.study import design as _module

sys.modules[__name__] = _module
