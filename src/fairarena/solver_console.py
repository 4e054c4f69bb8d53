"""Keep the solver's console off standard output.

HiGHS (behind ``scipy.optimize.milp``) writes some lines from its C++ code straight to file descriptor 1,
whatever its options say: on some cohorts the MIP solver prints
``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`` (ERGO-Code/HiGHS#2783), which
broke the JSON a command prints with ``--json``. ``disp=False`` does not reach that line, so every solve
runs inside :func:`quiet_solver`, which points file descriptor 1 at ``/dev/null`` for the duration:

>>> from fairarena.solver_console import milp     # scipy.optimize.milp, with the console silenced

The redirection is process-wide (a file descriptor has no thread of its own): solves running at once in
several threads share one redirection, counted, and the first in restores nothing until the last is out.
Python-level output written to ``sys.stdout`` is flushed before the redirection starts; a thread that
*prints* while another thread solves would see its line silenced too, which no command of fairarena does
(their stdout is written once, at the end). C-level buffers are flushed (``fflush``) before the
descriptor is restored, so nothing the solver wrote comes out later.

Cost: about 10 microseconds a solve (docs/performance.md, ``benchmarks/bench_solver_console.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from typing import Any, Iterator

__all__ = ["milp", "quiet_solver"]

_lock = threading.Lock()
_depth = 0
_saved: int | None = None
_devnull: int | None = None
_libc: Any = None


def _fflush() -> None:
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None)
        _libc.fflush(None)
    except (OSError, AttributeError):  # no C library to flush on this platform: nothing buffered there
        pass


def _flush_python() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()


@contextlib.contextmanager
def quiet_solver() -> Iterator[None]:
    """Within the block, whatever is written to file descriptor 1 (the solver's console) is discarded."""
    global _depth, _saved, _devnull
    with _lock:
        if _depth == 0:
            _flush_python()
            try:
                if _devnull is None:
                    _devnull = os.open(os.devnull, os.O_WRONLY)
                _saved = os.dup(1)
                os.dup2(_devnull, 1)
            except OSError:  # no descriptor 1 to redirect (a closed stdout): nothing can reach it
                _saved = None
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                _fflush()
                os.dup2(_saved, 1)
                os.close(_saved)
                _saved = None


def milp(*args: Any, **kwargs: Any) -> Any:
    """``scipy.optimize.milp`` with the solver's console silenced (:func:`quiet_solver`)."""
    from scipy.optimize import milp as _milp

    with quiet_solver():
        return _milp(*args, **kwargs)
