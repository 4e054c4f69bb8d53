"""Shared helpers of the pb tests."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest


@pytest.fixture
def pb_file(tmp_path: Path) -> Callable[..., Path]:
    """``pb_file(text, name="e.pb")``: ``text`` written (UTF-8) to ``tmp_path / name``; returns the path."""
    def write(text: str, name: str = "e.pb") -> Path:
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return p

    return write
