"""Atomic writes and the output-folder guard (lock, rerun policy, stale temporaries, status)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fairarena.errors import InputError
from fairarena.fsutil import (
    MANIFEST_NAME,
    OutputBusyError,
    atomic_dir,
    atomic_path,
    atomic_write_json,
    check_out_file,
    output_folder,
    remove_stale_temporaries,
)


def _manifest(out):
    return json.loads((out / MANIFEST_NAME).read_text())


def test_fresh_run_records_ok(tmp_path):
    out = tmp_path / "run"
    with output_folder(out, "sweep", config={"a": 1}) as folder:
        assert not folder.resuming and folder.previous is None
        atomic_write_json(out / "summary.json", {"x": 1})
        assert _manifest(out)["status"] == "running"
    m = _manifest(out)
    assert m["status"] == "ok" and m["command"] == "sweep" and m["pid"] == os.getpid()


def test_rerun_refused_unless_force(tmp_path):
    out = tmp_path / "run"
    with output_folder(out, "sweep", config={"a": 1}):
        (out / "old.txt").write_text("old")
    with pytest.raises(InputError, match="not empty: it holds a finished run of 'sweep'.*--force"):
        with output_folder(out, "sweep", config={"a": 1}):
            pytest.fail("must not run")
    assert (out / "old.txt").exists()  # refusing touched nothing
    with output_folder(out, "sweep", config={"a": 2}, force=True):
        assert not (out / "old.txt").exists()  # an earlier run's files are replaced, not mixed in


def test_foreign_folder_kept_with_force(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    with pytest.raises(InputError, match="1 file\\(s\\) no fairarena run wrote"):
        with output_folder(out, "debate"):
            pass
    with output_folder(out, "debate", force=True):
        pass
    assert (out / "notes.md").read_text() == "mine"  # never delete what we did not write


def test_failed_and_interrupted_status_and_resume(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(RuntimeError):
        with output_folder(out, "learn", config={"T": 10}):
            (out / "batch-0.parquet").write_text("partial")
            raise RuntimeError("boom")
    assert _manifest(out)["status"] == "failed" and "boom" in _manifest(out)["reason"]
    with pytest.raises(KeyboardInterrupt):
        with output_folder(out, "learn", config={"T": 10}, resume=True) as f:
            assert f.resuming and f.previous["status"] == "failed"
            raise KeyboardInterrupt
    assert _manifest(out)["status"] == "interrupted"
    # a different config is not resumed
    with pytest.raises(InputError, match="not empty"):
        with output_folder(out, "learn", config={"T": 11}, resume=True):
            pass
    # a command that cannot resume refuses
    with pytest.raises(InputError, match="not empty"):
        with output_folder(out, "learn", config={"T": 10}, resume=False):
            pass


def test_out_is_a_file_or_unwritable(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(InputError) as e:
        with output_folder(f, "sweep"):
            pass
    assert e.value.field == "out" and "is a file" in str(e.value)
    with pytest.raises(InputError, match="is a file, not a folder"):
        with output_folder(f / "sub", "sweep"):
            pass
    with pytest.raises(InputError, match="is a folder"):
        check_out_file(tmp_path, "out")


def test_unwritable_out_named(tmp_path):
    if os.geteuid() == 0:  # root writes through permission bits; /sys refuses even root
        if not os.path.isdir("/sys/kernel"):
            pytest.skip("needs /sys when run as root")
        target = "/sys/fairarena-test-out"
        with pytest.raises(InputError, match="cannot write there") as e:
            with output_folder(target, "sweep"):
                pass
        assert e.value.field == "out" and target in str(e.value)
        with pytest.raises(OSError) as e2:
            atomic_write_json(target + "/x.json", {})
        assert e2.value.filename == target + "/x.json"  # the destination, not a temporary name
        return
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InputError, match="permission denied") as e:
            with output_folder(ro / "out", "sweep"):
                pass
        assert e.value.field == "out"
        with pytest.raises(OSError) as e2:
            atomic_write_json(ro / "x.json", {})
        assert e2.value.filename == str(ro / "x.json")  # the destination, not a temporary name
    finally:
        ro.chmod(0o700)


def test_stale_temporaries_removed_on_next_run(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    beside = tmp_path / ".run.k2j3h4ab.tmp"  # what atomic_dir(out) leaves when killed
    beside.mkdir()
    (beside / "settings.parquet").write_bytes(b"x" * 100)
    inside = out / ".summary.json.abc.tmp"
    inside.write_text("{")
    fig = out / ".figure3.abc.tmp.png"
    fig.write_text("")
    unrelated = tmp_path / ".other.abc.tmp"  # another folder's temporary: not ours to remove
    unrelated.mkdir()
    sibling = tmp_path / ".run.json.abcd1234.tmp"  # a live writer of the sibling file run.json
    sibling.write_text("")
    with output_folder(out, "sweep") as folder:
        assert sorted(p.name for p in folder.removed) == sorted([beside.name, inside.name, fig.name])
    assert not beside.exists() and not inside.exists() and not fig.exists() and unrelated.exists()
    assert sibling.exists()
    assert remove_stale_temporaries(out) == []


def test_atomic_temporaries_have_recognisable_names(tmp_path):
    with atomic_path(tmp_path / "figure.png") as tmp:
        assert tmp.name.startswith(".figure.") and tmp.name.endswith(".tmp.png")
    with atomic_dir(tmp_path / "res") as tmp:
        assert tmp.name.startswith(".res.") and tmp.name.endswith(".tmp")
        (tmp / "a.txt").write_text("a")
    assert (tmp_path / "res" / "a.txt").read_text() == "a"


_HOLDER = textwrap.dedent("""
    import sys, time
    from fairarena.fsutil import output_folder
    with output_folder(sys.argv[1], "sweep"):
        print("locked", flush=True)
        time.sleep(30)
""")


def test_second_process_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(OutputBusyError) as e:
            with output_folder(out, "sweep", force=True):
                pytest.fail("must not run")
        assert f"pid {holder.pid}" in str(e.value) and "sweep" in str(e.value)
    finally:
        holder.kill()
        holder.wait()
    # killed: the kernel released the lock; the next run sees a killed run and refuses to mix in
    with pytest.raises(InputError, match="killed run of 'sweep'"):
        (out / "partial.txt").write_text("x")
        with output_folder(out, "sweep"):
            pass
    with output_folder(out, "sweep", force=True):
        pass


def test_input_error_inside_a_new_folder_leaves_nothing(tmp_path):
    out = tmp_path / "new"
    with pytest.raises(InputError):
        with output_folder(out, "preflib"):
            raise InputError("voters", 0, "expected a positive integer")
    assert not out.exists()
    out.mkdir()  # an existing folder is never removed
    with pytest.raises(InputError):
        with output_folder(out, "preflib"):
            raise InputError("voters", 0, "expected a positive integer")
    assert out.is_dir() and _manifest(out)["status"] == "failed"


def test_atomic_files_get_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    os.umask(mask)
    atomic_write_json(tmp_path / "a.json", {})
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


@pytest.mark.parametrize("text", ['{"a":1,"a":2}', "[12345678901234567890123456789]", '"\\ud800"', "[NaN, Infinity, -Infinity]",
                                  "[1e400, 0.1, 1e-320]", '{"a": "\\u00e9", "b": [true, false, null]}', " [1] ",
                                  "[" * 300 + "]" * 300])
def test_loads_json_decodes_as_json_loads(text):
    import json
    import math

    from fairarena.fsutil import loads_json

    want = json.loads(text)
    for data in (text, text.encode()):
        got = loads_json(data)
        assert repr(got) == repr(want) or (isinstance(want, list) and all(
            (isinstance(x, float) and math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(want, got)))


@pytest.mark.parametrize("text", ["[1,]", '{"a":1,}', "[01]", "[1] x", "", b"\xff"])
def test_loads_json_fails_as_json_loads_does(text):
    import json

    from fairarena.fsutil import loads_json

    with pytest.raises(ValueError) as want:
        json.loads(text)
    with pytest.raises(ValueError) as got:
        loads_json(text)
    assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


def test_loads_json_gives_nan_as_json_loads_does_so_records_still_compare_equal():
    import json

    from fairarena.fsutil import loads_json

    text = '{"gini": NaN, "rounds": [{"gini": NaN}]}'
    assert loads_json(text) == json.loads(text) == loads_json(text.encode())   # one shared NaN object


def _signal_inside_c_code(interrupt):
    """What a signal handler's exception looks like when it fires while C code runs a Python callback
    (seen in CI: SIGTERM while numba unpickled a compiled function): a SystemError caused by it."""
    try:
        raise interrupt
    except BaseException as exc:
        raise SystemError("<function _numba_unpickle> returned a result with an exception set") from exc


@pytest.mark.parametrize("interrupt, status", [(SystemExit(143), "interrupted"), (KeyboardInterrupt(), "interrupted")])
def test_a_signal_seen_as_a_system_error_is_still_an_interrupt(tmp_path, interrupt, status):
    from fairarena.cli_common import cli_errors
    from fairarena.errors import interrupt_of

    out = tmp_path / "out"
    with pytest.raises(type(interrupt)):
        with output_folder(out, "learn"):
            _signal_inside_c_code(interrupt)
    assert json.loads((out / ".run.json").read_text())["status"] == status
    with output_folder(out, "learn", force=True):    # the lock was released
        pass

    @cli_errors
    def command():
        _signal_inside_c_code(interrupt)
    import typer

    with pytest.raises((SystemExit, typer.Exit)) as exit_:     # Ctrl-C: the one line "interrupted", exit 130
        command()
    code = exit_.value.code if isinstance(exit_.value, SystemExit) else exit_.value.exit_code
    assert code == (143 if isinstance(interrupt, SystemExit) else 130)
    assert interrupt_of(SystemError("another bug")) is None and interrupt_of(ValueError()) is None
