"""Shared CLI plumbing: consoles, JSON output, and the error contract (clear message, exit 2)."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable, TypeVar

import typer
from rich.console import Console

from fairarena.errors import FairArenaError
from fairarena.fsutil import _json_default

console = Console()
err_console = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout (machines read this; nothing else goes to stdout)."""
    sys.stdout.write(json.dumps(obj, default=_json_default) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 2) -> "typer.Exit":
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def cli_errors(func: F) -> F:
    """Turn fairarena's typed errors (and bad files) into a one-line message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FairArenaError as exc:
            raise fail(str(exc)) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            raise fail(f"{exc.strerror}: {exc.filename}") from None

    return wrapper  # type: ignore[return-value]


def standalone_app(register: Callable[[typer.Typer], None]) -> typer.Typer:
    """A Typer app holding only the commands one feature module registers (for tests, embedding)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """fairarena commands"""

    register(app)
    return app
