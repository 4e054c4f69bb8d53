"""Deprecated: moved to :mod:`fairarena.study.cli`. This old path is that very module (same objects,
no warning at import), kept for existing code; new code imports ``fairarena.study.cli``."""

import sys

from fairarena.study import cli as _module

sys.modules[__name__] = _module
