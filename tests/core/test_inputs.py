"""The one input reader: every hostile file is a one-line InputError naming the field and file."""

from __future__ import annotations

import json

import pytest

from fairarena.errors import InputError
from fairarena.inputs import (
    json_depth,
    load_json,
    load_numbers_file,
    parse_csv_numbers,
    parse_csv_rows,
    read_text,
    require_numbers,
)


def test_bom_json_is_json(tmp_path):
    p = tmp_path / "r"  # no suffix: the content decides, and a BOM must not make it CSV
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps({"rewards": [[0.5, 0.5]]}).encode())
    assert load_numbers_file(p, "rewards") == {"rewards": [[0.5, 0.5]]}
    p2 = tmp_path / "c.json"
    p2.write_bytes(b"\xef\xbb\xbf[1, 2]")
    assert load_json(p2, "cohort") == [1, 2]


def test_bom_csv(tmp_path):
    p = tmp_path / "r.csv"
    p.write_bytes(b"\xef\xbb\xbf0.1,0.9\n# comment\n\n0.2, 0.8\n")
    assert load_numbers_file(p, "rewards") == [[0.1, 0.9], [0.2, 0.8]]


def test_binary_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_bytes(bytes(range(256)))
    with pytest.raises(InputError) as e:
        load_json(p, "cohort")
    assert e.value.field == "cohort" and "binary" in str(e.value) and str(p) in str(e.value)


def test_latin1_file(tmp_path):
    p = tmp_path / "x.csv"
    p.write_bytes("0.5,0.5 # caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 13"):
        read_text(p, "rewards")


def test_deep_nesting_is_input_error_not_recursion(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="nested 100000 levels"):
        load_json(p, "rewards")
    # nesting inside strings does not count
    assert json_depth('{"a": "[[[[[[", "b": ["\\"[["]}') == 2


def test_invalid_json_names_line_and_column(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"a": 1,\n "b": }')
    with pytest.raises(InputError, match="line 2 column 7"):
        load_json(p, "cohort")


def test_nan_left_to_the_field_validator(tmp_path):
    p = tmp_path / "n.json"
    p.write_text("[[NaN, 0.5]]")  # decoded; validate_rewards / the cohort model name the field
    assert load_json(p, "rewards")[0][1] == 0.5


def test_missing_folder_too_big(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_text(tmp_path / "nope.json", "rewards")
    with pytest.raises(InputError, match="is a folder"):
        read_text(tmp_path, "rewards")
    p = tmp_path / "big.csv"
    p.write_text("0.5\n" * 100)
    with pytest.raises(InputError, match="larger than the 10-byte limit"):
        read_text(p, "rewards", max_bytes=10)


def test_strings_as_numbers_rejected_with_path():
    with pytest.raises(InputError) as e:
        require_numbers([[0.1, 0.2], ["0.5", 0.5]], "rewards")
    assert e.value.field == "rewards[1][0]" and e.value.value == "0.5"
    with pytest.raises(InputError) as e:
        require_numbers([1, True], "policy")
    assert e.value.field == "policy[1]"
    with pytest.raises(InputError):
        require_numbers([None], "policy")
    assert require_numbers([[1, 2.5]], "rewards") == [[1, 2.5]]


def test_csv_numbers_and_rows():
    with pytest.raises(InputError, match=r"rewards \(line 2\)"):
        parse_csv_numbers("0.1,0.2\n0.3,abc\n", "rewards")
    with pytest.raises(InputError, match="finite"):
        parse_csv_numbers("nan,0.2\n", "rewards")
    assert parse_csv_rows("id, x\nP1,2\n", "table") == [{"id": "P1", "x": "2"}]
    with pytest.raises(InputError, match="more cells"):
        parse_csv_rows("id,x\nP1,2,3\n", "table")
