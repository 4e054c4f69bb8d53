"""Output on disk: atomic files and folders, and one run per output folder.

- Atomic writes: write to a hidden temporary name in the same directory, then ``os.replace``
  (atomic on POSIX), so nothing is ever left half-written. Temporary names are recognisable
  (``.NAME.XXXX.tmp`` files and folders, ``.STEM.XXXX.tmp.SUFFIX`` for :func:`atomic_path`) so a later
  run can remove what a killed run left behind.
- :func:`output_folder`: the guard every command that writes a ``--out`` folder runs inside. It
  checks the folder before any work (an existing file, an unwritable place: one-line ``InputError``
  naming ``out``), takes an exclusive lock (a second concurrent run exits 2 naming the holder),
  applies the rerun policy (refuse a folder holding another or a finished run unless ``force``;
  resume an unfinished compatible run where the command supports it), removes stale temporary files
  and folders, and records the run's status (running / ok / failed / interrupted) in ``.run.json``; a
  ``running`` record left by a run that died is told apart as ``killed`` or ``stale`` (:func:`run_state`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from fairarena.errors import InputError, interrupt_of

# mkstemp creates 0600 files; results get the usual permissions (0666 minus the umask) instead
_UMASK = os.umask(0o022)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK

LOCK_NAME = ".lock"
MANIFEST_NAME = ".run.json"


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """``durable=False`` skips the ``fsync``: still atomic (never half-written, also after ``kill -9``), but
    a power loss may leave the file empty; for writers of many small files that can redo a lost one (the
    study store: 7 ms a file here)."""
    path = Path(path)
    fd, tmp = _mkstemp(path, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), _FILE_MODE)
                fh.write(data)
                if durable:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:  # a full disk, a failed rename: name the destination, not the temporary
            raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=json_default) + "\n")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is renamed onto ``path``.

    For writers that want a filename (pandas.to_parquet, matplotlib.savefig).
    """
    path = Path(path)
    fd, tmp = _mkstemp(path, prefix=f".{path.stem}.", suffix=".tmp" + path.suffix)
    os.fchmod(fd, _FILE_MODE)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a whole output directory under a temporary name; files are moved in on success.

    Existing files in ``path`` that the run does not produce are kept; produced files replace
    their old versions atomically one by one. On failure nothing in ``path`` changes.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:  # name the destination, not an internal temporary name
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        yield tmp
        path.mkdir(parents=True, exist_ok=True)
        for item in sorted(tmp.rglob("*")):
            if item.is_file():
                dest = path / item.relative_to(tmp)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(item, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _mkstemp(path: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp`` beside ``path``; a failure names ``path`` (what the user asked for)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def loads_json(data: bytes | str) -> Any:
    """``json.loads`` for large files fairarena wrote (transcripts, records, caches), about twice as fast:
    decoded by pydantic-core's JSON parser (a dependency through pydantic), and by ``json.loads`` whenever
    that parser refuses the text or the text holds a ``NaN``. Every document ``json.loads`` accepts decodes
    to the same value (a lone surrogate escape, deeper nesting than 200 levels: by ``json.loads``; a NaN
    too, because ``json.loads`` gives every NaN as one shared object, so that two decoded records with a
    NaN metric still compare equal), and every error is ``json.loads``'s own (a ``ValueError``: the same
    messages as before)."""
    global _from_json
    if _from_json is None:
        try:
            from pydantic_core import from_json as fj
        except ImportError:          # pragma: no cover - pydantic is a dependency
            fj = json.loads
        _from_json = fj
    if (b"NaN" if isinstance(data, bytes) else "NaN") in data:
        return json.loads(data)
    try:
        return _from_json(data)
    except ValueError:
        return json.loads(data)


_from_json: Any = None


def json_default(obj: Any) -> Any:
    """``json.dumps(default=...)`` for numpy scalars and arrays and paths (used by every JSON writer)."""
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.generic):   # numpy's bool and other scalars: their Python value
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


# -- one run per output folder ------------------------------------------------------------------

def _is_temp_name(name: str) -> bool:
    """Names made by the atomic writers above: ``.X.abc123.tmp`` or ``.X.abc123.tmp.png``."""
    if not name.startswith(".") or name in (LOCK_NAME, MANIFEST_NAME):
        return False
    return name.endswith(".tmp") or ".tmp." in name


def remove_stale_temporaries(out: str | os.PathLike[str]) -> list[Path]:
    """Remove temporary files and folders a killed run left inside ``out`` and beside it
    (``.OUTNAME.XXXX.tmp``). Only call this while holding ``out``'s lock: then no live writer owns them."""
    import re

    out = Path(out).resolve()
    removed: list[Path] = []
    candidates: list[Path] = []
    if out.name and out.parent.is_dir():
        # exactly atomic_dir(out)'s temporary folder name (tempfile's 8 random characters): never a
        # sibling file's temporary such as .out.json.XXXXXXXX.tmp
        mine = re.compile(rf"\.{re.escape(out.name)}\.[a-z0-9_]{{8}}\.tmp")
        candidates += [p for p in out.parent.glob(f".{out.name}.*") if mine.fullmatch(p.name)]
    if out.is_dir():
        candidates += [p for p in out.iterdir() if _is_temp_name(p.name)]
    for p in candidates:
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
        except OSError:
            continue
    return removed


def check_out_file(path: str | os.PathLike[str], field: str = "out") -> Path:
    """Validate an output FILE path before any work: not a folder, and its folder can be written."""
    path = Path(path)
    if path.is_dir():
        raise InputError(field, str(path), "is a folder; expected a file name")
    parent = path.parent
    probe = parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(field, str(path), f"{probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(field, str(path), f"cannot write in {probe} (permission denied)")
    return path


def check_out_dir(path: str | os.PathLike[str], field: str = "out") -> Path:
    """Validate an output FOLDER path before any work: not a file, creatable and writable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(field, str(path), "exists and is a file; expected a folder")
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(field, str(path), f"{probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(field, str(path), f"cannot write in {probe} (permission denied)")
    return path


def config_digest(config: Any) -> str:
    """A short stable digest of a run's configuration (decides whether a partial run can be resumed)."""
    text = json.dumps(config, sort_keys=True, default=json_default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class OutputBusyError(InputError):
    """Another live process holds the output folder's lock (exit 2, naming the holder)."""


@dataclass
class OutputFolder:
    """What :func:`output_folder` yields: the folder, the previous run's manifest, and whether to resume."""

    path: Path
    command: str
    previous: dict[str, Any] | None = None
    resuming: bool = False
    removed: list[Path] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    def note(self, **fields: Any) -> None:
        """Add fields to the run manifest (``.run.json``), written at once."""
        self.manifest.update(fields)
        _write_manifest(self.path, self.manifest)


def _holder(lock_path: Path) -> str:
    try:
        info = json.loads(lock_path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    if not info:
        return "another process"
    return (f"pid {info.get('pid')} on {info.get('host')} ({info.get('command')}, "
            f"since {info.get('started')})")


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    atomic_write_json(out / MANIFEST_NAME, manifest)


def read_run_manifest(out: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``out/.run.json`` as recorded (None when missing or unreadable)."""
    return _read_manifest(Path(out))


def run_state(out: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``out/.run.json`` as it stands now: a run recorded as ``running`` whose holder is gone reads as
    ``killed`` (its PID on this host is dead) or ``stale`` (the PID lives but is not the lock's holder any
    more: reused), with ``recorded`` keeping what the file says. A holder on another host is left as is."""
    out = Path(out)
    m = _read_manifest(out)
    if m is None or m.get("status") != "running" or m.get("host") != socket.gethostname():
        return m
    pid = m.get("pid")
    verdict = None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        verdict = "stale"
    else:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            verdict = "killed"
        except PermissionError:
            pass
        if verdict is None:
            holders = _flock_pids(out / LOCK_NAME)
            if holders is not None and pid not in holders:
                verdict = "stale"
    return m if verdict is None else {**m, "status": verdict, "recorded": "running"}


def _flock_pids(lock_path: Path) -> set[int] | None:
    """PIDs holding a flock on ``lock_path`` (from /proc/locks, without touching the lock), or None when
    that cannot be told (no /proc/locks)."""
    try:
        ino = lock_path.stat().st_ino
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    pids: set[int] = set()
    for line in lines:
        f = line.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[5].rsplit(":", 1)[-1] == str(ino):
            with contextlib.suppress(ValueError):
                pids.add(int(f[4]))
    return pids


def _read_manifest(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _user_entries(out: Path) -> list[Path]:
    if not out.is_dir():
        return []
    return [p for p in out.iterdir() if p.name not in (LOCK_NAME, MANIFEST_NAME) and not _is_temp_name(p.name)]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@contextlib.contextmanager
def output_folder(out: str | os.PathLike[str], command: str, *, force: bool = False, resume: bool = False,
                  config: Any = None, field: str = "out") -> Iterator[OutputFolder]:
    """Run one command's writes into ``out`` under the one-run-per-folder rules.

    - ``out`` naming a file, or a place that cannot be written: :class:`InputError` naming ``field``.
    - Another live run holds ``out``: :class:`OutputBusyError` naming its pid, host, command, start.
    - ``out`` holds files: if ``resume`` and the previous run in it is the same command with the same
      ``config`` and did not finish, ``resuming`` is True (the command continues from what is there).
      Else without ``force``: refused (InputError). With ``force``: a folder written by an earlier run
      (it has ``.run.json``) is emptied first; files in a folder no run of ours wrote are kept.
    - Stale temporaries of killed runs (inside ``out`` and beside it) are removed.
    - An :class:`InputError` raised inside the run (input only the command itself could check) removes
      the folder again when this run created it and nothing was written: a rejected run leaves nothing.
    - ``.run.json`` records command, config digest, pid, host, start and the final status:
      ``ok`` on success (also a ``SystemExit`` with code 0), ``interrupted`` on Ctrl-C/SIGTERM
      (KeyboardInterrupt/SystemExit), ``failed`` with the reason on any other exception (``reason="bad
      input"`` for an :class:`InputError` raised inside the run once something was written).
    - A run killed outright (``kill -9``, power loss) cannot write its end, so ``.run.json`` keeps
      ``running``. The next run takes the lock, which the kernel released when the holder died, so it
      knows that run is dead and treats it as ``killed``: the refusal without ``force`` says "a killed
      run", a ``resume`` continues it as any unfinished run, and the new ``.run.json`` keeps it under
      ``previous`` (its command, pid, host, start and ``status: killed``) instead of overwriting it.
    - Readers that do not take the lock use :func:`run_state`: a ``running`` record whose PID is dead on
      this host reads as ``killed``; one whose PID lives but no longer holds the lock (a reused PID) reads
      as ``stale``; both keep ``recorded: running``. A record from another host is left as it is.

    The lock is ``fcntl.flock`` on ``out/.lock``: released by the kernel when the process dies, so a
    killed run never leaves the folder locked. (It is advisory and local: NFS may not honour it.)
    """
    path = check_out_dir(out, field)
    created = not path.exists()
    with folder_lock(path, command, field) as holder:
        digest = config_digest(config) if config is not None else None
        removed = remove_stale_temporaries(path)
        previous = _read_manifest(path)
        if previous is not None and previous.get("status") == "running":  # we hold the lock: its run died
            previous["status"] = "killed"
        entries = _user_entries(path)
        resuming = False
        if entries:
            compatible = (previous is not None and previous.get("command") == command
                          and previous.get("config_digest") == digest and previous.get("status") != "ok")
            if resume and compatible and not force:
                resuming = True
            elif not force:
                if previous is not None:
                    state = {"ok": "a finished", "failed": "a failed", "interrupted": "an interrupted",
                             "killed": "a killed"}.get(str(previous.get("status")), "an unfinished")
                    what = f"{state} run of '{previous.get('command')}' (started {previous.get('started')})"
                else:
                    what = f"{len(entries)} file(s) no fairarena run wrote"
                hint = "pass --force to replace it" if previous is not None else "pass --force to write into it anyway"
                raise InputError(field, str(path), f"is not empty: it holds {what}; {hint}, or choose another folder")
            elif previous is not None:
                for p in entries:
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p)
                    else:
                        p.unlink()
        manifest = {**holder, "config_digest": digest, "status": "running", "resumed": resuming}
        if previous is not None and previous.get("status") == "killed":   # not lost: kept in the new record
            manifest["previous"] = {k: previous.get(k) for k in ("command", "pid", "host", "started", "status")}
        folder = OutputFolder(path, command, previous, resuming, removed, manifest)
        _write_manifest(path, manifest)
        try:
            yield folder
        except (KeyboardInterrupt, SystemExit) as exc:
            if isinstance(exc, SystemExit) and exc.code in (0, None):
                folder.note(status="ok", finished=_now())
            else:
                folder.note(status="interrupted", finished=_now(), reason=type(exc).__name__)
            raise
        except InputError:
            # bad input found inside the run: as if it never ran (a folder we made and nothing wrote goes)
            if created and not _user_entries(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                folder.note(status="failed", finished=_now(), reason="bad input")
            raise
        except BaseException as exc:
            sig = interrupt_of(exc)
            if sig is not None:          # a signal that landed inside C code (SystemError caused by it)
                folder.note(status="interrupted", finished=_now(), reason=type(sig).__name__)
                raise sig from None
            reason = folder.manifest.get("reason") or f"{type(exc).__name__}: {exc}"[:500]
            folder.note(status="failed", finished=_now(), reason=reason)
            raise
        else:
            folder.note(status="ok", finished=_now())


@contextlib.contextmanager
def folder_lock(path: Path, command: str, field: str = "out") -> Iterator[dict[str, Any]]:
    """Hold ``path``'s exclusive lock (``fcntl.flock`` on ``path/.lock``, created with the folder) and yield
    the holder record written into it (pid, host, command, start). Held by another live process:
    :class:`OutputBusyError` naming it; a folder that cannot be written: :class:`InputError` naming
    ``field``. The kernel releases the lock when the process dies. :func:`output_folder` and the study
    store take it."""
    import fcntl

    try:
        path.mkdir(parents=True, exist_ok=True)
        lock_path = path / LOCK_NAME
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InputError(field, str(path), f"cannot write there ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputBusyError(field, str(path), f"in use by {_holder(lock_path)}; wait for it to "
                                  "finish or choose another folder") from None
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "started": _now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode("utf-8"), 0)
        yield holder
    finally:
        os.close(fd)  # releases the lock
