"""Cases of a hostile user run through the real CLI (a fresh process each) where the other tests check the
library underneath: a garbage line in ``results.jsonl`` seen by ``study stats``, a study whose every debate
failed against a server that answers HTML, a destination CSV whose ``baseline_load`` cell is wrong.
And the table of docs/reliability.md ("Hostile inputs: case by case"): every test it names exists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairarena.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def errors(stderr: str) -> list[str]:
    return [x for x in stderr.strip().splitlines() if x.strip() and not x.startswith(("progress ", "study "))]


@pytest.fixture(scope="module")
def study_folder(tmp_path_factory) -> Path:
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("tiny")
    root = tmp_path_factory.mktemp("hostile") / "st"
    run_study(cfg, to_toml(cfg), root)
    return root


def test_study_stats_reads_through_a_garbage_line_in_results_jsonl(study_folder, tmp_path):
    healthy = cli("study", "stats", str(study_folder), "--json")
    assert healthy.returncode == 0, healthy.stderr
    root = tmp_path / "st"
    shutil.copytree(study_folder, root)
    with open(root / "results.jsonl", "a") as fh:
        fh.write('{"key": "garbage\n{"status": "ok"}\n')
    r = cli("study", "stats", str(root), "--json")
    assert r.returncode == 0 and errors(r.stderr) == [], r.stderr
    got, want = json.loads(r.stdout), json.loads(healthy.stdout)
    got.pop("seconds"), want.pop("seconds")
    assert got == want                                            # nothing counted twice, nothing lost
    # the statistics take the records from the record files their status check reads (not results.jsonl);
    # the next reader of results.jsonl rebuilds it from the records: the garbage is gone
    from fairarena.study.store import load_results

    assert len(load_results(root)) == len(list(root.glob("debates/*/*.json")))
    assert len((root / "results.jsonl").read_text().splitlines()) == len(list(root.glob("debates/*/*.json")))


def test_a_record_without_its_key_is_not_called_misplaced(study_folder, tmp_path):
    # {"status": "ok"} is a damaged record (no key, no task), not another debate's record
    root = tmp_path / "st"
    shutil.copytree(study_folder, root)
    rec = sorted(root.glob("debates/*/*.json"))[3]
    rec.write_text('{"status": "ok"}')
    r = cli("study", "stats", str(root))
    assert r.returncode == 2 and len(errors(r.stderr)) == 1, r.stderr
    (line,) = errors(r.stderr)
    assert f"{rec.relative_to(tmp_path)}: not a valid record (key: Field required)" in line, line
    assert "misplaced" not in line and "None" not in line and "--repair" in line


class _HtmlServer(BaseHTTPRequestHandler):
    """An HTTP proxy's error page where an OpenAI-compatible API should be: every model call fails."""

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b"<html><body>proxy error</body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args) -> None:
        pass


def test_a_study_whose_every_debate_failed_exits_1_and_records_failed(tmp_path):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlServer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_port}/v1"
        design = tmp_path / "s.toml"
        design.write_text(f'base = "tiny"\ncohorts = 1\nmodel_a = "openai:m@{url}"\nmodel_b = "openai:m@{url}"\n'
                          'rag = "off"\nbaseline_control = false\n')
        r = cli("study", "run", str(design), "--out", str(tmp_path / "st"))
    finally:
        srv.shutdown()
        srv.server_close()
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    manifest = json.loads((tmp_path / "st" / ".run.json").read_text())
    assert manifest["status"] == "failed" and manifest["reason"] == "4 of 4 debates failed", manifest
    assert "0 ok, 4 failed" in r.stdout
    st = cli("study", "status", str(tmp_path / "st"), "--json")
    assert json.loads(st.stdout)["failed"] == 4


def test_destination_csv_error_names_the_wrong_cell_on_the_cli(tmp_path):
    csv = tmp_path / "pois.csv"
    csv.write_text("id,category,neighbourhood,popularity,capacity,baseline_load,price_level,provider,distance_km,"
                   "transport,accessible\n"
                   "a,museum,centre,0.5,100,1;2,1,local,1.0,walk,true\n"
                   "b,park,centre,0.5,100,1,1,local,1.0,walk,true\n")
    r = cli("tourism", "destination", "--from-csv", str(csv), "--out", str(tmp_path / "d.json"))
    assert r.returncode == 2 and errors(r.stderr) == r.stderr.strip().splitlines()
    (line,) = errors(r.stderr)
    assert line.startswith("error: --from-csv line 2 baseline_load = '1;2': "), line
    assert "'true'" not in line
    assert not (tmp_path / "d.json").exists()


def test_every_test_named_in_the_case_table_exists():
    text = (ROOT / "docs" / "reliability.md").read_text()
    section = text.split("\n## Hostile inputs: case by case", 1)[1].split("\n## ", 1)[0]
    refs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", section)
    assert len(refs) >= 40, len(refs)
    for path, name in refs:
        source = (ROOT / path).read_text()
        assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} is named in docs/reliability.md"
