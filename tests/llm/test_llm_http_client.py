"""The lean transport of the ``openai`` backend (``?client=http``, fairarena.llm.http_client) against the
official client (``?client=openai``): the same request bodies, replies and typed errors in every case the
loopback fake server can script, and a keep-alive pool that survives a server closing idle connections."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from fairarena.errors import InputError
from fairarena.llm import LLMError, RetriesExhaustedError, build_model
from fairarena.llm.openai_backend import OpenAIChatModel
from fairarena.llm.wrappers import RetryingModel

MSG = [{"role": "system", "content": "You allocate. ünïcode kept"}, {"role": "user", "content": "Allocate the ventilator."}]
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
# what names the transport's own exception inside an otherwise equal message
_TRANSPORT_NAMES = re.compile(r"\((RemoteProtocolError|IncompleteRead|ConnectError|ConnectionRefusedError|"
                              r"ReadError|RemoteDisconnected|ConnectionResetError)\)|\[(ConnectError|"
                              r"ConnectionRefusedError)\]")


def _model(srv_url: str, client: str, opts: str = "", **kw: Any) -> Any:
    m = build_model(f"openai:m@{srv_url}?client={client}{opts}", **kw)  # opts: "&name=value..."
    m.find(RetryingModel)._sleep = lambda _s: None
    return m


def _outcome(fake_server, client: str, setup, call=None, opts: str = "", **kw: Any) -> tuple[Any, list[dict]]:
    """Run one scripted scenario with one transport: (what the call gave, the request bodies the server got)."""
    fake_server.requests.clear()
    setup(fake_server)
    m = _model(fake_server.base_url, client, opts, **kw)
    try:
        r = (call or (lambda m: m.chat(MSG, seed=3, temperature=0.2, max_tokens=40, schema=SCHEMA)))(m)
        got: Any = ("ok", r.text, r.finish_reason, r.json_mode, r.usage.prompt_tokens, r.usage.completion_tokens,
                    r.usage.cached_tokens, r.attempts)
    except LLMError as exc:
        last = exc.last if isinstance(exc, RetriesExhaustedError) else exc
        got = ("error", type(exc).__name__, type(last).__name__, getattr(last, "status", None),
               getattr(last, "retry_after", None), _TRANSPORT_NAMES.sub("(transport)", str(exc)))
    return got, [dict(r) for r in fake_server.requests]


def _reset(s) -> None:
    s.plan, s.raw, s.completion, s.hang, s.partial, s.echo_key, s.retry_after = [], None, None, 0.0, 0, False, None
    s.reject_response_formats, s.reject_fields, s.timings, s.prompt_tokens = set(), set(), None, None
    s.reply = type(s).REPLY


SCENARIOS = {
    "a completion": lambda s: None,
    "llama.cpp timings": lambda s: setattr(s, "timings", {"cache_n": 9, "prompt_n": 2}),
    "429 with Retry-After": lambda s: (setattr(s, "plan", [429, 429]), setattr(s, "retry_after", "7")),
    "500 then fine": lambda s: setattr(s, "plan", [500]),
    "503 every time": lambda s: setattr(s, "plan", [503] * 5),
    "404": lambda s: setattr(s, "plan", [404]),
    "409": lambda s: setattr(s, "plan", [409]),
    "json_schema refused: degrade": lambda s: setattr(s, "reject_response_formats", {"json_schema"}),
    "every format refused": lambda s: setattr(s, "reject_response_formats", {"json_schema", "json_object"}),
    "cache_prompt refused": lambda s: setattr(s, "reject_fields", {"cache_prompt"}),
    "HTML 502": lambda s: setattr(s, "raw", (502, "text/html", b"<html><h1>502 Bad Gateway</h1></html>")),
    "HTML 403": lambda s: setattr(s, "raw", (403, "text/html", b"<html><body><h1>Forbidden</h1></body></html>")),
    "plain-text 400": lambda s: setattr(s, "raw", (400, "text/plain", b"bad request, sorry")),
    "JSON 422 with code": lambda s: setattr(s, "raw", (422, "application/json",
                                                       b'{"error": {"message": "too long", "code": "ctx"}}')),
    "echoed key in a 401": lambda s: setattr(s, "echo_key", True),
    "not JSON": lambda s: setattr(s, "raw", (200, "text/html", b"<html>nginx</html>")),
    "cut-off JSON": lambda s: setattr(s, "raw", (200, "application/json", b'{"choices": [{"mess')),
    "no choices": lambda s: setattr(s, "completion", {"id": "x"}),
    "body cut mid-way, once": lambda s: setattr(s, "partial", 1),
    "body cut every time": lambda s: setattr(s, "partial", 10),
    "a cut prompt": lambda s: (setattr(s, "prompt_tokens", 20), setattr(s, "reply", "x" * 5)),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_lean_transport_answers_as_the_official_client(fake_server, monkeypatch, name):
    monkeypatch.setenv("FAIRARENA_API_KEY", "fa-key-0123456789abcdefXYZ")
    call = None
    if name == "a cut prompt":   # long enough for the truncation check
        call = lambda m: m.chat([{"role": "user", "content": "word " * 400}], max_tokens=40)  # noqa: E731
    runs = {}
    for client in ("openai", "http"):
        _reset(fake_server)
        runs[client] = _outcome(fake_server, client, SCENARIOS[name], call, retries=3)
    assert runs["http"] == runs["openai"]
    assert runs["http"][1], "the server saw the requests"
    assert fake_server.headers[-1]["authorization"] == "Bearer fa-key-0123456789abcdefXYZ"


def test_time_outs_and_refusals_read_the_same(fake_server):
    fake_server.hang = 30
    for client in ("openai", "http"):
        with pytest.raises(RetriesExhaustedError, match=r"no answer from .* within 0.3s \(timeout\)"):
            _model(fake_server.base_url, client, "&timeout=0.3", retries=2).chat(MSG)
    down = "http://127.0.0.1:9/v1"
    said = []
    for client in ("openai", "http"):
        with pytest.raises(LLMError) as exc:
            _model(down, client, retries=3).chat(MSG)
        said.append(_TRANSPORT_NAMES.sub("(transport)", str(exc.value)))
    assert said[0] == said[1] and "no LLM server answers at http://127.0.0.1:9/v1" in said[1]


def test_a_bad_client_option_is_an_input_error():
    with pytest.raises(InputError, match="client"):
        build_model("openai:m@http://127.0.0.1:9/v1?client=curl")
    assert OpenAIChatModel("m", "http://127.0.0.1:9/v1").client == "auto"


def test_auto_takes_the_official_client_only_where_a_proxy_applies(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert OpenAIChatModel("m", "http://10.1.2.3:8000/v1").transport == "http"
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    assert OpenAIChatModel("m", "https://api.example.invalid/v1").transport == "openai"
    assert OpenAIChatModel("m", "http://10.1.2.3:8000/v1").transport == "http"   # no proxy for http
    monkeypatch.setenv("NO_PROXY", "api.example.invalid")
    assert OpenAIChatModel("m", "https://api.example.invalid/v1").transport == "http"
    assert OpenAIChatModel("m", "https://api.example.invalid/v1", client="openai").transport == "openai"


# ----------------------------------------------------------------------------- the keep-alive pool
class KeepAliveServer:
    """A FAKE HTTP/1.1 chat server that keeps connections open, counts them, and can close every idle one."""

    def __init__(self) -> None:
        self.connections = 0
        self.socks: list[socket.socket] = []
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                srv.connections += 1
                srv.socks.append(self.connection)

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["messages"][-1]["content"].upper()
                data = json.dumps({"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": 5, "completion_tokens": 1}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close_idle(self) -> None:
        for s in self.socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.socks.clear()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def keepalive_server():
    srv = KeepAliveServer()
    yield srv
    srv.close()


def test_one_connection_serves_a_thread_s_calls_and_threads_get_their_own(keepalive_server):
    m = _model(keepalive_server.base_url, "http")
    assert [m.chat([{"role": "user", "content": f"call {i}"}]).text for i in range(20)] == \
        [f"CALL {i}" for i in range(20)]
    assert keepalive_server.connections == 1
    barrier = threading.Barrier(4)
    out: list[str] = []

    def worker(i: int) -> None:
        barrier.wait()
        out.extend(m.chat([{"role": "user", "content": f"t{i} {j}"}]).text for j in range(5))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == sorted(f"T{i} {j}" for i in range(4) for j in range(5))
    assert 1 < keepalive_server.connections <= 5   # at most one per thread in flight at once, plus the first


def test_a_connection_the_server_closed_while_idle_is_not_an_error(keepalive_server):
    m = _model(keepalive_server.base_url, "http", retries=1)   # no retry: the pool itself must cope
    assert m.chat([{"role": "user", "content": "a"}]).text == "A"
    keepalive_server.close_idle()
    time.sleep(0.05)
    assert m.chat([{"role": "user", "content": "b"}]).text == "B"
    assert keepalive_server.connections == 2 and m.totals.calls == 2 and m.totals.failed_calls == 0
