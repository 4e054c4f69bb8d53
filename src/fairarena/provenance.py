"""What every run records beside its results: config, seed, package versions, git revision."""

from __future__ import annotations

import datetime as _dt
import functools
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

_PACKAGES = (
    "fairarena", "numpy", "scipy", "pandas", "pyarrow", "prefsampling", "preflibtools",
    "joblib", "dask", "distributed", "openai", "llama_cpp_python", "sentence-transformers",
    "chromadb", "torch",
)


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Installed versions of the packages that can change a result (missing ones are omitted).

    Looked up once per process (a study writing hundreds of records pays it once)."""
    return dict(_package_versions(tuple(extra)))


@functools.lru_cache(maxsize=8)
def _package_versions(extra: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {"python": sys.version.split()[0]}
    for name in _PACKAGES + tuple(extra):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_revision(start: Path | None = None) -> str | None:
    """The git commit of the source tree (with '+dirty' when it has local changes), else None.

    Looked up once per process and folder (it runs git twice)."""
    return _git_revision(Path(start or __file__).resolve().parent)


@functools.lru_cache(maxsize=8)
def _git_revision(here: Path) -> str | None:
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty else "")


def run_record(config: dict[str, Any] | None = None, seed: int | None = None, **extra: Any) -> dict[str, Any]:
    """A JSON-serialisable record of how a run was made: config, seed, versions, revision, platform,
    creation time (UTC) and any ``extra`` fields. The one provenance record of the package: every
    command and library writer calls this (versions and revision are cached per process)."""
    return {
        "config": config or {},
        "seed": seed,
        "versions": package_versions(),
        "revision": git_revision(),
        "platform": platform.platform(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **extra,
    }
