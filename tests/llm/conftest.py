"""A real loopback HTTP server speaking just enough of the OpenAI chat API to script failures.

``FakeOpenAIServer`` is a fake: it never runs a model. Besides the planned statuses it can hang
(``hang``: seconds to wait before answering), send any raw body (``raw``: status, content type, bytes),
send any JSON object as the completion (``completion``), and echo the presented API key in a 401 body
(``echo_key``), as some servers and proxies do. For the model layer's server-facing behaviour it can also
answer after a fixed ``delay`` while counting the calls in flight (``max_in_flight``), send the headers
and part of a 200 body and then close the connection (``partial``: how many such replies), echo the key
inside a normal 200 completion (``echo_key_in_reply``), report a chosen ``usage.prompt_tokens``
(``prompt_tokens``: a server that cut the prompt) and llama.cpp's ``timings`` (``timings``), and refuse
request fields it does not know with a 400 (``reject_fields``).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


class FakeOpenAIServer:
    """Answers POST /v1/chat/completions. ``plan`` is a list of statuses consumed per request
    (200 = a normal completion); when exhausted every request succeeds."""

    REPLY = "hello from the fake server"

    def __init__(self) -> None:
        self.plan: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.reject_response_formats: set[str] = set()
        self.reject_fields: set[str] = set()  # request fields answered with a 400 (a server that refuses unknown ones)
        self.retry_after: str | None = None
        self.reply = FakeOpenAIServer.REPLY
        self.hang: float = 0.0
        self.raw: tuple[int, str, bytes] | None = None
        self.completion: Any = None
        self.echo_key = False
        self.drip: float = 0.0  # seconds between single bytes of a 200 body (a server that drips its answer)
        self.delay: float = 0.0  # seconds before each normal answer
        self.in_flight = 0
        self.max_in_flight = 0
        self.partial = 0  # the next N normal answers: headers and half the body, then the connection closes
        self.echo_key_in_reply = False
        self.prompt_tokens: int | None = None
        self.timings: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._release = threading.Event()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                srv.requests.append(body)
                srv.headers.append({k.lower(): v for k, v in self.headers.items()})
                if srv.hang:
                    srv._release.wait(srv.hang)  # a server that accepted the request and says nothing
                    if srv._release.is_set():
                        return
                if srv.echo_key:
                    key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    return self._send(401, {"error": {"message": f"Incorrect API key provided: {key}. "
                                                                 f"Authorization: Bearer {key}",
                                                      "type": "invalid_request_error", "code": "invalid_api_key"}})
                if srv.raw is not None:
                    status, ctype, data = srv.raw
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if srv.completion is not None:
                    return self._send(200, srv.completion)
                if srv.drip:
                    data = json.dumps({"choices": [{"message": {"content": "slow " * 200}}]}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    for i in range(len(data)):
                        if srv._release.wait(srv.drip):
                            return
                        try:
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                        except OSError:  # the client gave up
                            return
                    return
                refused = sorted(srv.reject_fields & set(body))
                if refused:
                    return self._send(400, {"error": {"message": f"Unrecognized request argument supplied: "
                                                                 f"{refused[0]}"}})
                rf = (body.get("response_format") or {}).get("type")
                if rf in srv.reject_response_formats:
                    return self._send(400, {"error": {"message": f"response_format {rf} unsupported"}})
                with srv._lock:
                    status = srv.plan.pop(0) if srv.plan else 200
                    srv.in_flight += 1
                    srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
                try:
                    if srv.delay:
                        time.sleep(srv.delay)
                finally:
                    # the call leaves the count before its answer is written: a client that reads the
                    # answer, frees its slot and sends the next call must not find this one still counted
                    with srv._lock:
                        srv.in_flight -= 1
                if status != 200:
                    extra = {"Retry-After": srv.retry_after} if srv.retry_after and status == 429 else {}
                    return self._send(status, {"error": {"message": f"scripted {status}"}}, extra)
                content = srv.reply if rf is None or srv.reply != FakeOpenAIServer.REPLY else \
                    json.dumps({"ok": True, "mode": rf})
                if srv.echo_key_in_reply:
                    key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    content = content.replace("ECHO", f"{key} (Authorization: Bearer {key})")
                # by default a count like a tokenizer's (about 4 characters a token, at least 11), so the
                # client's check for a silently cut prompt does not fire
                chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
                usage: dict[str, Any] = {"prompt_tokens": max(11, chars // 4 + 1) if srv.prompt_tokens is None
                                         else srv.prompt_tokens, "completion_tokens": 7}
                usage["total_tokens"] = usage["prompt_tokens"] + 7
                obj = {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}],
                       "usage": usage}
                if srv.timings is not None:
                    obj["timings"] = srv.timings
                with srv._lock:
                    cut = srv.partial > 0
                    srv.partial -= cut
                if cut:
                    return self._send_partial(obj)
                self._send(200, obj)

            def _send_partial(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # SHUT_RDWR: the client sees the body end early

            def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake_server():
    pytest.importorskip("openai")
    srv = FakeOpenAIServer()
    yield srv
    srv.close()
