"""Shared CLI plumbing: consoles, JSON output, and the error contract (clear message, exit 2).

Every unexpected-input failure of every command ends as one line on stderr and exit code 2:
fairarena's typed errors, and the OS/decoding errors a hostile file or path can cause (missing or
unreadable file, a folder where a file was expected, non-UTF-8 bytes, nesting too deep for the
decoder, a size that cannot fit in memory, an output path that is a file or cannot be written).
Only genuine bugs keep their traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable, TypeVar

import typer
from rich.console import Console

from fairarena.errors import FairArenaError, InputError, interrupt_of
from fairarena.fsutil import json_default

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout (machines read this; nothing else goes to stdout)."""
    sys.stdout.write(json.dumps(obj, default=json_default) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 2) -> "typer.Exit":
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def error_message(exc: BaseException) -> str | None:
    """The one-line message for an input/environment failure, or None for a genuine bug."""
    if isinstance(exc, FairArenaError):
        return str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not UTF-8 text (byte {exc.start}); save it as UTF-8"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "not enough memory for this size; choose a smaller problem (fewer rounds, seeds or settings)"
    if isinstance(exc, OSError) and (exc.filename is not None or exc.strerror):
        where = f": {exc.filename}" if exc.filename is not None else ""
        return f"{exc.strerror or type(exc).__name__}{where}"
    return None


def cli_errors(func: F) -> F:
    """Turn fairarena's typed errors (and bad files, unwritable outputs, undecodable or too-deep input,
    sizes that cannot fit in memory) into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (FairArenaError, UnicodeDecodeError, RecursionError, MemoryError, OSError) as exc:
            message = error_message(exc)
            if message is None:
                raise
            raise fail(message) from None
        except KeyboardInterrupt:  # after the command's own clean-up ran (locks released, status recorded)
            raise fail("interrupted", code=130) from None
        except SystemError as exc:     # a signal that landed inside C code: the interrupt, not a traceback
            sig = interrupt_of(exc)
            if sig is None:
                raise
            if isinstance(sig, KeyboardInterrupt):
                raise fail("interrupted", code=130) from None
            raise sig from None

    return wrapper  # type: ignore[return-value]


def check_seed(seed: int | None, field: str = "seed") -> int | None:
    """Seeds are non-negative integers in every command (numpy's generators reject negatives)."""
    if seed is not None and seed < 0:
        raise InputError(field, seed, "expected a non-negative integer")
    return seed


def standalone_app(register: Callable[[typer.Typer], None]) -> typer.Typer:
    """A Typer app holding only the commands one feature module registers (for tests, embedding)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """fairarena commands"""

    register(app)
    return app


# the --egalitarian option of the commands that solve the frameworks' optima (triage optimal, aggregate
# council): here so that neither command package imports the other
EGALITARIAN_HELP = ("The egalitarian agent's optimum: pareto (default: least Gini of CNSS among the allocations "
                    "no other feasible allocation Pareto-dominates, no levelling down) or strict (least Gini over "
                    "every allocation; may treat nobody; warns).")


def warn_egalitarian(form: str) -> None:
    """Check an ``--egalitarian`` form (exit 2 naming the allowed forms) and warn on stderr for strict."""
    from fairarena.allocation.frameworks import egalitarian_warning

    message = egalitarian_warning(form)
    if message:
        err_console.print(f"[bold yellow]warning:[/] {message}", highlight=False, soft_wrap=True)
