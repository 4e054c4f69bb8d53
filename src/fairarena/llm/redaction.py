"""Keep credentials out of every message and record: :func:`redact`.

A server or proxy that rejects a key sometimes echoes it back in its error body ("Incorrect API key
provided: sk-..."). Every error the LLM layer raises passes its text through :func:`redact` (see
:class:`fairarena.llm.base.LLMError`), and anything that prints or writes model-derived text (the arena's
transcript and ``result.json``) should call it too.

What is removed, each replaced by ``[REDACTED]``:

* every *known secret*: the values of the API-key environment variables (``FAIRARENA_API_KEY``,
  ``OPENAI_API_KEY``), the key a backend actually used (registered with :func:`register_secret`), and
  any ``secrets=`` passed in;
* common key shapes wherever they appear: ``sk-...`` / ``sk-proj-...`` style keys, ``Bearer <token>``,
  ``Basic <credentials>`` (base64 with a digit or ``=``), JSON Web Tokens, the password of a URL
  (``https://user:PASSWORD@host``) and credentials in a query string (``?key=...``, ``&api_key=...``,
  ``token``, ``access_token``, ``secret``, ``password``, ``sig``);
* in *auth contexts* only (after ``api_key``, ``api-key``, ``x-api-key``, ``token``, ``secret``,
  ``password``, ``authorization``, ``credential``): a long hex value (>= 24 characters) or a long
  base64/url-safe value (>= 20 characters, with a digit in it, so ordinary words are kept). Long hex
  strings elsewhere (hashes, cache keys) are left alone.

>>> redact("Incorrect API key provided: sk-abc123def456ghi789. Check it.")
'Incorrect API key provided: [REDACTED]. Check it.'
>>> redact('{"api_key": "0123456789abcdef0123456789abcdef"}')
'{"api_key": "[REDACTED]"}'
>>> redact("the key hunter2hunter2 leaked", secrets=["hunter2hunter2"])
'the key [REDACTED] leaked'
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
SECRET_ENV = ("FAIRARENA_API_KEY", "OPENAI_API_KEY")
MIN_SECRET_LENGTH = 6  # shorter "keys" (e.g. "x", "not-needed") would erase ordinary words

_registered: set[str] = set()
_lock = threading.Lock()

# key shapes that are secrets wherever they appear
_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),                                          # OpenAI-style keys
    re.compile(r"(?i)\b(Bearer)(\s+)[A-Za-z0-9._~+/=\-]{8,}"),                         # bearer tokens
    re.compile(r"(?i)\b(Basic)(\s+)(?=[A-Za-z0-9+/]*[0-9=])[A-Za-z0-9+/]{8,}={0,2}"),  # basic credentials
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}"),    # JSON Web Tokens
    re.compile(r"(?i)\b(https?://[^/\s:@]+)(:)[^/\s@]+(?=@)"),                         # password in a URL
    re.compile(r"(?i)([?&](?:api[_\-]?key|key|token|access[_\-]?token|secret|password|sig)=)[^&\s\"'#]+"),  # in a query
]
# a long hex value, or a long base64/url-safe value with a digit in it, right after an auth-context word
_AUTH_CONTEXT = re.compile(
    r"(?i)((?:x-)?api[_\-\s]?key|access[_\-]?token|auth[_\-]?token|\btoken|secret|password|passwd|"
    r"authorization|credentials?)"
    r"([\"']?[ \t]{0,3}(?:[:=]|\bis\b|\bprovided\b:?)?[ \t]{0,3}[\"']?[ \t]{0,3})"  # bounded: no backtracking blow-up
    r"([A-Fa-f0-9]{24,}|(?=[A-Za-z+/_\-]*[0-9])[A-Za-z0-9+/_\-]{20,}={0,2})(?![A-Za-z0-9+/_\-])")
# a substring of every word _AUTH_CONTEXT starts with (lower case)
_AUTH_WORDS = ("api", "token", "secret", "passw", "authorization", "credential")


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret for every later :func:`redact` call (a backend calls this with the
    key it uses). Values shorter than :data:`MIN_SECRET_LENGTH` are ignored."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value.strip())


def known_secrets(extra: Iterable[str] | None = None) -> list[str]:
    """The secrets :func:`redact` removes by value: registered ones, the API-key environment variables
    and ``extra``; longest first (so a key containing another is removed whole)."""
    with _lock:
        found = set(_registered)
    for name in SECRET_ENV:
        v = os.environ.get(name)
        if v and len(v.strip()) >= MIN_SECRET_LENGTH:
            found.add(v.strip())
    for v in extra or ():
        if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_LENGTH:
            found.add(v.strip())
    return sorted(found, key=len, reverse=True)


def redact(text: Any, secrets: Iterable[str] | None = None) -> Any:
    """``text`` with every known secret and key-shaped credential replaced by ``[REDACTED]``.

    Non-strings are returned unchanged (use :func:`redact_obj` for nested records).
    """
    if not isinstance(text, str) or not text:
        return text
    out = text
    for s in known_secrets(secrets):
        if s in out:
            out = out.replace(s, REDACTED)
    # each pattern runs only when the text holds the substring it cannot match without (the same result,
    # at a few microseconds instead of about half a millisecond for a model reply that holds no key)
    low = out.lower()
    if "sk-" in out:
        out = _SHAPES[0].sub(REDACTED, out)
    if "bearer" in low:
        out = _SHAPES[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    if "basic" in low:
        out = _SHAPES[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    if "eyJ" in out:
        out = _SHAPES[3].sub(REDACTED, out)
    if "://" in out and "@" in out:
        out = _SHAPES[4].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    if "=" in out and ("?" in out or "&" in out):
        out = _SHAPES[5].sub(lambda m: f"{m.group(1)}{REDACTED}", out)
    if any(w in low for w in _AUTH_WORDS):
        out = _AUTH_CONTEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    return out


def redact_obj(obj: Any, secrets: Iterable[str] | None = None) -> Any:
    """:func:`redact` applied to every string (keys and values) inside dicts, lists and tuples."""
    sec = known_secrets(secrets)  # resolved once for the whole record
    if isinstance(obj, str):
        return redact(obj, sec)
    if isinstance(obj, Mapping):
        return {redact(k, sec) if isinstance(k, str) else k: redact_obj(v, sec) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_obj(v, sec) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v, sec) for v in obj)
    return obj
