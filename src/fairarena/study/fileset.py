"""Write a set of files into one folder as a set: all of them or none (``study tables``).

:func:`write_file_set` renders nothing itself: it takes every file's final text, so a failure while the
tables are computed or rendered never touches the folder. The texts are written into a temporary folder
beside the destination (same directory, hence the same file system), then moved in one by one with
``os.replace``; the files they replace are first moved aside into the same temporary folder. A failure
while moving puts every replaced file back and removes the new ones, so the folder holds the old set
again; the temporary folder is removed either way. Files of the folder that the set does not name are
left alone.

What is not covered: a process killed (``kill -9``, power loss) in the middle of the moves leaves a mix
of old and new files and a dot-named ``.fileset-*`` folder beside the destination holding the old ones.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["write_file_set"]


def write_file_set(out: str | os.PathLike[str], files: Mapping[str, str]) -> list[Path]:
    """Write ``files`` (file name -> text, UTF-8) into folder ``out`` as a set (module doc); return the
    paths in the order given. A name must be a plain file name (no folder part)."""
    out = Path(out)
    for name in files:
        if not name or Path(name).name != name or name.startswith("."):
            raise ValueError(f"not a plain file name: {name!r}")
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".fileset-{out.name}-", dir=out.parent))
    try:
        new = stage / "new"
        old = stage / "old"
        new.mkdir()
        old.mkdir()
        for name, text in files.items():
            try:
                with open(new / name, "w", encoding="utf-8") as fh:
                    fh.write(text)
                    fh.flush()
                    os.fsync(fh.fileno())
            except OSError as exc:  # a full disk: name the file of the set, not the temporary folder
                raise OSError(exc.errno, exc.strerror, str(out / name)) from None
        moved_aside: list[str] = []
        placed: list[str] = []
        try:
            for name in files:
                dest = out / name
                if dest.exists():
                    os.replace(dest, old / name)
                    moved_aside.append(name)
                os.replace(new / name, dest)
                placed.append(name)
        except BaseException:
            for name in placed:                      # the new files out ...
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(out / name)
            for name in moved_aside:                 # ... the old ones back
                os.replace(old / name, out / name)
            raise
        with contextlib.suppress(OSError):
            fd = os.open(out, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in files]
