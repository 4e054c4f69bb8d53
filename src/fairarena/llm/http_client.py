"""A lean HTTP/1.1 client for the ``openai`` backend's chat calls: the standard library's
``http.client`` over a keep-alive pool of connections to one base URL.

Why not the official ``openai`` client on this path: against a loopback server it costs 1.5-1.8 ms of
CPU per chat call (its request transform walks the whole JSON schema of every request, then httpx
builds and sends it), this client about 0.1 ms (docs/performance.md, study runner). A study keeps
hundreds of calls in flight from one process, so that CPU is the runner's ceiling. The backend still
uses the official client when an HTTP(S) proxy from the environment applies to the base URL, or when
the spec asks for it (``?client=openai``).

This module only moves bytes and says what went wrong, as one of the exceptions below; the backend
(:mod:`fairarena.llm.openai_backend`) turns them into its typed, retried or final, errors:

* :class:`ConnectFailed` - no connection could be opened (refused, unknown host, ``connect_timeout``);
* :class:`NoAnswer` - connected and sent, but no status line within the read time-out;
* :class:`Dropped` - the connection closed or reset before the status line;
* :class:`BodyStalled` / :class:`BodyCut` - the status line came, then the body stopped arriving for
  longer than the read time-out, or ended early (fewer bytes than ``Content-Length``, a broken chunk);
* :class:`HTTPStatusFailure` - a complete answer with status 400 or more, its body parsed the way the
  official client parses it (``body`` is the JSON's ``error`` object when there is one).

A pooled connection that the server closed while it sat idle is noticed before reuse (a peek at its
socket) and dropped; if a reused connection still fails before any byte of the answer, the request is
sent once more on a fresh connection (what urllib3 and httpx do for a stale keep-alive connection).
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
from typing import Any, Callable
from urllib.parse import urlsplit

CHUNK = 65536  # bytes read at a time from a body (a dripping server is checked against the deadline per read)


class ConnectFailed(Exception):
    def __init__(self, reason: str, timed_out: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.timed_out = timed_out


class NoAnswer(Exception):
    """No status line within the read time-out."""


class Dropped(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BodyStalled(Exception):
    def __init__(self, received: int) -> None:
        super().__init__(f"stalled after {received} bytes")
        self.received = received


class BodyCut(Exception):
    def __init__(self, received: int, reason: str) -> None:
        super().__init__(f"cut off after {received} bytes ({reason})")
        self.received = received
        self.reason = reason


class HTTPStatusFailure(Exception):
    """An HTTP error answer, with the fields the backend's error mapping reads (the same as the official
    client's ``APIStatusError``: ``status_code``, ``body``, ``message``, and the response ``headers``)."""

    def __init__(self, status_code: int, content: bytes, headers: dict[str, str]) -> None:
        text = content.decode("utf-8", errors="replace").strip()
        message = f"Error code: {status_code}"
        body: Any = text
        try:
            body = json.loads(text)
        except ValueError:
            pass
        else:
            err = body.get("error", body) if isinstance(body, dict) else None
            if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"]:
                message += f" - {err['message']}"
            if isinstance(body, dict):
                body = body.get("error", body)
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.message = message
        self.headers = headers

    @classmethod
    def of(cls, status_code: int, body: Any, message: str, headers: dict[str, str]) -> "HTTPStatusFailure":
        """One made from fields already parsed (the official client's ``APIStatusError``)."""
        out = cls.__new__(cls)
        Exception.__init__(out, message)
        out.status_code, out.body, out.message, out.headers = status_code, body, message, headers
        return out


def _stale(conn: http.client.HTTPConnection) -> bool:
    """True when an idle pooled connection can no longer carry a request: the server closed it (a read
    would see end of file) or sent something unasked. (``poll`` works for TLS sockets too, and for
    descriptors above ``select``'s limit.)"""
    sock = conn.sock
    if sock is None:
        return True
    try:
        poller = select.poll()
    except AttributeError:  # pragma: no cover - no poll on this platform: trust it (a failure is retried once)
        return False
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class HTTPPool:
    """Keep-alive connections to one base URL, each used by one thread at a time."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.https = url.scheme == "https"
        self.host = url.hostname
        self.port = url.port or (443 if self.https else 80)
        self.prefix = url.path.rstrip("/")
        self.headers = dict(headers)
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._ssl: Any = None

    def _ssl_context(self) -> Any:
        with self._lock:
            if self._ssl is None:
                import ssl
                try:
                    import certifi   # the bundle the official client verifies against
                    self._ssl = ssl.create_default_context(cafile=certifi.where())
                except ImportError:  # pragma: no cover - certifi comes with the llm extra
                    self._ssl = ssl.create_default_context()
            return self._ssl

    def _connect(self, connect_timeout: float) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self.https:
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=connect_timeout,
                                               context=self._ssl_context())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=connect_timeout)
        try:
            conn.connect()
        except TimeoutError:
            conn.close()
            raise ConnectFailed("ConnectTimeout", True) from None
        except OSError as exc:   # refused, unreachable, unknown host (socket.gaierror), TLS handshake
            conn.close()
            raise ConnectFailed(type(exc).__name__, False) from None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def _take(self) -> http.client.HTTPConnection | None:
        while True:
            with self._lock:
                if not self._idle:
                    return None
                conn = self._idle.pop()
            if not _stale(conn):
                return conn
            conn.close()

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def post(self, path: str, body: bytes, *, connect_timeout: float, read_timeout: float,
             on_chunk: Callable[[int], None] | None = None) -> tuple[int, dict[str, str], bytes]:
        """POST ``body`` (JSON) to ``base_url + path``; ``(status, headers, content)`` of a 2xx/3xx answer,
        :class:`HTTPStatusFailure` for 4xx/5xx. ``on_chunk(bytes so far)`` runs after each read of the
        body and may raise to abandon it (the caller's overall deadline)."""
        headers = {**self.headers, "Content-Length": str(len(body))}
        target = self.prefix + path
        reused = self._take()
        conn = reused
        while True:
            if conn is None:
                conn = self._connect(connect_timeout)
            try:
                conn.sock.settimeout(read_timeout)
                conn.request("POST", target, body, headers)
                resp = conn.getresponse()
                break
            except TimeoutError:
                conn.close()
                raise NoAnswer() from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                if conn is reused:  # a stale keep-alive connection: once more on a fresh one
                    conn = None
                    continue
                raise Dropped(type(exc).__name__) from None
        chunks: list[bytes] = []
        received = 0
        try:
            while True:
                chunk = resp.read1(CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                received += len(chunk)
                if on_chunk is not None:
                    on_chunk(received)
            if resp.length:   # Content-Length said more than came before the connection closed
                raise http.client.IncompleteRead(b"".join(chunks), resp.length)
        except TimeoutError:
            conn.close()
            raise BodyStalled(received) from None
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise BodyCut(received, type(exc).__name__) from None
        except BaseException:
            conn.close()
            raise
        content = b"".join(chunks)
        resp.close()   # the response, not the connection (http.client reuses it after a closed response)
        status = resp.status
        got = {k.lower(): v for k, v in resp.getheaders()}
        if resp.will_close:
            conn.close()
        else:
            self._give_back(conn)
        if status >= 400:
            raise HTTPStatusFailure(status, content, got)
        return status, got, content
