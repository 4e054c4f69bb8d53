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
walks decoded data and names the path of the first offending entry (``rewards[1][0]``); with
``limit`` it also refuses non-finite numbers and magnitudes above the limit (:data:`MAX_MAGNITUDE`
for utilities). :func:`validate_model` applies the same rule to a pydantic model (strict types: no
text or booleans for numbers, no numbers or text for booleans). :func:`check_int` bounds a count
option (rounds, steps, cohorts) before any work.

This module imports only the standard library (pydantic only inside :func:`validate_model`).
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
MAX_MAGNITUDE = 1e12
"""Largest absolute utility, weight or score read from a file. Differences, squares and sums over a
million agents of numbers up to 1e12 stay below 1e30, far from float64's overflow at 1.8e308, so no
metric (Gini, variance, pairwise differences, normalisation by a range) can overflow or lose all
precision; real utilities are shares, counts or scores far below it, and a larger value is almost
always a sentinel or a unit error. (At 1e308 a range overflows to inf and the Gini reads 0.0.)"""


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


def require_numbers(data: Any, field: str, *, limit: float | None = None) -> Any:
    """Check every leaf of nested lists is a real number (not a string, not a bool); returns ``data``.

    Strings such as ``"0.5"`` are rejected with the path of the first one (``rewards[1][0]``): a
    number typed as text is usually a sign the file was produced by the wrong tool. With ``limit``,
    every number must also be finite with ``abs(value) <= limit`` (see :data:`MAX_MAGNITUDE`).
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
        elif limit is not None:
            check_magnitude(value, where, limit)
    return data


def check_magnitude(value: Any, field: str, limit: float = MAX_MAGNITUDE) -> float:
    """``float(value)``, refused unless finite with ``abs(value) <= limit`` (one line naming ``field``)."""
    v = float(value)
    if not math.isfinite(v):
        raise InputError(field, value, "expected a finite number")
    if abs(v) > limit:
        raise InputError(field, value, f"expected a number of magnitude at most {limit:g} (larger values "
                         "overflow the metrics; rescale the file)")
    return v


def check_int(value: Any, field: str, *, low: int, high: int, unit: str = "") -> int:
    """An integer option within ``low..high`` (a documented limit); booleans, non-integers and values
    outside the range are one line naming ``field``, before any work."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        what = f" {unit}" if unit else ""
        raise InputError(field, value, f"expected an integer from {low:,} to {high:,}{what}")
    return value


_NUMBER_TYPES = {"int_type", "int_parsing", "int_from_float", "float_type", "float_parsing", "decimal_type"}


def validate_model(model: Any, data: Any, field: str) -> Any:
    """``model.model_validate(data, strict=True)`` (a pydantic model), its first error one line naming
    ``field`` and the entry's path (``destination.pois[3].capacity``). Strict: a number written as text
    (``"177"``) or as a boolean, a boolean written as a number or text (``1``, ``"yes"``), and a float
    where an integer is expected (``177.0``) are refused rather than converted."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        raise model_error(exc, field) from None


def model_error(exc: Any, field: str) -> InputError:
    """The first error of a pydantic ``ValidationError`` as an :class:`InputError` naming its path."""
    err = exc.errors()[0]
    where = field + "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"])
    value, kind, msg = err.get("input"), err.get("type", ""), err["msg"].removeprefix("Value error, ")
    if kind in _NUMBER_TYPES and isinstance(value, str):
        try:
            hint = f" (write {float(value):g}, not \"{value}\")"
        except ValueError:
            hint = ""
        msg = f"expected a number, not text{hint}"
    elif kind in _NUMBER_TYPES and isinstance(value, bool):
        msg = "expected a number, not true/false"
    elif kind == "bool_type":
        msg = "expected true or false"
    return InputError(where, value, msg)
