"""One reader for every JSON and CSV file a command takes, with one-line errors.

Every failure is an :class:`~fairarena.errors.InputError` naming the field (``--rewards``,
``cohort``, ...) and the file, never a traceback:

- missing file, a folder, unreadable file, a file larger than ``max_bytes``;
- binary content (a NUL byte) or text that is not UTF-8 (the byte offset is named);
- a UTF-8 byte-order mark is accepted and dropped (a JSON file starting with a BOM is still JSON);
- invalid JSON (line and column), nesting deeper than ``max_depth`` (checked before decoding, so no
  ``RecursionError``). ``NaN``/``Infinity`` are decoded as floats so that the field's validator, which
  rejects non-finite numbers, can name the exact field (``patients[0].survival``);
- CSV cells that are not numbers (line named).

Numbers given as strings (``"0.5"``) are rejected, not silently converted: :func:`require_numbers`
walks decoded data and names the path of the first offending entry (``rewards[1][0]``).

This module imports only the standard library.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from fairarena.errors import InputError

MAX_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 64


def read_text(path: str | os.PathLike[str], field: str, *, max_bytes: int = MAX_BYTES) -> str:
    """The file's text (UTF-8, an initial BOM dropped); every failure an InputError naming ``field``."""
    p = Path(path)
    if not p.exists():
        raise InputError(field, str(p), "file not found")
    if p.is_dir():
        raise InputError(field, str(p), "is a folder; expected a file")
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError(field, str(p), f"file of {size:,} bytes is larger than the {max_bytes:,}-byte limit")
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(field, str(p), f"cannot read ({exc.strerror})") from None
    return decode_text(data, field, str(p))


def decode_text(data: bytes, field: str, name: str = "<input>") -> str:
    """Decode bytes as UTF-8 text (BOM dropped); binary or other encodings are an InputError."""
    if b"\x00" in data[:65536]:
        raise InputError(field, name, "is a binary file; expected UTF-8 text (JSON or CSV)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(field, name, f"is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r}); "
                         "save it as UTF-8") from None


def json_depth(text: str) -> int:
    """Maximum nesting of ``[``/``{`` outside strings (a linear scan; no recursion)."""
    depth = best = 0
    in_str = escape = False
    for ch in text:
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
        elif ch in "]}":
            depth -= 1
    return best


def parse_json(text: str, field: str, name: str = "<input>", *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode JSON text; invalid JSON and too-deep nesting are InputErrors."""
    depth = json_depth(text)
    if depth > max_depth:
        raise InputError(field, name, f"JSON nested {depth} levels deep; at most {max_depth} are accepted")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(field, name, f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:  # belt and braces: the depth check above should catch it first
        raise InputError(field, name, "JSON nested too deeply") from None


def load_json(path: str | os.PathLike[str], field: str, *, max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """Read and decode one JSON file (see the module notes for what is rejected)."""
    return parse_json(read_text(path, field, max_bytes=max_bytes), field, str(path), max_depth=max_depth)


def load_toml(path: str | os.PathLike[str], field: str, *, missing: str, invalid: str) -> tuple[dict[str, Any], str]:
    """One TOML file: its table and its text. A missing file is ``InputError(field, path, missing)``;
    undecodable or malformed text ``InputError(field, path, f"{invalid} (reason)")``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    p = Path(path)
    if not p.is_file():
        raise InputError(field, str(p), missing)
    try:
        text = p.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(field, str(p), f"{invalid} ({exc})") from None


def looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


def parse_csv_numbers(text: str, field: str) -> list[list[float]]:
    """Rows of numbers; blank lines and lines starting with ``#`` are skipped; empty cells dropped."""
    rows: list[list[float]] = []
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in row if c.strip() != ""]
        if not cells or cells[0].startswith("#"):
            continue
        values = []
        for c in cells:
            try:
                v = float(c)
            except ValueError:
                raise InputError(f"{field} (line {lineno})", row, "expected numbers separated by commas") from None
            if not math.isfinite(v):
                raise InputError(f"{field} (line {lineno})", c, "expected a finite number")
            values.append(v)
        rows.append(values)
    return rows


def parse_csv_rows(text: str, field: str) -> list[dict[str, str]]:
    """CSV with a header line as a list of ``{column: text}`` rows (cells stripped)."""
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        raise InputError(field, "", "an empty CSV file; expected a header line")
    rows = []
    for lineno, row in enumerate(reader, start=2):
        if None in row:
            raise InputError(f"{field} (line {lineno})", row[None], "more cells than header columns")
        rows.append({k.strip(): (v or "").strip() for k, v in row.items()})
    return rows


def load_numbers_file(path: str | os.PathLike[str], field: str, *, max_bytes: int = MAX_BYTES) -> Any:
    """A JSON document, or CSV rows of numbers. ``.json``/``.csv`` decide; otherwise the content does
    (starts with ``{`` or ``[`` after an optional BOM: JSON)."""
    text = read_text(path, field, max_bytes=max_bytes)
    suffix = Path(path).suffix.lower()
    if suffix == ".json" or (suffix != ".csv" and looks_like_json(text)):
        return parse_json(text, field, str(path))
    return parse_csv_numbers(text, field)


def require_numbers(data: Any, field: str) -> Any:
    """Check every leaf of nested lists is a real number (not a string, not a bool); returns ``data``.

    Strings such as ``"0.5"`` are rejected with the path of the first one (``rewards[1][0]``): a
    number typed as text is usually a sign the file was produced by the wrong tool.
    """
    stack: list[tuple[str, Any]] = [(field, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            raise InputError(where, value, "expected a number, not text (write 0.5, not \"0.5\")")
        elif isinstance(value, bool) or not hasattr(value, "__float__"):
            raise InputError(where, value, "expected a number")
    return data
